// Casts: as_type (Nx.BinaryBackend's rules, reproduced bit for bit) and bitcast, plus
// gen::convert, the one conversion every generated kernel uses.
//
// Nx.BinaryBackend's rules, checked against it (Erlang's own number conversions decide them):
//  - float -> int: NaN -> 0, +inf -> the type's max, -inf -> its min, finite values truncated
//    toward zero and then wrapped modulo 2^bits (300.7 -> u8 44, 1e20 -> s32 1661992960);
//  - int -> int: wrapped modulo 2^bits;
//  - int -> f64: rounded to nearest even; int -> f32: Erlang converts a small integer
//    (|x| < 2^59) directly (one rounding) and a bignum through a double (two roundings), so
//    64-bit integers of magnitude >= 2^59 round twice; int -> f16 via that f32 (exact below
//    65520, infinity above); int -> bf16: the f32 value truncated to its top 16 bits; int -> f8
//    via that f16, int -> f8_e4m3fn via that f32 (saturating at 448);
//  - float -> float: f64 -> f32 and f64/f32 -> f16 round to nearest even directly; -> bf16 is the
//    f32 value truncated; -> f8 (E5M2) is the f16 value truncated to its upper byte; ->
//    f8_e4m3fn follows Nx.Floating.dump_f8_e4m3fn (see codegen.cpp); NaN becomes the canonical
//    quiet NaN of the format (done by gen::store_value);
//  - f8 is read as Nx.Floating.load_f8 reads it (a zero exponent is not a subnormal there);
//  - sub-byte integers (u2, u4, s2, s4) wrap as every narrowing integer cast does.
// All of it is integer code in the kernels, so no device's conversion rounding mode or denormal
// flushing shows in the results.
#include <cstdio>
#include <string>

#include "nxvk/ops.hpp"
#include "ops/codegen.hpp"

