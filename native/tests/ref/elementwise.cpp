#include "ref/elementwise.hpp"

#include <cmath>
#include <cstring>

#include "ref/float8.hpp"
#include "ref/math_ref.hpp"

namespace nxvk::ref {
namespace {

using u128 = unsigned __int128;

template <class T>
T get(const Bytes& d, size_t i) {
  T v;
  std::memcpy(&v, d.data() + i * sizeof(T), sizeof(T));
  return v;
}
template <class T>
void put(Bytes& d, size_t i, T v) {
  std::memcpy(d.data() + i * sizeof(T), &v, sizeof(T));
}

float f32_of_bits(uint32_t b) { float f; std::memcpy(&f, &b, 4); return f; }
uint32_t bits_of_f32(float f) { uint32_t b; std::memcpy(&b, &f, 4); return b; }

// Erlang writes a small integer (|v| < 2^59) to f32 with one rounding, a bignum via a double.
float int_to_f32(__int128 v) {
  const __int128 lim = __int128(1) << 59;
  if (v < lim && v > -lim) return static_cast<float>(static_cast<int64_t>(v));
  return static_cast<float>(static_cast<double>(v));
}

double to_double(const Value& v) { return v.is_float ? v.f : static_cast<double>(v.i); }

}  // namespace

Value read_value(DType t, const Bytes& d, size_t i) {
  Value v;
  const TypeInfo& info = type_info(t);
  if (info.bits < 8 || t == DType::F8 || t == DType::F8E4M3FN) {
    const uint64_t b = get_element_bits(reinterpret_cast<const uint8_t*>(d.data()), info.bits, i);
    if (t == DType::F8) return Value{true, 0, load_f8(static_cast<uint32_t>(b))};
    if (t == DType::F8E4M3FN) return Value{true, 0, load_f8e4m3fn(static_cast<uint32_t>(b))};
    const int sh = 64 - static_cast<int>(info.bits);
    v.i = info.is_signed() ? static_cast<__int128>(static_cast<int64_t>(b << sh) >> sh) : static_cast<__int128>(b);
    return v;
  }
  switch (t) {
    case DType::U8: v.i = get<uint8_t>(d, i); break;
    case DType::U16: v.i = get<uint16_t>(d, i); break;
    case DType::U32: v.i = get<uint32_t>(d, i); break;
    case DType::U64: v.i = get<uint64_t>(d, i); break;
    case DType::S8: v.i = get<int8_t>(d, i); break;
    case DType::S16: v.i = get<int16_t>(d, i); break;
    case DType::S32: v.i = get<int32_t>(d, i); break;
    case DType::S64: v.i = get<int64_t>(d, i); break;
    case DType::F16: v.is_float = true; v.f = static_cast<double>(get<_Float16>(d, i)); break;
    case DType::BF16: v.is_float = true; v.f = f32_of_bits(uint32_t(get<uint16_t>(d, i)) << 16); break;
    case DType::F32: v.is_float = true; v.f = get<float>(d, i); break;
    case DType::F64: v.is_float = true; v.f = get<double>(d, i); break;
    default: break;
  }
  return v;
}

void write_value(DType t, const Value& v, Bytes& d, size_t i) {
  const TypeInfo& info = type_info(t);
  if (info.is_integer()) {
    uint64_t bits;
    if (!v.is_float) {
      bits = static_cast<uint64_t>(static_cast<u128>(v.i));
    } else if (std::isnan(v.f)) {
      bits = 0;
    } else if (std::isinf(v.f)) {
      __int128 lim = info.is_signed() ? (v.f > 0 ? (__int128(1) << (info.bits - 1)) - 1 : -(__int128(1) << (info.bits - 1)))
                                      : (v.f > 0 ? (__int128(1) << info.bits) - 1 : 0);
      bits = static_cast<uint64_t>(static_cast<u128>(lim));
    } else {
      // trunc, then modulo 2^64: long double holds every integer-valued double below 2^64 exactly.
      long double t = truncl(std::fabs(static_cast<long double>(v.f)));
      t = fmodl(t, 18446744073709551616.0L);
      bits = static_cast<uint64_t>(t);
      if (v.f < 0) bits = 0 - bits;
    }
    switch (info.bits) {
      case 2:
      case 4: set_element_bits(reinterpret_cast<uint8_t*>(d.data()), info.bits, i, bits); break;
      case 8: put<uint8_t>(d, i, static_cast<uint8_t>(bits)); break;
      case 16: put<uint16_t>(d, i, static_cast<uint16_t>(bits)); break;
      case 32: put<uint32_t>(d, i, static_cast<uint32_t>(bits)); break;
      default: put<uint64_t>(d, i, bits); break;
    }
    return;
  }
  switch (t) {
    case DType::F8:  // <<x::float-16>> of the number (an integer through its double)
      put<uint8_t>(d, i, static_cast<uint8_t>(dump_f8(to_double(v))));
      break;
    case DType::F8E4M3FN:  // x * 1.0, then dump_f8_e4m3fn
      put<uint8_t>(d, i, static_cast<uint8_t>(dump_f8e4m3fn(to_double(v))));
      break;
    case DType::F64: {
      double x = v.is_float ? v.f : static_cast<double>(v.i);
      if (std::isnan(x)) put<uint64_t>(d, i, 0x7ff8000000000000ull);
      else put<double>(d, i, x);
      break;
    }
    case DType::F32: {
      float x = v.is_float ? static_cast<float>(v.f) : int_to_f32(v.i);
      put<uint32_t>(d, i, std::isnan(x) ? 0x7fc00000u : bits_of_f32(x));
      break;
    }
    case DType::BF16: {
      float x = v.is_float ? static_cast<float>(v.f) : int_to_f32(v.i);
      put<uint16_t>(d, i, std::isnan(x) ? uint16_t(0x7fc0) : static_cast<uint16_t>(bits_of_f32(x) >> 16));
      break;
    }
    case DType::F16: {
      _Float16 h = v.is_float ? static_cast<_Float16>(v.f) : static_cast<_Float16>(int_to_f32(v.i));
      if (std::isnan(static_cast<float>(h))) put<uint16_t>(d, i, 0x7e00);
      else put<_Float16>(d, i, h);
      break;
    }
    default: break;
  }
}

size_t broadcast_index(const Shape& out, const Shape& s, size_t i) {
  size_t index = 0, stride = 1;
  for (size_t k = 0; k < out.size(); ++k) {
    const size_t d = out.size() - 1 - k;
    const size_t coord = i % static_cast<size_t>(out[d]);
    i /= static_cast<size_t>(out[d]);
    if (k < s.size()) {
      const size_t sd = s.size() - 1 - k;
      if (s[sd] != 1) index += coord * stride;
      stride *= static_cast<size_t>(s[sd]);
    }
  }
  return index;
}

size_t element_count(DType t, const Bytes& x, size_t n) {
  return n != kAllElements ? n : x.size() * 8 / type_info(t).bits;
}

Bytes as_type(DType from, const Bytes& x, DType to, size_t count) {
  const size_t n = element_count(from, x, count);
  if (from == to) return x;
  Bytes out(storage_bytes(to, n));
  for (size_t i = 0; i < n; ++i) write_value(to, read_value(from, x, i), out, i);
  return out;
}

namespace {

Value fv(double f) { return Value{true, 0, f}; }
Value iv(__int128 i) { return Value{false, i, 0}; }
bool nonzero(const Value& v) { return v.is_float ? !(v.f == 0) : v.i != 0; }

// Nx comparison: exact for integers; float vs integer compared exactly (long double holds both).
int cmp(const Value& a, const Value& b, bool& unordered) {
  unordered = false;
  if (!a.is_float && !b.is_float) return a.i < b.i ? -1 : (a.i > b.i ? 1 : 0);
  long double x = a.is_float ? static_cast<long double>(a.f) : static_cast<long double>(a.i);
  long double y = b.is_float ? static_cast<long double>(b.f) : static_cast<long double>(b.i);
  if (std::isnan(x) || std::isnan(y)) {
    unordered = true;
    return 0;
  }
  return x < y ? -1 : (x > y ? 1 : 0);
}

double unary_math(UnaryOp op, double x) {
  switch (op) {
    case UnaryOp::exp: return std::exp(x);
    case UnaryOp::expm1: return std::expm1(x);
    case UnaryOp::log: return std::log(x);
    case UnaryOp::log1p: return std::log1p(x);
    case UnaryOp::sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case UnaryOp::cos: return std::cos(x);
    case UnaryOp::sin: return std::sin(x);
    case UnaryOp::tan: return std::tan(x);
    case UnaryOp::cosh: return std::cosh(x);
    case UnaryOp::sinh: return std::sinh(x);
    case UnaryOp::tanh: return std::tanh(x);
    case UnaryOp::acos: return std::acos(x);
    case UnaryOp::asin: return std::asin(x);
    case UnaryOp::atan: return std::atan(x);
    case UnaryOp::acosh: return std::acosh(x);
    case UnaryOp::asinh: return std::asinh(x);
    case UnaryOp::atanh: return std::atanh(x);
    case UnaryOp::sqrt: return std::sqrt(x);
    case UnaryOp::rsqrt: return 1.0 / std::sqrt(x);
    case UnaryOp::cbrt: return std::cbrt(x);
    case UnaryOp::erf: return std::erf(x);
    case UnaryOp::erfc: return std::erfc(x);
    case UnaryOp::erf_inv: {
      // Newton on erf from a rough start; enough for a plumbing reference (tolerance-checked).
      if (x <= -1) return x == -1 ? -INFINITY : NAN;
      if (x >= 1) return x == 1 ? INFINITY : NAN;
      long double y = 0;
      for (int k = 0; k < 100; ++k) {
        long double e = std::erf(static_cast<double>(y)) - x;
        y -= e / (2.0L / std::sqrt(3.14159265358979323846L) * std::exp(-static_cast<double>(y * y)));
      }
      return static_cast<double>(y);
    }
    default: return NAN;
  }
}

}  // namespace

Bytes unary(UnaryOp op, DType type, const Bytes& x, DType out, size_t count) {
  const size_t n = element_count(type, x, count);
  Bytes r(storage_bytes(out, n));
  const TypeInfo& ti = type_info(type);
  for (size_t i = 0; i < n; ++i) {
    Value a = read_value(type, x, i), v;
    switch (op) {
      case UnaryOp::abs: v = a.is_float ? fv(a.f < 0 ? -a.f : a.f) : iv(a.i < 0 ? -a.i : a.i); break;
      case UnaryOp::negate: v = a.is_float ? fv(-a.f) : iv(-a.i); break;
      case UnaryOp::bitwise_not: v = iv(~a.i); break;
      case UnaryOp::ceil: v = a.is_float ? fv(std::ceil(a.f)) : a; break;
      case UnaryOp::floor: v = a.is_float ? fv(std::floor(a.f)) : a; break;
      case UnaryOp::round: {
        if (!a.is_float) { v = a; break; }
        double r0 = std::round(a.f);  // half away from zero
        v = fv(r0 == 0 ? 0.0 : r0);
        break;
      }
      case UnaryOp::sign:
        if (a.is_float) v = fv(std::isnan(a.f) ? a.f : (a.f > 0 ? 1.0 : (a.f < 0 ? -1.0 : a.f)));
        else v = iv(a.i > 0 ? 1 : (a.i < 0 ? -1 : 0));
        break;
      case UnaryOp::count_leading_zeros: {
        const uint64_t bits = static_cast<uint64_t>(static_cast<u128>(a.i)) & (ti.bits == 64 ? ~0ull : (1ull << ti.bits) - 1);
        int c = 0;
        for (int b = int(ti.bits) - 1; b >= 0 && !((bits >> b) & 1); --b) ++c;
        v = iv(c);
        break;
      }
      case UnaryOp::population_count: {
        const uint64_t bits = static_cast<uint64_t>(static_cast<u128>(a.i)) & (ti.bits == 64 ? ~0ull : (1ull << ti.bits) - 1);
        v = iv(__builtin_popcountll(bits));
        break;
      }
      case UnaryOp::is_nan: v = iv(a.is_float && std::isnan(a.f) ? 1 : 0); break;
      case UnaryOp::is_infinity: v = iv(a.is_float && std::isinf(a.f) ? 1 : 0); break;
      case UnaryOp::real: v = a; break;
      case UnaryOp::imag: v = fv(0.0); break;
      case UnaryOp::erf_inv:  // Nx.BinaryBackend's approximation in f64, which f64 tensors get
        v = fv(out == DType::F64 ? mathref::complex_erf_inv(to_double(a)) : unary_math(op, to_double(a)));
        break;
      default: v = fv(unary_math(op, to_double(a))); break;
    }
    write_value(out, v, r, i);
  }
  return r;
}

namespace {

Value binary_value(BinaryOp op, const Value& a, const Value& b, DType out) {
  const TypeInfo& oi = type_info(out);
  bool un = false;
  switch (op) {
    case BinaryOp::equal: { int c = cmp(a, b, un); return iv(!un && c == 0); }
    case BinaryOp::not_equal: { int c = cmp(a, b, un); return iv(un || c != 0); }
    case BinaryOp::greater: { int c = cmp(a, b, un); return iv(!un && c > 0); }
    case BinaryOp::less: { int c = cmp(a, b, un); return iv(!un && c < 0); }
    case BinaryOp::greater_equal: { int c = cmp(a, b, un); return iv(!un && c >= 0); }
    case BinaryOp::less_equal: { int c = cmp(a, b, un); return iv(!un && c <= 0); }
    case BinaryOp::logical_and: return iv(nonzero(a) && nonzero(b));
    case BinaryOp::logical_or: return iv(nonzero(a) || nonzero(b));
    case BinaryOp::logical_xor: return iv(nonzero(a) != nonzero(b));
    case BinaryOp::max: {
      if (oi.is_float() && (std::isnan(to_double(a)) || std::isnan(to_double(b)))) return fv(NAN);
      int c = cmp(a, b, un);
      return c < 0 ? b : a;
    }
    case BinaryOp::min: {
      if (oi.is_float() && (std::isnan(to_double(a)) || std::isnan(to_double(b)))) return fv(NAN);
      int c = cmp(a, b, un);
      return c > 0 ? b : a;
    }
    default: break;
  }
  if (oi.is_float()) {
    const double x = to_double(a), y = to_double(b);
    switch (op) {
      case BinaryOp::add: return fv(x + y);
      case BinaryOp::subtract: return fv(x - y);
      case BinaryOp::multiply: return fv(x * y);
      case BinaryOp::divide: return fv(x / y);
      case BinaryOp::remainder: return fv(std::fmod(x, y));
      case BinaryOp::pow: return fv(std::pow(x, y));
      case BinaryOp::atan2: return fv(std::atan2(x, y));
      default: return fv(NAN);
    }
  }
  const __int128 x = a.i, y = b.i;
  const int bits = static_cast<int>(oi.bits);
  switch (op) {
    case BinaryOp::add: return iv(x + y);
    case BinaryOp::subtract: return iv(x - y);
    case BinaryOp::multiply: return iv(static_cast<__int128>(static_cast<u128>(x) * static_cast<u128>(y)));
    case BinaryOp::bitwise_and: return iv(x & y);
    case BinaryOp::bitwise_or: return iv(x | y);
    case BinaryOp::bitwise_xor: return iv(x ^ y);
    case BinaryOp::quotient: return y == 0 ? iv(-1) : iv(x / y);
    case BinaryOp::remainder: return y == 0 ? iv(x) : iv(x % y);
    case BinaryOp::left_shift: return (y < 0 || y >= bits) ? iv(0) : iv(static_cast<__int128>(static_cast<u128>(x) << int(y)));
    case BinaryOp::right_shift: return (y < 0 || y >= 127) ? iv(x < 0 ? -1 : 0) : iv(x >> int(y));
    case BinaryOp::pow: {
      if (y < 0) return iv(x == 1 ? 1 : (x == -1 ? ((y & 1) ? -1 : 1) : 0));
      uint64_t r = 1, base = static_cast<uint64_t>(static_cast<u128>(x));
      for (u128 e = static_cast<u128>(y); e != 0; e >>= 1) {
        if (e & 1) r *= base;
        base *= base;
      }
      return iv(static_cast<__int128>(r));
    }
    default: return iv(0);
  }
}

}  // namespace

Bytes binary(BinaryOp op, DType ta, const Bytes& a, const Shape& sa, DType tb, const Bytes& b, const Shape& sb,
             DType out, const Shape& out_shape) {
  const size_t n = static_cast<size_t>(shape_size(out_shape));
  Bytes r(storage_bytes(out, n));
  for (size_t i = 0; i < n; ++i) {
    Value x = read_value(ta, a, broadcast_index(out_shape, sa, i));
    Value y = read_value(tb, b, broadcast_index(out_shape, sb, i));
    write_value(out, binary_value(op, x, y, out), r, i);
  }
  return r;
}

Bytes select(DType tp, const Bytes& p, const Shape& sp, DType tt, const Bytes& t, const Shape& st, DType tf,
             const Bytes& f, const Shape& sf, DType out, const Shape& out_shape) {
  const size_t n = static_cast<size_t>(shape_size(out_shape));
  Bytes r(storage_bytes(out, n));
  for (size_t i = 0; i < n; ++i) {
    const bool c = nonzero(read_value(tp, p, broadcast_index(out_shape, sp, i)));
    write_value(out, c ? read_value(tt, t, broadcast_index(out_shape, st, i)) : read_value(tf, f, broadcast_index(out_shape, sf, i)), r, i);
  }
  return r;
}

Bytes clip(DType tx, const Bytes& x, DType tmin, const Bytes& min, DType tmax, const Bytes& max, DType out,
           size_t count) {
  const size_t n = element_count(tx, x, count);
  Bytes r(storage_bytes(out, n));
  const Value lo = read_value(tmin, min, 0), hi = read_value(tmax, max, 0);
  for (size_t i = 0; i < n; ++i) {
    Value v = read_value(tx, x, i);
    bool un;
    Value m = (cmp(v, lo, un) > 0 && !un) ? v : lo;
    Value res = (cmp(m, hi, un) < 0 && !un) ? m : hi;
    write_value(out, res, r, i);
  }
  return r;
}

Bytes constant(DType type, const Shape& shape, const Scalar& value) {
  const size_t n = static_cast<size_t>(shape_size(shape));
  Bytes r(storage_bytes(type, n));
  Value v = value.kind == Scalar::Kind::Float ? fv(value.re)
                                               : iv(value.kind == Scalar::Kind::Signed ? __int128(value.s) : __int128(value.u));
  for (size_t i = 0; i < n; ++i) write_value(type, v, r, i);
  return r;
}

Bytes iota(DType type, const Shape& shape, std::optional<int64_t> axis) {
  const size_t n = static_cast<size_t>(shape_size(shape));
  Bytes r(storage_bytes(type, n));
  size_t inner = 1;
  if (axis)
    for (size_t d = static_cast<size_t>(*axis) + 1; d < shape.size(); ++d) inner *= static_cast<size_t>(shape[d]);
  for (size_t i = 0; i < n; ++i)
    write_value(type, iv(axis ? (i / inner) % static_cast<size_t>(shape[*axis]) : i), r, i);
  return r;
}

Bytes eye(DType type, const Shape& shape) {
  const size_t n = static_cast<size_t>(shape_size(shape));
  Bytes r(storage_bytes(type, n));
  const size_t cols = static_cast<size_t>(shape.back()), rows = static_cast<size_t>(shape[shape.size() - 2]);
  for (size_t i = 0; i < n; ++i) write_value(type, iv((i / cols) % rows == i % cols ? 1 : 0), r, i);
  return r;
}

}  // namespace nxvk::ref
