#include "ref/host_tensor.hpp"

#include "ref/float8.hpp"

#include <cmath>
#include <algorithm>
#include <cstring>

namespace nxvk::ref {

HostTensor make(DType type, const Shape& shape) {
  HostTensor t{type, shape, {}};
  t.bytes.resize(storage_bytes(type, static_cast<uint64_t>(shape_size(shape))));
  return t;
}

void copy_elem(HostTensor& dst, int64_t di, const HostTensor& src, int64_t si) {
  if (type_info(src.type).bits < 8) { set_bits(dst, di, get_bits(src, si)); return; }
  std::memcpy(dst.bytes.data() + di * dst.esize(), src.bytes.data() + si * src.esize(), src.esize());
}
bool same_elem(const HostTensor& a, const HostTensor& b, int64_t i) {
  if (type_info(a.type).bits < 8) return get_bits(a, i) == get_bits(b, i);
  return std::memcmp(a.bytes.data() + i * a.esize(), b.bytes.data() + i * b.esize(), a.esize()) == 0;
}

uint64_t get_bits(const HostTensor& t, int64_t i) {
  return get_element_bits(t.bytes.data(), std::min<uint32_t>(64, type_info(t.type).bits), static_cast<size_t>(i));
}
void set_bits(HostTensor& t, int64_t i, uint64_t bits) {
  set_element_bits(t.bytes.data(), std::min<uint32_t>(64, type_info(t.type).bits), static_cast<size_t>(i), bits);
}

uint16_t double_to_half(double d) {
  if (std::isnan(d)) return 0x7e00;
  uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  double a = std::fabs(d);
  if (a >= 65520.0) return sign | 0x7c00;
  if (a < 0x1p-14) return sign | static_cast<uint16_t>(std::nearbyint(a * 0x1p24));
  int ex;
  std::frexp(a, &ex);
  int e = ex - 1;
  double mant = std::nearbyint((std::ldexp(a, -e) - 1.0) * 1024.0);
  if (mant == 1024.0) { ++e; mant = 0; }
  if (e > 15) return sign | 0x7c00;
  return sign | static_cast<uint16_t>(((e + 15) << 10) | static_cast<int>(mant));
}

double half_to_double(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double s = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 0x1f) return m ? std::nan("") : s * INFINITY;
  if (e == 0) return s * std::ldexp(m, -24);
  return s * std::ldexp(1024 + m, e - 25);
}

Value of_double(double d) { Value v; v.is_float = true; v.f = d; return v; }
Value of_int(int64_t s) { Value v; v.is_signed = true; v.s = s; v.u = static_cast<uint64_t>(s); v.f = static_cast<double>(s); return v; }
Value of_uint(uint64_t u) { Value v; v.u = u; v.s = static_cast<int64_t>(u); v.f = static_cast<double>(u); return v; }

Value get(const HostTensor& t, int64_t i) {
  const uint64_t b = get_bits(t, i);
  const TypeInfo& ti = type_info(t.type);
  switch (t.type) {
    case DType::F16: return of_double(half_to_double(static_cast<uint16_t>(b)));
    case DType::BF16: { uint32_t w = static_cast<uint32_t>(b) << 16; float f; std::memcpy(&f, &w, 4); return of_double(f); }
    case DType::F32: { uint32_t w = static_cast<uint32_t>(b); float f; std::memcpy(&f, &w, 4); return of_double(f); }
    case DType::F64: { double f; std::memcpy(&f, &b, 8); return of_double(f); }
    case DType::F8: return of_double(load_f8(static_cast<uint32_t>(b)));
    case DType::F8E4M3FN: return of_double(load_f8e4m3fn(static_cast<uint32_t>(b)));
    default: break;
  }
  if (ti.is_signed()) {
    const int sh = 64 - static_cast<int>(ti.bits);
    return of_int(static_cast<int64_t>(b << sh) >> sh);
  }
  return of_uint(b);
}

void set(HostTensor& t, int64_t i, const Value& v) {
  const TypeInfo& ti = type_info(t.type);
  if (ti.is_float()) {
    const double d = v.is_float ? v.f : (v.is_signed ? static_cast<double>(v.s) : static_cast<double>(v.u));
    switch (t.type) {
      case DType::F16: set_bits(t, i, double_to_half(d)); return;
      case DType::F8: set_bits(t, i, dump_f8(d)); return;
      case DType::F8E4M3FN: set_bits(t, i, dump_f8e4m3fn(d)); return;
      case DType::BF16: {
        if (std::isnan(d)) { set_bits(t, i, 0x7fc0); return; }
        float f = static_cast<float>(d);
        uint32_t w; std::memcpy(&w, &f, 4);
        set_bits(t, i, w >> 16);
        return;
      }
      case DType::F32: {
        float f = static_cast<float>(d);
        uint32_t w; std::memcpy(&w, &f, 4);
        set_bits(t, i, std::isnan(d) ? 0x7fc00000u : w);
        return;
      }
      default: {
        uint64_t w; std::memcpy(&w, &d, 8);
        set_bits(t, i, std::isnan(d) ? 0x7ff8000000000000ull : w);
        return;
      }
    }
  }
  const uint64_t mask = ti.bits == 64 ? ~0ull : ((1ull << ti.bits) - 1);
  set_bits(t, i, v.u & mask);
}

std::vector<int64_t> strides(const Shape& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t acc = 1;
  for (size_t d = shape.size(); d-- > 0;) { s[d] = acc; acc *= shape[d]; }
  return s;
}

std::vector<int64_t> coords(const Shape& shape, int64_t i) {
  std::vector<int64_t> c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) { c[d] = shape[d] ? i % shape[d] : 0; if (shape[d]) i /= shape[d]; }
  return c;
}

}  // namespace nxvk::ref