namespace nxvk {
namespace gen {
namespace {

constexpr const char* kConvertHelpers = R"GLSL(
// ---- conversions (cast.cpp) ----
uvec2 nx_neg2(uvec2 v) {
  uint lo = ~v.x + 1u;
  return uvec2(lo, ~v.y + (lo == 0u ? 1u : 0u));
}
uvec2 nx_shl2(uvec2 v, uint s) {  // s in [0, 63]
  if (s == 0u) return v;
  if (s >= 32u) return uvec2(0u, v.x << (s - 32u));
  return uvec2(v.x << s, (v.y << s) | (v.x >> (32u - s)));
}
uvec2 nx_shr2(uvec2 v, uint s) {  // s in [0, 63]
  if (s == 0u) return v;
  if (s >= 32u) return uvec2(v.y >> (s - 32u), 0u);
  return uvec2((v.x >> s) | (v.y << (32u - s)), v.y >> s);
}
// Low 64 bits (two's complement) of trunc(f), for finite f.
uvec2 nx_f32_trunc_bits(float f) {
  uint b = floatBitsToUint(f);
  int e = int((b >> 23) & 0xffu) - 150;  // |f| = m * 2^e
  uint m = (b & 0x7fffffu) | 0x800000u;
  uvec2 r = uvec2(0u);
  if (e >= -23 && e < 0) r = uvec2(m >> uint(-e), 0u);
  else if (e >= 0 && e < 64) r = nx_shl2(uvec2(m, 0u), uint(e));
  return (b >> 31) != 0u ? nx_neg2(r) : r;
}
// Float to integer as Nx: NaN -> 0, +-inf -> the type's max/min (given), else trunc wrapped.
uvec2 nx_f32_to_int_bits(float f, uvec2 maxv, uvec2 minv) {
  uint a = floatBitsToUint(f) & 0x7fffffffu;
  if (a > 0x7f800000u) return uvec2(0u);
  if (a == 0x7f800000u) return (floatBitsToUint(f) >> 31) != 0u ? minv : maxv;
  return nx_f32_trunc_bits(f);
}
// Round-to-nearest-even of the integer v to p significant bits: v ~= k * 2^s (k < 2^p, or 2^p).
uvec3 nx_round_int(uvec2 v, uint p) {
  if (v.y == 0u && v.x == 0u) return uvec3(0u);
  uint msb = v.y != 0u ? 32u + uint(findMSB(v.y)) : uint(findMSB(v.x));
  if (msb < p) return uvec3(v, 0u);
  uint s = msb + 1u - p;
  uvec2 k = nx_shr2(v, s);
  uint h = s - 1u;  // the halfway bit
  bool half_bit = ((h < 32u ? (v.x >> h) : (v.y >> (h - 32u))) & 1u) != 0u;
  bool sticky = h < 32u ? (v.x & ((1u << h) - 1u)) != 0u
                        : (v.x != 0u || (v.y & ((1u << (h - 32u)) - 1u)) != 0u);
  if (half_bit && (sticky || (k.x & 1u) != 0u)) {
    k.x += 1u;
    if (k.x == 0u) k.y += 1u;
  }
  return uvec3(k, s);
}
// |integer| v (and its sign) to the nearest f32. `erlang_big`: Nx.BinaryBackend converts
// magnitudes >= 2^59 through a double first (two roundings).
float nx_int_to_f32(uvec2 v, bool neg) {
  if (v.y >= 0x08000000u) {  // >= 2^59
    uvec3 d = nx_round_int(v, 53u);
    uvec3 k = nx_round_int(d.xy, 24u);
    float f = float(k.x) * uintBitsToFloat((127u + k.z + d.z) << 23);
    return neg ? -f : f;
  }
  uvec3 k = nx_round_int(v, 24u);
  float f = float(k.x) * uintBitsToFloat((127u + k.z) << 23);
  return neg ? -f : f;
}
float nx_s32_to_f32(int x) { return nx_int_to_f32(uvec2(x < 0 ? 0u - uint(x) : uint(x), 0u), x < 0); }
float nx_u32_to_f32(uint x) { return nx_int_to_f32(uvec2(x, 0u), false); }
)GLSL";

constexpr const char* kConvertHelpersF64 = R"GLSL(
// Low 64 bits (two's complement) of trunc(d), for finite d.
uvec2 nx_f64_trunc_bits(double d) {
  uvec2 u = unpackDouble2x32(d);
  int e = int((u.y >> 20) & 0x7ffu) - 1075;  // |d| = m * 2^e
  uvec2 m = uvec2(u.x, (u.y & 0xfffffu) | 0x100000u);
  uvec2 r = uvec2(0u);
  if (e >= -52 && e < 0) r = nx_shr2(m, uint(-e));
  else if (e >= 0 && e < 64) r = nx_shl2(m, uint(e));
  return (u.y >> 31) != 0u ? nx_neg2(r) : r;
}
uvec2 nx_f64_to_int_bits(double d, uvec2 maxv, uvec2 minv) {
  uvec2 u = unpackDouble2x32(d);
  uint hi = u.y & 0x7fffffffu;
  if (hi >= 0x7ff00000u) {
    if (hi > 0x7ff00000u || u.x != 0u) return uvec2(0u);
    return (u.y >> 31) != 0u ? minv : maxv;
  }
  return nx_f64_trunc_bits(d);
}
// f32 (or a narrower float held in one) to double, exactly: a normal by the driver's conversion
// (exact), the rest in integer code (a driver may flush a subnormal; NaN bits kept).
double nx_f32_to_f64(float f) {
  uint b = floatBitsToUint(f);
  uint e = (b >> 23) & 0xffu;
  if (e - 1u < 0xfeu) return double(f);
  uint sign = b & 0x80000000u;
  uint m = b & 0x7fffffu;
  if (e == 0xffu) return packDouble2x32(uvec2(m << 29, sign | 0x7ff00000u | (m >> 3)));
  if (m == 0u) return packDouble2x32(uvec2(0u, sign));
  int sh = 23 - findMSB(m);  // normalise the subnormal
  m = (m << uint(sh)) & 0x7fffffu;
  e = uint(1 - sh);
  return packDouble2x32(uvec2(m << 29, sign | ((e + 896u) << 20) | (m >> 3)));
}
double nx_int_to_f64(uvec2 v, bool neg) {
  uvec3 k = nx_round_int(v, 53u);
  double d = (double(k.y) * 4294967296.0lf + double(k.x)) * packDouble2x32(uvec2(0u, (1023u + k.z) << 20));
  return neg ? -d : d;
}
)GLSL";

constexpr const char* kConvertHelpersI64 = R"GLSL(
uvec2 nx_u64_bits(uint64_t x) { return uvec2(uint(x), uint(x >> 32)); }
uint64_t nx_bits_u64(uvec2 v) { return (uint64_t(v.y) << 32) | uint64_t(v.x); }
float nx_s64_to_f32(int64_t x) { return nx_int_to_f32(nx_u64_bits(x < 0l ? uint64_t(0) - uint64_t(x) : uint64_t(x)), x < 0l); }
float nx_u64_to_f32(uint64_t x) { return nx_int_to_f32(nx_u64_bits(x), false); }
)GLSL";

