#include "ops/codegen.hpp"

#include <algorithm>
#include <cstdio>

namespace nxvk::gen {
namespace {

// Float conversions done in integer code so every device rounds the same way. The f16 ones are
// straight-line (selects, no branches): every f16 element passes through them, and on lavapipe
// the branch-free forms made an f32 -> f16 cast 30% faster and an f16 add 20% (docs/BENCHMARKS.md).
constexpr const char* kFloatHelpers = R"GLSL(
float nx_half_to_float(uint h) {
  // Exponent and significand moved to f32's places and rebiased (by 112, or to 255 for inf and
  // NaN, whose payload stays); a subnormal as m 2^-24, exact (and normal) in f32.
  uint a = (h & 0x7fffu) << 13;
  uint sub = floatBitsToUint(float(h & 0x3ffu) * 5.9604644775390625e-8);
  uint bits = a >= 0x0f800000u ? a + 0x70000000u : (a < 0x00800000u ? sub : a + 0x38000000u);
  return uintBitsToFloat(bits | ((h & 0x8000u) << 16));
}
float nx_bf16_to_float(uint b) { return uintBitsToFloat(b << 16); }


// The bits rounding |x| (f32 bits a, below 2^16) to f16 drops from its significand with the
// leading bit: 13 in f16's normal range, 126 - e below 2^-14 (its subnormals; from 24 on no bit
// is kept), capped at 31, where a shift stays defined.
uint nx_f16_dropped_bits(uint a) { return a < 0x38800000u ? min(126u - (a >> 23), 31u) : 13u; }
uint nx_float_to_half(float f) {
  uint x = floatBitsToUint(f);
  uint sign = (x >> 16) & 0x8000u;
  uint a = x & 0x7fffffffu;
  // f16's normal range: the exponent rebiased in place, 13 bits dropped. Below 2^-14 (subnormal
  // results): the significand with its leading bit (nx_f16_dropped_bits; from 2^-25 down the
  // result is zero, 2^-25 itself a tie to even). Then round to nearest even (a carry reaches the
  // exponent; from 65520 on the result is inf, 0x7c00, which a select gives for inf and the f32
  // range beyond too); NaN is Nx's canonical 0x7e00, unsigned.
  uint shift = nx_f16_dropped_bits(a);
  uint m = a < 0x38800000u ? (a & 0x7fffffu) | 0x800000u : a - 0x38000000u;
  uint k = m >> shift;
  uint rem = m & ((1u << shift) - 1u);
  uint halfway = 1u << (shift - 1u);
  k += uint(rem > halfway) | (uint(rem == halfway) & k & 1u);
  k = a >= 0x477ff000u ? 0x7c00u : k;
  return a > 0x7f800000u ? 0x7e00u : sign | k;
}
// Nx.BinaryBackend writes bf16 as the upper half of the binary32 value (truncation).
uint nx_float_to_bf16(float f) {
  if (isnan(f)) return 0x7fc0u;
  return floatBitsToUint(f) >> 16;
}
// f8 (E5M2) as Nx.BinaryBackend reads it (Nx.Floating.load_f8): the upper byte of an f16,
// except that a zero exponent with a nonzero mantissa m reads as 2^-15 * (1 + m/4), not as the
// IEEE subnormal m * 2^-16.
float nx_f8_to_float(uint b) {
  if ((b & 0x7cu) == 0u && (b & 3u) != 0u) {
    float f = float(4u + (b & 3u)) * uintBitsToFloat(0x37000000u);  // (4 + m) * 2^-17
    return (b & 0x80u) != 0u ? -f : f;
  }
  return nx_half_to_float(b << 8);
}
// Nx writes f8 as the upper byte of the value's f16 (RNE to f16, then truncated): NaN 0x7e.
uint nx_float_to_f8(float f) { return nx_float_to_half(f) >> 8; }
// f8_e4m3fn (Nx.Floating.load_f8_e4m3fn): bias 7, subnormals, no infinity, NaN only S.1111.111.
float nx_f8e4m3fn_to_float(uint b) {
  uint e = (b >> 3) & 0xfu, m = b & 7u;
  if (e == 15u && m == 7u) return uintBitsToFloat(0x7fc00000u);
  float f = e == 0u ? float(m) * uintBitsToFloat(0x3b000000u)  // m * 2^-9
                    : uintBitsToFloat(((e + 120u) << 23) | (m << 20));
  return (b & 0x80u) != 0u ? -f : f;
}
// Nx.Floating.dump_f8_e4m3fn, step by step: clamp to [-448, 448] (infinity too), exponent
// floor(log2|x|), mantissa round((|x| / 2^e - 1) * 8) half away from zero and capped at 7 (so
// values in [1.9375, 2) * 2^e become 1.875 * 2^e, not 2^(e+1)); below 2^-6 round(|x| * 512)
// capped at 7; exponent 15 caps the mantissa at 6 (448). NaN 0x7f; -0.0 keeps its sign.
uint nx_f8e4m3fn_mantissa(float y) {  // round half away from zero of y >= 0, capped at 7
  uint m = uint(y);
  if (y - float(m) >= 0.5) m += 1u;
  return min(m, 7u);
}
uint nx_float_to_f8e4m3fn(float f) {
  if (isnan(f)) return 0x7fu;
  uint sign = (floatBitsToUint(f) >> 24) & 0x80u;
  float a = abs(f);
  if (a == 0.0) return sign;
  if (a >= 448.0) return sign | 0x7eu;
  int eu = int(floatBitsToUint(a) >> 23) - 127;  // floor(log2(a)) (f32 subnormals: -127)
  if (eu + 7 <= 0) return sign | nx_f8e4m3fn_mantissa(a * 512.0);
  float sig = a * uintBitsToFloat(uint(127 - eu) << 23);
  uint m = nx_f8e4m3fn_mantissa((sig - 1.0) * 8.0);
  if (eu + 7 == 15 && m >= 7u) m = 6u;
  return sign | (uint(eu + 7) << 3) | m;
}
)GLSL";

// f32 arithmetic and comparisons that keep subnormals. GPUs may flush f32 subnormal operands and
// results to zero (NVIDIA does, and reports shaderDenormPreserveFloat32 = false; Vulkan allows
// it), and may turn a compare-and-select into a min/max instruction that ranks -0.0 below +0.0.
// Nx keeps both, so f32 values (and f16/bf16 ones held in f32) are compared, tested and negated
// in integer code, and sums, products and quotients that meet the subnormal range are formed
// exactly: scaled by 2^64 (sums) or in integer arithmetic (products, quotients).
constexpr const char* kF32ExactHelpers = R"GLSL(
bool nx_isnan_f32(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }
bool nx_nonzero_f32(float x) { return (floatBitsToUint(x) & 0x7fffffffu) != 0u; }
float nx_neg_f32(float x) { return uintBitsToFloat(floatBitsToUint(x) ^ 0x80000000u); }
// Orders non-NaN floats by value; -0.0 and +0.0 have the same key.
int nx_key_f32(float x) {
  uint b = floatBitsToUint(x);
  int m = int(b & 0x7fffffffu);
  return (b >> 31) != 0u ? -m : m;
}
bool nx_lt_f32(float a, float b) { return !nx_isnan_f32(a) && !nx_isnan_f32(b) && nx_key_f32(a) < nx_key_f32(b); }
bool nx_le_f32(float a, float b) { return !nx_isnan_f32(a) && !nx_isnan_f32(b) && nx_key_f32(a) <= nx_key_f32(b); }
bool nx_eq_f32(float a, float b) { return !nx_isnan_f32(a) && !nx_isnan_f32(b) && nx_key_f32(a) == nx_key_f32(b); }
// Nx's max and min: NaN wins (a + b is a NaN), equal values give the first operand.
float nx_max_f32(float a, float b) { return (nx_isnan_f32(a) || nx_isnan_f32(b)) ? a + b : (nx_lt_f32(a, b) ? b : a); }
float nx_min_f32(float a, float b) { return (nx_isnan_f32(a) || nx_isnan_f32(b)) ? a + b : (nx_lt_f32(b, a) ? b : a); }
// x 2^64 exactly, for |x| < 2^-100: a subnormal's significand is converted as an integer, since
// a multiplication could flush it.
float nx_scale_up_f32(float x) {
  uint b = floatBitsToUint(x);
  if ((b & 0x7f800000u) != 0u) return uintBitsToFloat(b + 0x20000000u);
  precise float m = float(b & 0x7fffffu) * 2.5849394142282115e-26;  // m 2^-149 2^64 = m 2^-85
  return uintBitsToFloat(floatBitsToUint(m) | (b & 0x80000000u));
}
// x 2^-64 for x a multiple of 2^-85 (a scaled sum): exact, a subnormal built from its integer.
float nx_scale_down_f32(float x) {
  uint b = floatBitsToUint(x), a = b & 0x7fffffffu;
  if (a >= 0x20800000u) return uintBitsToFloat(b - 0x20000000u);  // |x| >= 2^-62: a normal result
  precise float m = uintBitsToFloat(a) * 3.8685626227668134e25;     // x 2^85, an integer below 2^23
  return uintBitsToFloat((b & 0x80000000u) | uint(m));
}
// a + b rounded once. Unless both are below 2^-100 the sum is 0 or normal, and a subnormal
// operand (flushed or not) is below a quarter ulp of the other, so the device's sum is right;
// else both are scaled by 2^64 (exactly), where the sum of two multiples of 2^-85 is exact or
// rounded as a normal, and scaled back exactly.
float nx_add_f32(float a, float b) {
  precise float v = a + b;
  if (max(floatBitsToUint(a) & 0x7f800000u, floatBitsToUint(b) & 0x7f800000u) < 0x0d800000u) {
    precise float s = nx_scale_up_f32(a) + nx_scale_up_f32(b);
    v = nx_scale_down_f32(s);
  }
  return v;
}
float nx_sub_f32(float a, float b) { return nx_add_f32(a, nx_neg_f32(b)); }
// Significand m in [2^23, 2^24) and exponent e of a finite nonzero |x| (bits u): x = m 2^(e - 23).
uint nx_unpack_f32(uint u, out int e) {
  uint ex = (u >> 23) & 0xffu, m = u & 0x7fffffu;
  if (ex != 0u) { e = int(ex) - 127; return m | 0x800000u; }
  int sh = 23 - findMSB(m);  // subnormal: normalise
  e = -126 - sh;
  return m << uint(sh);
}
// The f32 bits (no sign) of n 2^E rounded to nearest even, for a 64-bit n = (lo, hi) > 0 with at
// least 25 significant bits (so at least one is dropped): normal, subnormal, zero or infinity.
uint nx_round_to_f32(uvec2 n, int E) {
  int msb = n.y != 0u ? 32 + findMSB(n.y) : findMSB(n.x);
  int ex = msb + E;  // the leading bit's exponent
  if (ex > 127) return 0x7f800000u;
  int drop = msb - 23 + max(-126 - ex, 0);  // below 2^-126 the grid is 2^-149
  if (drop > 63) return 0u;
  uint d = uint(drop);
  uint q = d >= 32u ? n.y >> (d - 32u) : (n.x >> d) | (n.y << (32u - d));  // d >= 1
  uint r = d - 1u;                                                         // the rounding bit
  bool rbit = ((r >= 32u ? n.y >> (r - 32u) : n.x >> r) & 1u) != 0u;
  bool rest = r >= 32u ? (n.x != 0u || (n.y & ((1u << (r - 32u)) - 1u)) != 0u) : (n.x & ((1u << r) - 1u)) != 0u;
  if (rbit && (rest || (q & 1u) != 0u)) q += 1u;
  if (ex < -126) return q;                  // subnormal (a carry makes it the smallest normal)
  return min((uint(ex + 126) << 23) + q, 0x7f800000u);  // q holds the implicit bit; a carry adds to e
}
// a b rounded once: the device's product where operands and result are normal (or inf/NaN),
// else the exact product of the significands rounded in integer code.
float nx_mul_f32(float a, float b) {
  precise float v = a * b;
  uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
  if ((ua & 0x7f800000u) != 0u && (ub & 0x7f800000u) != 0u && (floatBitsToUint(v) & 0x7f800000u) != 0u) return v;
  uint s = (ua ^ ub) & 0x80000000u, aa = ua & 0x7fffffffu, ab = ub & 0x7fffffffu;
  if (aa > 0x7f800000u || ab > 0x7f800000u) return uintBitsToFloat(0x7fc00000u);
  if (aa == 0x7f800000u || ab == 0x7f800000u) return uintBitsToFloat(aa == 0u || ab == 0u ? 0x7fc00000u : s | 0x7f800000u);
  if (aa == 0u || ab == 0u) return uintBitsToFloat(s);
  int ea, eb;
  uint ma = nx_unpack_f32(aa, ea), mb = nx_unpack_f32(ab, eb);
  uvec2 p;
  umulExtended(ma, mb, p.y, p.x);
  return uintBitsToFloat(s | nx_round_to_f32(p, ea + eb - 46));
}
// a / b rounded once, in integer code (for the operands and quotients a division in f32
// arithmetic cannot take: subnormal ones): 26 quotient bits by long division, the remainder as
// a sticky bit.
float nx_div_bits_f32(float a, float b) {
  uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
  uint s = (ua ^ ub) & 0x80000000u, aa = ua & 0x7fffffffu, ab = ub & 0x7fffffffu;
  if (aa > 0x7f800000u || ab > 0x7f800000u) return uintBitsToFloat(0x7fc00000u);
  if (aa == 0x7f800000u) return uintBitsToFloat(ab == 0x7f800000u ? 0x7fc00000u : s | 0x7f800000u);
  if (ab == 0x7f800000u) return uintBitsToFloat(s);
  if (ab == 0u) return uintBitsToFloat(aa == 0u ? 0x7fc00000u : s | 0x7f800000u);
  if (aa == 0u) return uintBitsToFloat(s);
  int ea, eb;
  uint ma = nx_unpack_f32(aa, ea), mb = nx_unpack_f32(ab, eb);
  uint q = 0u, r = ma;  // r < 2 mb throughout
  for (int i = 0; i < 26; ++i) {
    q <<= 1u;
    if (r >= mb) { r -= mb; q |= 1u; }
    r <<= 1u;
  }
  // a / b = (q + rest) 2^(ea - eb - 25), q in [2^24, 2^26): 2q + sticky carries 26 or 27 bits.
  return uintBitsToFloat(s | nx_round_to_f32(uvec2((q << 1u) | (r != 0u ? 1u : 0u), 0u), ea - eb - 26));
}
)GLSL";

