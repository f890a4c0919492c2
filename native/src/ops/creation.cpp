// constant, iota, eye. A constant is converted on the host by the same rules as as_type (see
// cast.cpp) and written with vkCmdFillBuffer; iota and eye are generated kernels whose counters
// go through gen::convert, so large iotas round as Nx.BinaryBackend rounds integers to floats.
#include <algorithm>
#include <cmath>
#include <vector>
#include <cstring>

#include "nxvk/ops.hpp"
#include "ops/codegen.hpp"

namespace nxvk {
namespace {

uint32_t f32_bits(float f) { uint32_t b; std::memcpy(&b, &f, 4); return b; }

// Integer (value v, with sign) to f32 as Erlang writes it: one rounding for |v| < 2^59, else
// through a double.
float int_to_f32(bool neg, uint64_t mag) {
  float f = mag >= (uint64_t(1) << 59) ? static_cast<float>(static_cast<double>(mag)) : static_cast<float>(mag);
  return neg ? -f : f;
}

// Nx.Floating.dump_f8_e4m3fn, as written there (floor of libm's log2, round half away from zero,
// the caps at 7 and 6); the kernels' nx_double_to_f8e4m3fn reproduces it (codegen.cpp).
uint64_t dump_f8e4m3fn(double x) {
  if (std::isnan(x)) return 0x7f;
  const uint64_t sign = std::signbit(x) ? 0x80 : 0;
  const double a = std::fmin(std::fabs(x), 448.0);
  if (a == 0) return sign;
  const int e = static_cast<int>(std::floor(std::log2(a)));
  if (e + 7 <= 0) return sign | std::min<uint64_t>(7, static_cast<uint64_t>(std::round(a * 512)));
  const double m = std::round((a / std::ldexp(1.0, e) - 1.0) * 8);
  uint64_t mant = static_cast<uint64_t>(std::max(0.0, std::min(7.0, m)));
  if (e + 7 == 15 && mant >= 7) mant = 6;
  return sign | (static_cast<uint64_t>(e + 7) << 3) | mant;
}

uint64_t bits_of(DType type, const Scalar& value) {
  const TypeInfo& info = type_info(type);
  const bool is_int_value = value.kind != Scalar::Kind::Float;
  const bool neg = value.kind == Scalar::Kind::Signed && value.s < 0;
  const uint64_t mag = value.kind == Scalar::Kind::Signed ? (neg ? 0 - static_cast<uint64_t>(value.s) : static_cast<uint64_t>(value.s))
                                                          : value.u;
  const uint64_t ival = value.kind == Scalar::Kind::Signed ? static_cast<uint64_t>(value.s) : value.u;
  const double d = value.re;
  if (info.is_integer()) {
    uint64_t v;
    if (is_int_value) {
      v = ival;
    } else if (std::isnan(d)) {
      v = 0;
    } else if (std::isinf(d)) {
      const uint32_t bits = info.bits;
      if (info.is_signed()) v = d > 0 ? (uint64_t(1) << (bits - 1)) - 1 : ~uint64_t(0) << (bits - 1);
      else v = d > 0 ? (bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1) : 0;
    } else {
      // trunc(d) modulo 2^64 (fmod is exact), then its two's complement when negative.
      const double t = std::fmod(std::trunc(std::fabs(d)), 18446744073709551616.0);
      v = static_cast<uint64_t>(t);
      if (d < 0) v = 0 - v;
    }
    return info.bits == 64 ? v : v & ((uint64_t(1) << info.bits) - 1);
  }
  switch (type) {
    case DType::F64: {
      double r = is_int_value ? (neg ? -static_cast<double>(mag) : static_cast<double>(mag)) : d;
      if (std::isnan(r)) return 0x7ff8000000000000ull;
      uint64_t b;
      std::memcpy(&b, &r, 8);
      return b;
    }
    case DType::F32: {
      float f = is_int_value ? int_to_f32(neg, mag) : static_cast<float>(d);
      return std::isnan(f) ? 0x7fc00000u : f32_bits(f);
    }
    case DType::BF16: {
      float f = is_int_value ? int_to_f32(neg, mag) : static_cast<float>(d);
      return std::isnan(f) ? 0x7fc0u : f32_bits(f) >> 16;
    }
    case DType::F16:
    case DType::F8: {  // f8: the upper byte of the f16 (Nx.Floating.dump_f8)
      _Float16 h = is_int_value ? static_cast<_Float16>(int_to_f32(neg, mag)) : static_cast<_Float16>(d);
      uint16_t b;
      std::memcpy(&b, &h, 2);
      if (std::isnan(d) && !is_int_value) b = 0x7e00u;
      return type == DType::F8 ? b >> 8 : b;
    }
    case DType::F8E4M3FN: return dump_f8e4m3fn(is_int_value ? int_to_f32(neg, mag) : d);
    default: fail(ErrorKind::Unsupported, "constant: complex types are not supported yet");
  }
}

void run_counter(const std::string& label, const Tensor& out, const std::string& counter, uint32_t p1, uint32_t p2) {
  const Capabilities& caps = out.device().caps();
  const uint32_t n = static_cast<uint32_t>(out.size());
  if (n == 0) return;
  const std::string vt = gen::value_type(out.type);
  std::string src = gen::buffer(0, "dst", out.type, false) +
                    "layout(push_constant) uniform Push { uint n; uint p1; uint p2; } pc;\n" +
                    gen::elementwise_main(out.type, "dst",
                                          "uint c = " + counter + "; " + vt + " v = " +
                                              gen::convert(caps, DType::U32, out.type, "c") + ";",
                                          vt);
  const uint32_t push[] = {n, p1, p2};
  BufferView views[] = {{out.buffer}};
  gen::launch(out.device(), gen::kernel(caps, label + "_" + type_name(out.type), src), views, std::as_bytes(std::span(push)),
              gen::elementwise_invocations(out.type, n));
}

void check_real(DType t, const char* op) {
  if (type_info(t).is_complex()) fail(ErrorKind::Unsupported, std::string(op) + ": complex types are not supported yet");
}

// The words one element of `type` holding `value` occupies (a sub-word element repeated across
// its word). Complex: the real and imaginary parts as the component float type, by the rules of
// a real constant (a real value has imaginary part 0).
std::vector<uint32_t> element_words(DType type, const Scalar& value) {
  const TypeInfo& ti = type_info(type);
  std::vector<uint32_t> w;
  if (ti.is_complex()) {
    const DType part = type == DType::C64 ? DType::F32 : DType::F64;
    const Scalar re = value.kind == Scalar::Kind::Complex ? Scalar::of_float(value.re) : value;
    const Scalar im = Scalar::of_float(value.kind == Scalar::Kind::Complex ? value.im : 0.0);
    for (const Scalar& c : {re, im}) {
      const uint64_t b = bits_of(part, c);
      w.push_back(static_cast<uint32_t>(b));
      if (part == DType::F64) w.push_back(static_cast<uint32_t>(b >> 32));
    }
    return w;
  }
  if (value.kind == Scalar::Kind::Complex)
    fail(ErrorKind::InvalidArgument, std::string("constant: a complex value for the real type ") + ti.name);
  const uint64_t bits = bits_of(type, value);
  if (ti.bits == 64) return {static_cast<uint32_t>(bits), static_cast<uint32_t>(bits >> 32)};
  uint32_t word = 0;
  for (uint32_t k = 0; k < 32; k += ti.bits) word |= static_cast<uint32_t>(bits) << k;
  return {word};
}

}  // namespace

Tensor constant(Device& device, DType type, const Shape& shape, const Scalar& value) {
  Tensor out = empty_tensor(device, type, shape, "constant");
  const std::vector<uint32_t> w = element_words(type, value);
  const uint64_t bytes = (out.bytes() + 3) / 4 * 4;
  if (bytes == 0) return out;
  if (std::all_of(w.begin(), w.end(), [&](uint32_t x) { return x == w[0]; })) {
    device.fill(*out.buffer, 0, bytes, w[0]);
    return out;
  }
  // Several words per element (64-bit and complex types): a word-granular kernel.
  const uint64_t n = static_cast<uint64_t>(out.size()) * w.size();
  gen::check_index_range("constant", static_cast<int64_t>(n));
  std::string src = gen::buffer(0, "dst", DType::U32, false) +
                    "layout(push_constant) uniform Push { uint n; uint w[4]; } pc;\n" +
                    gen::elementwise_main(DType::U32, "dst", "uint v = pc.w[i % " + std::to_string(w.size()) + "u];", "uint");
  uint32_t push[5] = {static_cast<uint32_t>(n), 0, 0, 0, 0};
  std::copy(w.begin(), w.end(), push + 1);
  BufferView views[] = {{out.buffer}};
  gen::launch(device, gen::kernel(device.caps(), "constant_words", src), views, std::as_bytes(std::span(push)), n);
  return out;
}

Tensor iota(Device& device, DType type, const Shape& shape, std::optional<int64_t> axis) {
  check_real(type, "iota");
  if (axis && (*axis < 0 || *axis >= static_cast<int64_t>(shape.size())))
    fail(ErrorKind::InvalidArgument, "iota: axis " + std::to_string(*axis) + " is out of range for shape " +
                                         shape_string(shape));
  Tensor out = empty_tensor(device, type, shape, "iota");
  gen::check_index_range("iota", out.size());
  if (!axis) {
    run_counter("iota", out, "i", 0, 0);
  } else {
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(*axis) + 1; d < shape.size(); ++d) inner *= shape[d];
    run_counter("iota_axis", out, "(i / pc.p1) % pc.p2", static_cast<uint32_t>(std::max<int64_t>(inner, 1)),
                static_cast<uint32_t>(std::max<int64_t>(shape[*axis], 1)));
  }
  return out;
}

Tensor eye(Device& device, DType type, const Shape& shape) {
  check_real(type, "eye");
  if (shape.size() < 2)
    fail(ErrorKind::InvalidArgument, "eye: the shape must have at least 2 axes, got " + shape_string(shape));
  Tensor out = empty_tensor(device, type, shape, "eye");
  gen::check_index_range("eye", out.size());
  const int64_t rows = shape[shape.size() - 2], cols = shape[shape.size() - 1];
  run_counter("eye", out, "((i / pc.p1) % pc.p2 == i % pc.p1) ? 1u : 0u", static_cast<uint32_t>(std::max<int64_t>(cols, 1)),
              static_cast<uint32_t>(std::max<int64_t>(rows, 1)));
  return out;
}

}  // namespace nxvk