constexpr const char* kConvertHelpersI64F64 = R"GLSL(
double nx_s64_to_f64(int64_t x) { return nx_int_to_f64(nx_u64_bits(x < 0l ? uint64_t(0) - uint64_t(x) : uint64_t(x)), x < 0l); }
double nx_u64_to_f64(uint64_t x) { return nx_int_to_f64(nx_u64_bits(x), false); }
)GLSL";

bool is_64(DType t) { return t == DType::U64 || t == DType::S64; }

std::string uvec2_of(uint64_t v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "uvec2(0x%xu, 0x%xu)", static_cast<unsigned>(v), static_cast<unsigned>(v >> 32));
  return buf;
}

// uvec2 literals (64-bit two's complement) of the integer type's max and min (for +-inf -> int).
std::pair<std::string, std::string> int_limits(DType t) {
  const TypeInfo& ti = type_info(t);
  const uint32_t b = ti.bits;
  if (ti.is_signed()) return {uvec2_of((uint64_t(1) << (b - 1)) - 1), uvec2_of(~uint64_t(0) << (b - 1))};
  return {uvec2_of(b == 64 ? ~uint64_t(0) : (uint64_t(1) << b) - 1), uvec2_of(0)};
}

// `e`, an integer GLSL expression (int, uint or a 64-bit type), wrapped to integer type t of at
// most 32 bits, as value_type(t).
std::string wrap_int32(DType t, const std::string& e) {
  const TypeInfo& ti = type_info(t);
  if (ti.bits == 32) return (ti.is_signed() ? "int" : "uint") + e;
  char mask[16];
  std::snprintf(mask, sizeof mask, "0x%xu", (1u << ti.bits) - 1);
  if (ti.is_signed()) return "bitfieldExtract(int" + e + ", 0, " + std::to_string(ti.bits) + ")";
  return "(uint" + e + " & " + mask + ")";
}

// The low bits `bits` (a uvec2 expression) as value_type(t) of integer type t.
std::string from_int_bits(DType t, const std::string& bits) {
  switch (t) {
    case DType::U64: return "nx_bits_u64(" + bits + ")";
    case DType::S64: return "int64_t(nx_bits_u64(" + bits + "))";
    default: return wrap_int32(t, "((" + bits + ").x)");
  }
}

// The type a value converted to packed float type t is held as before gen::store_value writes it.
// f8 is written from the value's f16 (Nx.Floating.dump_f8), so it is held as that f16 value: an
// f8 of a zero exponent reads back as another value (Nx.Floating.load_f8: 0x02 is 2^-15 * 1.5,
// whose f16 is 0x0300), so holding the f8 value itself would store other bits than Nx writes.
DType held_as(DType t) { return t == DType::F8 ? DType::F16 : t; }

// A float held as float or double (`d`) to the nearest value of packed float type t, held as
// float again: the helpers of t's format.
std::string round_to_packed_float(DType t, bool d, const std::string& e) {
  const std::string fmt = type_info(held_as(t)).float_format;
  return "nx_" + fmt + "_to_float(nx_" + (d ? "double" : "float") + "_to_" + fmt + e + ")";
}

// An integer value of type `from` held as `st` to the nearest f32 by Nx's rules.
std::string int_to_f32(DType from, const std::string& st, const std::string& e) {
  if (is_64(from)) return (st == "int64_t" ? "nx_s64_to_f32(" : "nx_u64_to_f32(") + e + ")";
  return (st == "int" ? "nx_s32_to_f32(" : "nx_u32_to_f32(") + e + ")";
}

}  // namespace

std::string convert_helpers(const Capabilities& caps) {
  std::string s = kConvertHelpers;
  if (caps.float64) s += kConvertHelpersF64;
  if (caps.int64) s += kConvertHelpersI64;
  if (caps.int64 && caps.float64) s += kConvertHelpersI64F64;
  return s;
}