constexpr const char* kDoubleHelpers = R"GLSL(
// Round-to-nearest-even of a double into a binary format with `mbits` stored mantissa bits and
// `ebits` exponent bits; returns the format's bits without sign, or 0xffffffff for NaN.
uint nx_double_round_bits(double d, uint mbits, uint ebits) {
  uvec2 u = unpackDouble2x32(d);
  uint hi = u.y & 0x7fffffffu;
  uint e = hi >> 20;
  uint maxe = (1u << ebits) - 1u;
  int bias = int((1u << (ebits - 1u)) - 1u);
  if (e == 0x7ffu) return ((hi & 0xfffffu) != 0u || u.x != 0u) ? 0xffffffffu : (maxe << mbits);
  if (e == 0u) return 0u;  // double subnormals are far below every narrower format's range
  int fe = int(e) - 1023 + bias;         // biased exponent in the target format
  if (fe >= int(maxe)) return maxe << mbits;  // overflow (also keeps the shift below in range)
  uint mh = (hi & 0xfffffu) | 0x100000u;  // 53-bit significand = mh:u.x (21 + 32 bits)
  uint s = 52u - mbits;                   // bits to drop for a normal result
  if (fe <= 0) s += uint(1 - fe);         // subnormal result: drop more
  if (s > 54u) return 0u;                 // below half the smallest subnormal
  uint k, rem_hi, rem_lo, half_hi, half_lo;
  if (s < 32u) {
    k = (mh << (32u - s)) | (u.x >> s);
    rem_hi = 0u; rem_lo = u.x & ((1u << s) - 1u);
    half_hi = 0u; half_lo = 1u << (s - 1u);
  } else {
    k = mh >> (s - 32u);
    rem_hi = mh & ((1u << (s - 32u)) - 1u); rem_lo = u.x;
    if (s == 32u) { half_hi = 0u; half_lo = 0x80000000u; }
    else { half_hi = 1u << (s - 33u); half_lo = 0u; }
  }
  bool above = rem_hi > half_hi || (rem_hi == half_hi && rem_lo > half_lo);
  bool tie = rem_hi == half_hi && rem_lo == half_lo;
  if (above || (tie && (k & 1u) != 0u)) k += 1u;
  if (fe <= 0) return k;  // subnormal (a carry into the exponent field is the right encoding)
  uint bits = (uint(fe - 1) << mbits) + k;  // k holds the implicit bit: adds 1 to the exponent
  if ((bits >> mbits) >= maxe) return maxe << mbits;  // overflow: infinity
  return bits;
}
float nx_double_to_float(double d) {
  uvec2 u = unpackDouble2x32(d);
  uint e = (u.y >> 20) & 0x7ffu;
  if (e - 897u < 254u) {  // f32's normal range: round the 53-bit significand to 24 bits here
    uint r = u.x & 0x1fffffffu;
    uint bits = (u.y & 0x80000000u) | ((e - 896u) << 23) | ((u.y & 0xfffffu) << 3) | (u.x >> 29);
    return uintBitsToFloat(bits + ((r > 0x10000000u || (r == 0x10000000u && (bits & 1u) != 0u)) ? 1u : 0u));
  }
  uint b = nx_double_round_bits(d, 23u, 8u);
  if (b == 0xffffffffu) return uintBitsToFloat(0x7fc00000u);
  return uintBitsToFloat(b | ((unpackDouble2x32(d).y >> 31) << 31));
}
uint nx_double_to_half(double d) {
  uint b = nx_double_round_bits(d, 10u, 5u);
  if (b == 0xffffffffu) return 0x7e00u;
  return b | ((unpackDouble2x32(d).y >> 31) << 15);
}
uint nx_double_to_bf16(double d) { return nx_float_to_bf16(nx_double_to_float(d)); }
uint nx_double_to_f8(double d) { return nx_double_to_half(d) >> 8; }
double nx_pow2_f64(int e) { return packDouble2x32(uvec2(0u, uint(1023 + e) << 20)); }  // e in [-1022, 1023]
uint nx_f8e4m3fn_mantissa_f64(double y) {  // round half away from zero of y, capped to [0, 7]
  if (y < 0.0lf) return 0u;
  uint m = uint(y);
  if (y - double(m) >= 0.5lf) m += 1u;
  return min(m, 7u);
}
// As nx_float_to_f8e4m3fn, plus Nx's floor(:math.log2(x)) for doubles: libm's correctly rounded
// log2 of an x a few ulps below 2^k is the integer k itself (log2(x) ~ k - 1.4427 * (1 - x/2^k)
// rounds to k), so Nx takes the exponent k and the mantissa 0 there.
uint nx_double_to_f8e4m3fn(double d) {
  if (isnan(d)) return 0x7fu;
  uvec2 u = unpackDouble2x32(d);
  uint sign = (u.y >> 24) & 0x80u;
  double a = abs(d);
  if (a == 0.0lf) return sign;
  if (a >= 448.0lf) return sign | 0x7eu;
  uint ef = (u.y >> 20) & 0x7ffu;
  if (ef == 0u) return sign;  // double subnormal: rounds to zero
  int eu = int(ef) - 1023;
  double k = double(eu + 1);
  double eps = 1.0lf - a * nx_pow2_f64(-(eu + 1));  // exact
  precise double l = k - 1.4426950408889634lf * eps;
  if (l == k) eu += 1;
  if (eu + 7 <= 0) return sign | nx_f8e4m3fn_mantissa_f64(a * 512.0lf);
  uint m = nx_f8e4m3fn_mantissa_f64((a * nx_pow2_f64(-eu) - 1.0lf) * 8.0lf);
  if (eu + 7 == 15 && m >= 7u) m = 6u;
  return sign | (uint(eu + 7) << 3) | m;
}
double nx_canonical_nan_f64(double d) { return isnan(d) ? packDouble2x32(uvec2(0u, 0x7ff80000u)) : d; }
)GLSL";