std::string convert(const Capabilities& caps, DType from, DType to, const std::string& expr,
                    const std::string& from_glsl_type) {
  const std::string st = from_glsl_type.empty() ? value_type(from) : from_glsl_type;
  const std::string e = "(" + expr + ")";
  if (type_info(from).is_complex() || type_info(to).is_complex())
    fail(ErrorKind::Unsupported, std::string("convert ") + type_name(from) + " -> " + type_name(to) +
                                     ": complex types are not supported yet");
  require_type(caps, to, "convert");
  const bool src_float = st == "float" || st == "double";
  const TypeInfo& to_info = type_info(to);
  if (src_float) {
    const bool d = st == "double";
    if (to == DType::F64) return d ? e : "nx_f32_to_f64" + e;
    if (to == DType::F32) return d ? "nx_double_to_float" + e : e;
    if (to_info.is_float()) return !d && (from == to || from == held_as(to)) ? e : round_to_packed_float(to, d, e);
    auto [maxv, minv] = int_limits(to);
    return from_int_bits(to, std::string(d ? "nx_f64_to_int_bits(" : "nx_f32_to_int_bits(") + expr + ", " + maxv +
                                 ", " + minv + ")");
  }
  // Integer source held as int / uint / int64_t / uint64_t.
  const bool src64 = st == "int64_t" || st == "uint64_t";
  const bool src_signed = st == "int" || st == "int64_t";
  switch (to) {
    case DType::U64:
      if (src64) return "uint64_t" + e;
      return src_signed ? "uint64_t(int64_t" + e + ")" : "uint64_t" + e;
    case DType::S64: return "int64_t" + e;
    case DType::F64:
      if (src64) return (src_signed ? "nx_s64_to_f64" : "nx_u64_to_f64") + e;
      return "double" + e;  // exact
    case DType::F32: return int_to_f32(from, st, expr);
    default: break;
  }
  // Packed floats from the f32 Erlang writes (f16 and f8 through it exactly: an integer of
  // 65520 or more is infinity either way; f8_e4m3fn saturates at 448).
  if (to_info.is_float()) return round_to_packed_float(to, false, "(" + int_to_f32(from, st, expr) + ")");
  return wrap_int32(to, e);
}

}  // namespace gen

namespace {

void check_real(DType t, const char* op) {
  if (type_info(t).is_complex()) fail(ErrorKind::Unsupported, std::string(op) + ": complex types are not supported yet");
}

}  // namespace

Tensor as_type(const Tensor& x, DType out_type) {
  check_real(x.type, "as_type");
  check_real(out_type, "as_type");
  const Capabilities& caps = x.device().caps();
  require_type(caps, x.type, "as_type");
  require_type(caps, out_type, "as_type");
  if (out_type == x.type) return x;  // Nx returns the tensor itself: bits (NaN payloads) kept
  gen::check_index_range("as_type", x.size());
  Tensor out = empty_tensor(x.device(), out_type, x.shape, "as_type");
  const uint32_t n = static_cast<uint32_t>(x.size());
  if (n == 0) return out;
  const std::string load = gen::load(x.type, "src", "i");
  std::string vt = gen::value_type(out_type), v = gen::convert(caps, x.type, out_type, load);
  if (out_type == DType::F16 || out_type == DType::BF16) {
    // The store rounds a float or double to f16 or bf16 as Nx does (gen::store_value), so the
    // value goes there as it is: gen::convert's value, already rounded and held as float, was
    // rounded a second time (no change in the bits, a third of as_type's work).
    vt = x.type == DType::F64 ? "double" : "float";
    v = x.type == DType::F64 ? load : gen::convert(caps, x.type, DType::F32, load);
  }
  std::string src = gen::buffer(0, "src", x.type, true) + gen::buffer(1, "dst", out_type, false) +
                    "layout(push_constant) uniform Push { uint n; } pc;\n" +
                    gen::elementwise_main(out_type, "dst", vt + " v = " + v + ";", vt);
  BufferView views[] = {{x.buffer}, {out.buffer}};
  gen::launch(x.device(), gen::kernel(caps, std::string("as_type_") + type_name(x.type) + "_" + type_name(out_type), src), views,
              gen::bytes_of(n), gen::elementwise_invocations(out_type, n));
  return out;
}

Tensor bitcast(const Tensor& x, DType out_type) {
  if (type_info(x.type).is_complex() || type_info(out_type).is_complex())
    fail(ErrorKind::InvalidArgument, "bitcast: complex types are not supported (as in Nx)");
  if (type_info(x.type).bits != type_info(out_type).bits)
    fail(ErrorKind::InvalidArgument, std::string("bitcast: input type width must match new type width, got ") +
                                         type_name(x.type) + " and " + type_name(out_type));
  require_type(x.device().caps(), out_type, "bitcast");
  // Tensors are immutable: the same buffer read as the other type.
  return Tensor{x.buffer, out_type, x.shape};
}

}  // namespace nxvk