bool narrow(DType t) { return type_info(t).packed(); }

uint32_t log2u(uint32_t x) {
  uint32_t l = 0;
  while ((1u << l) < x) ++l;
  return l;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llxu", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

uint32_t elements_per_word(DType type) { return narrow(type) ? 32 / type_info(type).bits : 1; }

std::string packed_shift(DType type, const std::string& pos) {
  const uint32_t bits = type_info(type).bits;
  // Below 8 bits Nx packs the first element of a byte in its most significant bits.
  if (bits < 8) return "(((" + pos + ") ^ " + std::to_string(8 / bits - 1) + "u) * " + std::to_string(bits) + "u)";
  return "((" + pos + ") * " + std::to_string(bits) + "u)";
}

std::string value_type(DType type) { return type_info(type).glsl; }

std::string float_compute_type(const Capabilities& caps) { return caps.float64 ? "double" : "float"; }

std::string preamble(const Capabilities& caps) {
  std::string s = "#version 450\n";
  s += "#extension GL_EXT_control_flow_attributes : enable\n";
  if (caps.int64) s += "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n";
  s += "layout(local_size_x_id = 0) in;\n";
  s += "uint grid_stride() { return gl_NumWorkGroups.x * gl_WorkGroupSize.x; }\n";
  s += kFloatHelpers;
  s += kF32ExactHelpers;
  if (caps.float64) s += kDoubleHelpers;
  s += convert_helpers(caps);
  return s;
}

std::string nonzero(DType t, const std::string& x) {
  const std::string vt = value_type(t);
  if (type_info(t).is_float() && vt == "float") return "nx_nonzero_f32(" + x + ")";
  if (type_info(t).is_float()) return "!(" + x + " == " + vt + "(0))";
  return "(" + x + " != " + vt + "(0))";
}

std::string buffer(uint32_t binding, const std::string& name, DType type, bool read_only) {
  const TypeInfo& t = type_info(type);
  // Packed and 32-bit types are uint words; 64-bit integers uint64_t (signed ones converted on
  // load); f64 and complex their own GLSL type.
  const std::string elem = t.bits <= 32 ? "uint" : t.is_integer() ? "uint64_t" : t.glsl;
  return "layout(std430, binding = " + std::to_string(binding) + ") " + (read_only ? "readonly " : "") +
         "buffer " + name + "_t { " + elem + " w[]; } " + name + ";\n";
}

std::string params_buffer(uint32_t binding) {
  return "layout(std430, binding = " + std::to_string(binding) + ") readonly buffer Params_t { uint p[]; } params;\n";
}

std::string load(DType type, const std::string& name, const std::string& i) {
  const TypeInfo& t = type_info(type);
  const std::string w = name + ".w";
  if (t.packed()) {
    const uint32_t per = elements_per_word(type);
    const std::string word = w + "[(" + i + ") >> " + std::to_string(log2u(per)) + "u]";
    const std::string shift = packed_shift(type, "(" + i + ") & " + std::to_string(per - 1) + "u");
    const std::string bits = std::to_string(t.bits);
    if (t.is_signed()) return "bitfieldExtract(int(" + word + "), int(" + shift + "), " + bits + ")";
    const std::string raw = "((" + word + " >> " + shift + ") & " + hex((1ull << t.bits) - 1) + ")";
    if (t.is_float()) return std::string("nx_") + t.float_format + "_to_float(" + raw + ")";
    return raw;
  }
  switch (type) {
    case DType::S32: return "int(" + w + "[" + i + "])";
    case DType::F32: return "uintBitsToFloat(" + w + "[" + i + "])";
    case DType::S64: return "int64_t(" + w + "[" + i + "])";
    default: return w + "[" + i + "]";  // u32, u64, f64, complex
  }
}

std::string store_value(DType out, const std::string& v, const std::string& v_type, bool canonical_nan) {
  const TypeInfo& t = type_info(out);
  const bool from_double = v_type == "double";
  if (t.packed()) {
    if (t.is_float()) return std::string(from_double ? "nx_double_to_" : "nx_float_to_") + t.float_format + "(" + v + ")";
    return "(uint(" + v + ") & " + hex((1ull << t.bits) - 1) + ")";
  }
  switch (out) {
    case DType::U32:
    case DType::S32: return "uint(" + v + ")";
    case DType::U64:
    case DType::S64: return "uint64_t(" + v + ")";
    case DType::F32:
      if (from_double) return "floatBitsToUint(nx_double_to_float(" + v + "))";
      return canonical_nan ? "(isnan(" + v + ") ? 0x7fc00000u : floatBitsToUint(" + v + "))"
                           : "floatBitsToUint(" + v + ")";
    case DType::F64: return canonical_nan ? "nx_canonical_nan_f64(double(" + v + "))" : "double(" + v + ")";
    default: return v;  // complex
  }
}

DType bits_type(DType type, const Capabilities& caps) {
  const TypeInfo& t = type_info(type);
  if (t.is_complex()) return type;  // vec2/dvec2 moves keep their bits
  if (t.bits == 64 && !caps.int64) return caps.float64 ? DType::F64 : DType::C64;  // a double/vec2 load keeps bits
  return *unsigned_type_of_bits(t.bits);
}

uint64_t elementwise_invocations(DType out_type, uint64_t n) {
  const uint64_t per_word = elements_per_word(out_type);
  return (n + per_word - 1) / per_word;
}

std::string elementwise_main(DType out_type, const std::string& out, const std::string& body,
                             const std::string& v_type, bool canonical_nan, const std::string& setup) {
  std::string s = "void main() {\n" + (setup.empty() ? "" : "  " + setup + "\n");
  if (narrow(out_type)) {
    const uint32_t bits = type_info(out_type).bits;
    const uint32_t per_word = 32 / bits;
    s += "  uint words = (pc.n + " + std::to_string(per_word - 1) + "u) / " + std::to_string(per_word) + "u;\n";
    s += "  for (uint word = gl_GlobalInvocationID.x; word < words; word += grid_stride()) {\n";
    s += "    uint packed = 0u;\n";
    s += "    [[unroll]] for (uint e = 0u; e < " + std::to_string(per_word) + "u; ++e) {\n";
    s += "      uint i = word * " + std::to_string(per_word) + "u + e;\n";
    s += "      if (i >= pc.n) break;\n";
    s += "      " + body + "\n";
    s += "      packed |= " + store_value(out_type, "v", v_type, canonical_nan) + " << " + packed_shift(out_type, "e") + ";\n";
    s += "    }\n";
    s += "    " + out + ".w[word] = packed;\n";
    s += "  }\n";
  } else {
    s += "  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += grid_stride()) {\n";
    s += "    " + body + "\n";
    s += "    " + out + ".w[i] = " + store_value(out_type, "v", v_type, canonical_nan) + ";\n";
    s += "  }\n";
  }
  s += "}\n";
  return s;
}

std::string strided_index_function(const std::string& name, uint32_t offset) {
  const std::string o = std::to_string(offset);
  return "uint " + name + "(uint i) {\n"
         "  uint rank = params.p[" + o + "];\n"
         "  uint index = 0u;\n"
         "  for (uint d = rank; d > 0u; --d) {\n"
         "    uint dim = params.p[" + o + " + d];\n"
         "    uint stride = params.p[" + o + " + rank + d];\n"
         "    index += (i % dim) * stride;\n"
         "    i /= dim;\n"
         "  }\n"
         "  return index;\n"
         "}\n";
}

void append_strided_params(std::vector<uint32_t>& params, const Shape& out_shape,
                           const std::vector<int64_t>& strides) {
  params.push_back(static_cast<uint32_t>(out_shape.size()));
  for (int64_t d : out_shape) params.push_back(static_cast<uint32_t>(d));
  for (int64_t st : strides) params.push_back(static_cast<uint32_t>(st));
}

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i > 0; --i) {
    strides[i - 1] = s;
    s *= shape[i - 1];
  }
  return strides;
}

void check_index_range(const std::string& op, int64_t elements) {
  if (elements > int64_t(0xffffffffll))
    fail(ErrorKind::Unsupported, op + ": " + std::to_string(elements) +
                                     " elements exceed the 2^32 - 1 that a kernel index covers");
}

Kernel kernel(const Capabilities& caps, std::string name, std::string glsl) {
  Kernel k{std::move(name), std::move(glsl)};
  k.prefix_key = "preamble";
  k.prefix = [caps] { return preamble(caps); };
  return k;
}

void launch(Device& device, Kernel kernel, std::span<const BufferView> buffers, std::span<const std::byte> push,
            uint64_t invocations) {
  if (invocations == 0) return;
  // At most 65535 workgroups (the grid-stride loops cover any n); measured on the H200, more
  // groups made unary ops slower.
  const uint64_t groups = std::min<uint64_t>((invocations + kWorkgroupSize - 1) / kWorkgroupSize,
                                             std::min<uint32_t>(device.caps().max_workgroup_count[0], 65535u));
  const uint32_t spec[] = {kWorkgroupSize};
  kernel.bindings = static_cast<uint32_t>(buffers.size());
  device.dispatch(kernel, buffers, push, {static_cast<uint32_t>(groups)}, spec);
}

}  // namespace nxvk::gen
