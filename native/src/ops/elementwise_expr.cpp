// The GLSL of each elementwise op, in Nx.BinaryBackend's semantics. Nx computes with the operands'
// own values (integers exactly, floats as doubles) and converts the result to the output type, so
// float results are computed in the float compute type (double where the device has f64) and
// rounded once, and integer results are computed in the output's integer type (wrapping), with
// exact sign-aware handling where wrapping the inputs first would change the answer (comparisons,
// min/max, quotient/remainder, right shifts, pow's exponent).
//
// Where Nx.BinaryBackend raises, a kernel cannot; the documented values (docs/CAPABILITIES.md):
//  - integer quotient by 0 -> -1 (all bits set), remainder by 0 -> the dividend (as XLA);
//  - integer pow with a negative exponent -> 1 for base 1, +-1 for base -1, else 0;
//  - shifts by a negative count behave as shifts by >= the bit width (left: 0; right: 0 or -1);
//  - float division by zero, fmod by zero/of inf, pow/ceil/floor/round of NaN or inf: IEEE
//    values (C99 Annex F), where Nx.BinaryBackend raises ArithmeticError.
// sign(NaN) is NaN and sign(-inf) is -1 here; Nx.BinaryBackend gives 1.0 for both (its atoms
// compare above numbers), which we take to be a defect rather than a semantic.
#include <cstdlib>
#include <string_view>

#include "ops/codegen.hpp"
#include "ops/elementwise_internal.hpp"
#include "ops/math_library.hpp"

namespace nxvk::elementwise {
namespace {

bool is_float(DType t) { return type_info(t).is_float(); }
bool is_signed(DType t) { return type_info(t).is_signed(); }
bool is64(DType t) { return type_bytes(t) == 8; }
std::string u(bool w64) { return w64 ? "uint64_t" : "uint"; }
std::string s(bool w64) { return w64 ? "int64_t" : "int"; }
// x < 0 for a signed value of the width. The 64-bit form tests the sign bit: lavapipe (Mesa 22)
// miscompiles `int64_t(int_value) < 0l` (a sign-extended value compared with a constant) to false.
std::string negative(bool w64, const std::string& x) {
  return w64 ? "((uint(uint64_t(" + x + ") >> 32) >> 31) != 0u)" : "(" + x + " < 0)";
}

[[noreturn]] void bad(const std::string& op, const std::string& what) {
  fail(ErrorKind::InvalidArgument, op + ": " + what);
}

// Integer less-than / equal of exact values, any signedness mix.
std::string int_lt(DType ta, const std::string& a, DType tb, const std::string& b) {
  const bool w = is64(ta) || is64(tb);
  const std::string wa = (is_signed(ta) ? s(w) : u(w)) + "(" + a + ")";
  const std::string wb = (is_signed(tb) ? s(w) : u(w)) + "(" + b + ")";
  if (is_signed(ta) == is_signed(tb)) return "(" + wa + " < " + wb + ")";
  if (is_signed(ta)) return "(" + negative(w, wa) + " || " + u(w) + "(" + wa + ") < " + wb + ")";
  return "(!" + negative(w, wb) + " && " + wa + " < " + u(w) + "(" + wb + "))";
}
std::string int_eq(DType ta, const std::string& a, DType tb, const std::string& b) {
  const bool w = is64(ta) || is64(tb);
  const std::string wa = (is_signed(ta) ? s(w) : u(w)) + "(" + a + ")";
  const std::string wb = (is_signed(tb) ? s(w) : u(w)) + "(" + b + ")";
  if (is_signed(ta) == is_signed(tb)) return "(" + wa + " == " + wb + ")";
  if (is_signed(ta)) return "(!" + negative(w, wa) + " && " + u(w) + "(" + wa + ") == " + wb + ")";
  return "(!" + negative(w, wb) + " && " + wa + " == " + u(w) + "(" + wb + "))";
}

constexpr const char* kTruncHelpers = R"GLSL(
float nx_trunc_f(float x) {
  uint b = floatBitsToUint(x);
  int e = int((b >> 23) & 0xffu) - 127;
  if (e >= 23) return x;
  if (e < 0) return uintBitsToFloat(b & 0x80000000u);
  return uintBitsToFloat(b & ~((1u << uint(23 - e)) - 1u));
}
float nx_floor_f(float x) { float t = nx_trunc_f(x); return nx_lt_f32(x, t) ? t - 1.0 : t; }
float nx_ceil_f(float x) { float t = nx_trunc_f(x); return nx_lt_f32(t, x) ? t + 1.0 : t; }
// C's fmodf in integer code: frexp/ldexp on a device that flushes f32 subnormals (lavapipe,
// NVIDIA) would lose a subnormal divisor and never converge. The result is exact.
float nx_fmod_bits_f32(float x, float y) {
  uint sx = floatBitsToUint(x) & 0x80000000u;
  uint ux = floatBitsToUint(x) & 0x7fffffffu, uy = floatBitsToUint(y) & 0x7fffffffu;
  if (ux >= 0x7f800000u || uy > 0x7f800000u || uy == 0u) return uintBitsToFloat(0x7fc00000u);  // NaN, inf x, y = 0
  if (uy == 0x7f800000u || ux < uy) return x;
  if (ux == uy) return uintBitsToFloat(sx);
  int ex = int(ux >> 23), ey = int(uy >> 23);
  uint mx = ux & 0x7fffffu, my = uy & 0x7fffffu;
  if (ex == 0) { int sh = 23 - findMSB(mx); mx <<= uint(sh); ex = 1 - sh; } else mx |= 0x800000u;
  if (ey == 0) { int sh = 23 - findMSB(my); my <<= uint(sh); ey = 1 - sh; } else my |= 0x800000u;
  for (int n = ex - ey; n > 0; --n) {  // long division, one bit of the quotient per step
    if (mx >= my) mx -= my;
    mx <<= 1u;
  }
  if (mx >= my) mx -= my;
  if (mx == 0u) return uintBitsToFloat(sx);
  int sh = 23 - findMSB(mx);
  mx <<= uint(sh);
  int e = ey - sh;
  if (e >= 1) return uintBitsToFloat(sx | (uint(e) << 23) | (mx & 0x7fffffu));
  return uintBitsToFloat(sx | (mx >> uint(1 - e)));  // subnormal: exact, the low bits are zero
}
)GLSL";
constexpr const char* kTruncHelpersF64 = R"GLSL(
double nx_trunc_d(double x) {
  uvec2 u = unpackDouble2x32(x);
  int e = int((u.y >> 20) & 0x7ffu) - 1023;
  if (e >= 52) return x;
  if (e < 0) return packDouble2x32(uvec2(0u, u.y & 0x80000000u));
  uint drop = uint(52 - e);
  if (drop >= 32u) { u.x = 0u; u.y &= ~((1u << (drop - 32u)) - 1u); }
  else u.x &= ~((1u << drop) - 1u);
  return packDouble2x32(u);
}
double nx_floor_d(double x) { double t = nx_trunc_d(x); return x < t ? t - 1.0lf : t; }
double nx_ceil_d(double x) { double t = nx_trunc_d(x); return x > t ? t + 1.0lf : t; }
)GLSL";

constexpr const char* kHelpersT = R"GLSL(
// Division corrected to (in practice) the correctly rounded quotient: Vulkan allows 2.5 ulp.
$T nx_qdiv_$S($T a, $T b) {
  precise $T q = a / b;
  $T aq = abs(q), ab = abs(b);
  if (isnan(q) || isinf(q) || q == $T(0) || isinf(b) || abs(a) < $SMALL || aq > $BIG || aq < $SMALL || ab > $BIG || ab < $SMALL) return q;
  // Residual a - q*b, exactly (Dekker's product: no fused multiply-add assumed).
  precise $T cq = $SPLIT * q; precise $T qh = cq - (cq - q); precise $T ql = q - qh;
  precise $T cb = $SPLIT * b; precise $T bh = cb - (cb - b); precise $T bl = b - bh;
  precise $T p = q * b;
  precise $T e = ((qh * bh - p) + qh * bl + ql * bh) + ql * bl;
  precise $T r = (a - p) - e;
  precise $T qc = q + r / b;
  return qc;
}
// C's fmod, exactly (each subtraction is exact by Sterbenz's lemma).
$T nx_fmod_$S($T x, $T y) {
  if (isnan(x) || isnan(y) || isinf(x) || y == $T(0)) return $T(0) / $T(0);
  $T ax = abs(x), ay = abs(y);
  if (isinf(y) || ax < ay) return x;
  int ex, ey;
  $T mx = frexp(ax, ex);
  $T my = frexp(ay, ey);
  for (int it = 0; it < 2200 && ax >= ay; ++it) {
    mx = frexp(ax, ex);
    int k = ex - ey;
    if (my > mx) k -= 1;
    precise $T t = ldexp(ay, k);
    ax = ax - t;
  }
  return x < $T(0) ? -ax : ax;
}
)GLSL";

// f32 division correctly rounded, in f32 arithmetic (Vulkan lets a / b be 2.5 ulp off; going
// through f64 costs an f64 division and a double-length residual on every element).
constexpr const char* kDivideResidualF32 = R"GLSL(
// a - q b exactly for q within an ulp of a / b (Dekker's product: no fused multiply-add assumed;
// a - p is exact by Sterbenz's lemma). Further off, it is the residual rounded once.
float nx_div_residual(float a, float b, float q) {
  precise float cq = 4097.0 * q; precise float qh = cq - (cq - q); precise float ql = q - qh;
  precise float cb = 4097.0 * b; precise float bh = cb - (cb - b); precise float bl = b - bh;
  precise float p = q * b;
  precise float e = ((qh * bh - p) + qh * bl + ql * bh) + ql * bl;
  precise float r = (a - p) - e;
  return r;
}
// Whether q is a / b exactly, where the residual is exact (nx_div_rn_f32's ranges, kDivideF32): a
// bf16 quotient or root that is a bf16 value (1, 2, 0.5, ...) sits on a truncation boundary.
bool nx_div_exact_f32(float a, float b, float q) {
  uint ea = (floatBitsToUint(a) >> 23) & 0xffu, eb = (floatBitsToUint(b) >> 23) & 0xffu;
  uint eq = (floatBitsToUint(q) >> 23) & 0xffu;
  return ea - 49u < 192u && eb - 27u < 214u && eq - 47u < 192u && nx_div_residual(a, b, q) == 0.0;
}
)GLSL";
// f32 division, correctly rounded (after kDivideResidualF32).
constexpr const char* kDivideF32 = R"GLSL(
// q = a / b rounded to nearest, for |a| in [2^-78, 2^114), |b| in [2^-100, 2^114) and a first
// quotient in [2^-80, 2^112) (and for a zero a): there every partial product above, and every
// correction that matters, is zero or an f32 normal (devices may flush subnormals) and nothing
// overflows. Elsewhere it returns false and the caller divides another way.
bool nx_div_rn_f32(float a, float b, out float q) {
  uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
  uint ea = (ua >> 23) & 0xffu, eb = (ub >> 23) & 0xffu;
  if ((ua & 0x7fffffffu) == 0u && (ub & 0x7fffffffu) - 1u < 0x7f7fffffu) {  // 0 / finite nonzero
    q = uintBitsToFloat((ua ^ ub) & 0x80000000u);
    return true;
  }
  if (ea - 49u >= 192u || eb - 27u >= 214u) return false;
  float rb = 1.0 / b;
  precise float q0 = a * rb;  // a few ulps off
  if (((floatBitsToUint(q0) >> 23) & 0xffu) - 47u >= 192u) return false;
  precise float c = nx_div_residual(a, b, q0) * rb;  // a / b - q0, to within 2^-18 ulp
  precise float q1 = q0 + c;                          // within an ulp of a / b
  precise float err = c - (q1 - q0);  // q0 + c - q1 exactly (Fast2Sum: c is a few ulps of q0)
  uint bits = floatBitsToUint(q1);
  float hu = uintBitsToFloat((((bits >> 23) & 0xffu) - 24u) << 23);  // ulp(q1) / 2
  // q0 + c more than 2^-14 ulp inside the midpoints around q1 settles it (unless q1 = 2^k,
  // whose lower neighbour is only ulp/2 away): all but about 1 in 8,000 quotients.
  if ((bits & 0x7fffffu) != 0u && abs(err) < hu * 0.9998779296875) {
    q = q1;
    return true;
  }
  float r = nx_div_residual(a, b, q1);  // exact: q1 is within an ulp of a / b
  // a / b = q1 + r / b. Where that lies past the midpoint between q1 and its neighbour on that
  // side, the neighbour is the rounded quotient (no quotient of two floats is a midpoint).
  bool away = r != 0.0 && (r < 0.0) == (a < 0.0);  // |a / b| > |q1|
  float h = abs(b) * hu;                            // |b| ulp(q1) / 2
  if (!away && (bits & 0x7fffffu) == 0u) h *= 0.5;  // q1 = 2^k: the float below is ulp/2 away
  if (abs(r) > h) bits = away ? bits + 1u : bits - 1u;
  q = uintBitsToFloat(bits);
  return true;
}
// a / b on a device without f64: nx_div_rn_f32, else (operands outside its range) the same on
// the significands, scaled back by 2^(ea - eb) where the quotient is an f32 normal (two exact
// steps, each a normal power of two); zeros, infinities, NaN, subnormal operands or results
// take the integer division nx_div_bits_f32.
float nx_div_f32(float a, float b) {
  float q;
  if (nx_div_rn_f32(a, b, q)) return q;
  uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
  int ea = int((ua >> 23) & 0xffu), eb = int((ub >> 23) & 0xffu);
  if (ea == 0 || ea == 255 || eb == 0 || eb == 255) return nx_div_bits_f32(a, b);
  float ma = uintBitsToFloat((ua & 0x807fffffu) | 0x3f800000u), mb = uintBitsToFloat((ub & 0x807fffffu) | 0x3f800000u);
  if (!nx_div_rn_f32(ma, mb, q)) return nx_div_bits_f32(a, b);  // not reached: [1, 2) / [1, 2) is in range
  int k = ea - eb, e = int((floatBitsToUint(q) >> 23) & 0xffu) + k;  // the result's biased exponent
  if (e < 1 || e > 254) return nx_div_bits_f32(a, b);
  int k1 = k / 2, k2 = k - k1;
  precise float r = q * uintBitsToFloat(uint(127 + k1) << 23);
  precise float t = r * uintBitsToFloat(uint(127 + k2) << 23);
  return t;
}
)GLSL";

// `src` with each placeholder replaced, in the order given (longer keys first where one is a
// prefix of another: $SPLIT before $S).
std::string substitute(std::string src, std::initializer_list<std::pair<const char*, std::string>> keys) {
  for (const auto& [from, to] : keys) {
    const std::string f = from;
    for (size_t p = src.find(f); p != std::string::npos; p = src.find(f, p + to.size())) src.replace(p, f.size(), to);
  }
  return src;
}

std::string instantiate(const std::string& t, const std::string& split, const std::string& big,
                        const std::string& small, const std::string& suffix) {
  return substitute(kHelpersT, {{"$SPLIT", split}, {"$BIG", big}, {"$SMALL", small}, {"$S", suffix}, {"$T", t}});
}

std::string fsuffix(const Capabilities& caps) { return caps.float64 ? "f64" : "f32"; }

// ---- Integers wider than the float compute type's significand ----
// Nx computes int-with-float ops on the exact integer (Erlang converts it to a double; comparisons
// are exact). Converting a 32-bit integer to f32 first (devices without f64), or a 64-bit one to
// f64 before comparing, would round it: 16777217 == 16777216.0 would be true, s32 - f32 could
// cancel to 0. Such operands are split into hi + lo, and comparisons go through the integer domain.
constexpr const char* kWideIntHelpers = R"GLSL(
// x = hi + lo exactly, hi = RN(x): the multiple of 256 and the low byte are each exact in f32.
float nx_wide_s32(int x, out float lo) {
  float h = float(x & -256); float l = float(x & 255);
  precise float s = h + l; precise float t = s - h; precise float r = l - t; lo = r; return s;
}
float nx_wide_u32(uint x, out float lo) {
  float h = float(x & 0xffffff00u); float l = float(x & 255u);
  precise float s = h + l; precise float t = s - h; precise float r = l - t; lo = r; return s;
}
float nx_wide_two_sum(float a, float b, out float e) {
  precise float s = a + b; precise float bb = s - a; precise float ea = a - (s - bb); precise float eb = b - bb;
  precise float es = ea + eb; e = es; return s;
}
float nx_wide_split(float a, out float lo) {  // Veltkamp
  precise float c = 4097.0 * a; precise float h = c - (c - a); precise float r = a - h; lo = r; return h;
}
// a b for float-float operands (al, bl small), to within about one rounding.
float nx_wide_mul(float ah, float al, float bh, float bl) {
  precise float p = ah * bh;
  // Far from overflow, and far enough from the subnormal range that no partial product of the
  // split is subnormal (devices may flush those): else the product of the rounded operands,
  // within 1 ulp (subnormals kept).
  if (isnan(p) || isinf(p) || p == 0.0 || abs(ah) > 1.0e30 || abs(bh) > 1.0e30 || abs(p) > 1.0e30 ||
      abs(p) < 1.0e-22 || abs(ah) < 1.0e-28 || abs(bh) < 1.0e-28)
    return nx_mul_f32(ah + al, bh + bl);
  float a1, a0, b1, b0; a1 = nx_wide_split(ah, a0); b1 = nx_wide_split(bh, b0);
  precise float e = ((a1 * b1 - p) + a1 * b0 + a0 * b1) + a0 * b0;
  precise float r = p + (e + (ah * bl + al * bh));
  return r;
}
// a / b for float-float operands: the quotient of the highs, corrected by the exact residual.
float nx_wide_div(float ah, float al, float bh, float bl) {
  precise float q = nx_qdiv_f32(ah, bh);
  if (isnan(q) || isinf(q) || q == 0.0 || abs(q) > 1.0e30 || abs(q) < 1.0e-30 || abs(bh) > 1.0e30 || abs(bh) < 1.0e-30)
    return nx_div_bits_f32(ah + al, bh + bl);  // the rounded operands' quotient (subnormals kept)
  float q1, q0, b1, b0; q1 = nx_wide_split(q, q0); b1 = nx_wide_split(bh, b0);
  precise float p = q * bh;
  precise float e = ((q1 * b1 - p) + q1 * b0 + q0 * b1) + q0 * b0;
  precise float r = (((ah - p) - e) + al) - q * bl;
  precise float qc = q + nx_qdiv_f32(r, bh);
  return qc;
}
)GLSL";
constexpr const char* kWideInt64Helpers = R"GLSL(
float nx_wide_parts(float a, float b, float c, float d, out float lo) {  // a + b + c + d, big to small
  float e1, e2; float s1 = nx_wide_two_sum(a, b, e1); float s2 = nx_wide_two_sum(s1, c, e2);
  precise float t = (e1 + e2) + d; float e3; float s3 = nx_wide_two_sum(s2, t, e3); lo = e3; return s3;
}
// As Erlang's float/1 (which Nx.BinaryBackend applies to the integer): rounded to 53 bits first.
float nx_wide_int53(uvec2 v, bool neg, out float lo) {
  uvec3 k = nx_round_int(v, 53u);
  float l0; float h0 = nx_wide_u32(k.x, l0);
  float hi = nx_wide_parts(float(k.y) * 4294967296.0, h0, l0, 0.0, lo);
  float scale = uintBitsToFloat((127u + k.z) << 23);  // 2^k.z, exact products
  precise float sh = hi * scale; precise float sl = lo * scale;
  precise float nl = -sl; lo = neg ? nl : sl;
  return neg ? -sh : sh;
}
float nx_wide_s64(int64_t x, out float lo) {
  bool neg = (uint(uint64_t(x) >> 32) >> 31) != 0u;
  return nx_wide_int53(nx_u64_bits(neg ? uint64_t(0) - uint64_t(x) : uint64_t(x)), neg, lo);
}
float nx_wide_u64(uint64_t x, out float lo) { return nx_wide_int53(nx_u64_bits(x), false, lo); }
)GLSL";

// Exact comparison of an integer with a float of the compute type $T: -1, 0, 1, or 2 (NaN).
// Through the integer domain: x against floor(f), then the fraction of f.
constexpr const char* kIntFloatCompareT = R"GLSL(
int nx_cmp_$I_$S($X x, $T f) {
  if (isnan(f)) return 2;
  $T fl = nx_floor_$F(f);
  if (fl >= $T($HI)) return -1;
  if (fl < $T($LO)) return 1;
  $X xi = $X(fl);
  if (x != xi) return (x < xi) ? -1 : 1;
  return $SAME ? 0 : -1;
}
)GLSL";

struct WideInt {
  const char* name;  // s32 u32 s64 u64
  const char* glsl;  // its GLSL type
  const char* lo;    // its minimum and 2^bits (or 2^(bits-1)) as float literals
  const char* hi;
  bool is64;
};
constexpr WideInt kWideInts[] = {{"s32", "int", "-2147483648.0", "2147483648.0", false},
                                 {"u32", "uint", "0.0", "4294967296.0", false},
                                 {"s64", "int64_t", "-9223372036854775808.0", "9223372036854775808.0", true},
                                 {"u64", "uint64_t", "0.0", "18446744073709551616.0", true}};

std::string int_float_compare_helpers(const Capabilities& caps) {
  std::string out;
  for (const bool d : {false, true}) {
    if (d && !caps.float64) continue;
    for (const WideInt& w : kWideInts) {
      if (w.is64 && !caps.int64) continue;
      out += substitute(kIntFloatCompareT, {{"$I", w.name},
                                            {"$X", w.glsl},
                                            {"$HI", std::string(w.hi) + (d ? "lf" : "")},
                                            {"$LO", std::string(w.lo) + (d ? "lf" : "")},
                                            {"$SAME", d ? "(f == fl)" : "nx_eq_f32(f, fl)"},
                                            {"$T", d ? "double" : "float"},
                                            {"$S", d ? "f64" : "f32"},
                                            {"$F", d ? "d" : "f"}});
    }
  }
  return out;
}

// x OP y for the float ops that are plain arithmetic or a choice (empty for the others), by the
// GLSL operators (exact where no operand or result is subnormal) or, in f32 (`float_arith`'s
// `ft`), the subnormal-safe helpers (codegen's preamble). NaN wins max/min; on equal values the
// first operand (Erlang's max/min keep it: max(-0.0, 0.0) is -0.0).
std::string plain_arith(BinaryOp op, const std::string& x, const std::string& y) {
  switch (op) {
    case BinaryOp::add: return x + " + " + y;
    case BinaryOp::subtract: return x + " - " + y;
    case BinaryOp::multiply: return x + " * " + y;
    case BinaryOp::max: return "(isnan(" + x + ") || isnan(" + y + ")) ? " + x + " + " + y + " : ((" + x + " < " + y + ") ? " + y + " : " + x + ")";
    case BinaryOp::min: return "(isnan(" + x + ") || isnan(" + y + ")) ? " + x + " + " + y + " : ((" + y + " < " + x + ") ? " + y + " : " + x + ")";
    default: return "";
  }
}
std::string float_arith(BinaryOp op, const std::string& ft, const std::string& x, const std::string& y) {
  if (ft != "float") return plain_arith(op, x, y);
  const char* f = op == BinaryOp::add ? "nx_add_f32" : op == BinaryOp::subtract ? "nx_sub_f32"
                  : op == BinaryOp::multiply ? "nx_mul_f32" : op == BinaryOp::max ? "nx_max_f32"
                  : op == BinaryOp::min ? "nx_min_f32" : nullptr;
  return f ? std::string(f) + "(" + x + ", " + y + ")" : "";
}

// Every value of the type is an f32 value (f16, bf16, f32, integers of at most 16 bits).
bool f32_exact(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16 || type_info(t).bits <= 16; }
// Every value of the type is a multiple of 2^-24 below 2^17 (f16, the 8-bit floats, integers of
// at most 16 bits): f16's grid, on which sums, differences, products and quotients are zero or
// normal f32 values.
bool on_f16_grid(DType t) { return t == DType::F16 || (t != DType::BF16 && type_info(t).bits <= 16); }
// Whether add, subtract, multiply, divide, max and min computed in f32 and rounded (or, for bf16,
// truncated as Nx writes it) to `out` give the bits of rounding the exact result once, as Nx
// does (it computes in f64): f32 and bf16 outputs of f32 values (53 >= 2*24 + 2: the f64
// result's f32 rounding is the exact one's); f16 outputs where both operands have at most 11
// significant bits (24 >= 2*11 + 2: rounding twice is then innocuous, Figueroa 1995).
bool f32_arith_rounds_once(DType out, DType ta, DType tb) {
  if (out == DType::F32 || out == DType::BF16) return f32_exact(ta) && f32_exact(tb);
  auto half_precise = [](DType t) { return t == DType::F16 || t == DType::BF16 || type_info(t).bits <= 8; };
  return out == DType::F16 && half_precise(ta) && half_precise(tb);
}
// Float types whose values a kernel holds in a float (value_type "float"): also the result
// formats the plain-double math fast paths round to (math_fast_f32_glsl's `out`).
bool held_in_f32(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }
std::string to_f32(const Capabilities& caps, DType t, const std::string& x) { return gen::convert(caps, t, DType::F32, x); }

// The integer type's values are not all exact in the float compute type.
bool wide_int(const Capabilities& caps, DType t) {
  if (is_float(t)) return false;
  const uint32_t significand = caps.float64 ? 53 : 24;
  return type_info(t).bits - (is_signed(t) ? 1u : 0u) > significand;
}
const char* wide_name(DType t) {
  switch (t) {
    case DType::S32: return "s32";
    case DType::U32: return "u32";
    case DType::S64: return "s64";
    case DType::U64: return "u64";
    default: fail(ErrorKind::Internal, "wide_name: not a wide integer type");
  }
}

// The fast f32 math mode's body (unary_body's and binary_body's): nx_NAME_ulp1_f32(args), f32
// arithmetic within 1 ulp; the few inputs it leaves (NaN, the ends of the domain) to the exact
// function, `slow` (in f64 where the device has it).
Body ulp1_body(const Capabilities& caps, const std::string& name, const std::string& args, uint32_t table_binding,
               std::string slow) {
  Body body{"float v; bool slow = !nx_" + name + "_ulp1_f32(" + args + ", v);", "float"};
  body.functions = gen::math_ulp1_f32_glsl(table_binding, caps, name);
  body.setup = gen::math_ulp1_f32_setup(name);
  body.table = gen::math_ulp1_f32_table(name);
  body.slow = std::move(slow);
  return body;
}

// f16 and bf16 results of the math functions from the fast f32 functions (nx_NAME_ulp1_f32, each
// within 1.5 f32 ulps of the exact value: docs/CAPABILITIES.md), in f32 arithmetic, where f32
// results' fast paths take f64 (1/2 of the f32 rate on Hopper, 1/32 or 1/64 on most other GPUs).
// The f32 value y settles the result wherever Nx's result of the exact value (and of the accurate
// f64 function, whose bits Nx writes) is the one y gives:
// - f16 keeps 11 bits of the 24 and rounds to nearest: y settles where no f16 halfway point lies
//   within one f32 ulp of y (both are f32 values, so one between y and the exact value would be
//   at most an ulp from y). nx_f16_settles tests that on the bits rounding drops
//   (nx_f16_dropped_bits: 13 in f16's normal range, more in its subnormal one; from 2^-26 down y
//   rounds to zero, from 2^16 up to inf).
// - bf16 is the upper half of Nx's f32 rounding (truncation), which lies within 2 f32 ulps of y:
//   y settles where no bf16 value lies within 4 f32 steps of y (ulps halve below a power of 2), as
//   a normal f32 (subnormal results may be flushed in f32 code). Results that are bf16 values
//   themselves (saturation at 1 or 0, sin x = x for tiny x) are therefore left: unary_body
//   settles those of known inputs by gen::math_bf16_fixed_results.
// The few results left (about 3 in 8192 for f16, 1 in 8192 for bf16 outside those) and operands
// that are zero or f32 subnormals (which a device may flush inside the f32 code) take the accurate
// f64 function, rounded as Nx rounds it.
constexpr const char* kNarrowSettles = R"GLSL(
bool nx_f16_settles_within(float y, uint steps) {
  uint a = floatBitsToUint(y) & 0x7fffffffu;
  if (a >= 0x47800000u) return a < 0x7f800000u;  // [2^16, inf) rounds to inf; inf and NaN left
  uint halfway = 1u << (nx_f16_dropped_bits(a) - 1u);
  uint d = ((a & 0x7fffffu) | 0x800000u) & ((halfway << 1) - 1u);
  return d - halfway + steps > 2u * steps;  // not within `steps` f32 ulps of the halfway point
}
bool nx_f16_settles(float y) { return nx_f16_settles_within(y, 1u); }
bool nx_bf16_settles_within(float y, uint steps) {
  uint a = floatBitsToUint(y) & 0x7fffffffu;
  return a >= 0x00800000u && a < 0x7f800000u && ((a + steps) & 0xffffu) > 2u * steps;
}
bool nx_bf16_settles(float y) { return nx_bf16_settles_within(y, 4u); }
bool nx_normal_operand_f32(float x) { return (floatBitsToUint(x) & 0x7f800000u) != 0u; }
// Vulkan bounds a division's error (2.5 ulps) for divisors in [2^-126, 2^126] only.
bool nx_divisor_in_range_f32(float b) { return ((floatBitsToUint(b) >> 23) & 0xffu) - 1u < 252u; }
)GLSL";
// The slow statement of an f16 or bf16 body: the accurate f64 value `accurate` rounded as Nx
// rounds it (to f16 directly: through f32 it would differ next to f16's halfway points; to f32,
// then truncated by the store, for bf16).
std::string narrow_rounded(DType out, const std::string& accurate) {
  return out == DType::F16 ? "v = nx_half_to_float(nx_double_to_half(" + accurate + "));"
                           : "v = nx_double_to_float(" + accurate + ");";
}
Body narrow_ulp1_body(const Capabilities& caps, const std::string& name, DType out,
                      const std::vector<std::string>& operands, uint32_t table_binding,
                      const std::string& accurate) {
  std::string args, normal;
  for (const std::string& x : operands) {
    args += (args.empty() ? "" : ", ") + x;
    normal += "nx_normal_operand_f32(" + x + ") && ";
  }
  const bool f16 = out == DType::F16;
  Body body = ulp1_body(caps, name, args, table_binding, narrow_rounded(out, accurate));
  body.statements = "float v; bool slow = !(" + normal + "nx_" + name + "_ulp1_f32(" + args + ", v) && nx_" +
                    (f16 ? "f16" : "bf16") + "_settles(v));";
  body.functions += kNarrowSettles;
  return body;
}

// A built-in f32 operation whose error Vulkan bounds but does not make zero (division, sqrt),
// for the f16 and bf16 bodies that settle their results around it. NX_VULKAN_TEST_BUILTIN_ERROR=1
// (tests only) moves its result by -steps..steps f32 steps, by element index: as far off as
// Vulkan lets it be, on a device where it is correctly rounded (lavapipe), so that the tests see
// the settle margins hold.
std::string builtin_f32(Body& body, const std::string& expr, int steps) {
  const char* test_error = std::getenv("NX_VULKAN_TEST_BUILTIN_ERROR");
  if (!test_error || std::string_view(test_error) != "1") return expr;
  const std::string off = "nx_test_steps_off";
  if (body.functions.find(off) == std::string::npos)
    body.functions += "float " + off + "(float q, int k) { uint a = floatBitsToUint(q) & 0x7fffffffu; "
                      "return a >= 16u && a < 0x7f7ffff0u ? uintBitsToFloat(uint(int(floatBitsToUint(q)) + k)) : q; }\n";
  return off + "(" + expr + ", int(i % " + std::to_string(2 * steps + 1) + "u) - " + std::to_string(steps) + ")";
}

}  // namespace

std::string helpers(const Capabilities& caps) {
  std::string h = std::string(kTruncHelpers) + (caps.float64 ? kTruncHelpersF64 : "");
  h += instantiate("float", "4097.0", "1.0e30", "1.0e-30", "f32");
  if (caps.float64) h += instantiate("double", "134217729.0lf", "1.0e290lf", "1.0e-290lf", "f64");
  if (!caps.float64) h += kWideIntHelpers;
  if (!caps.float64 && caps.int64) h += kWideInt64Helpers;
  return h + int_float_compare_helpers(caps);
}

DType float_compute_dtype(const Capabilities& caps) { return caps.float64 ? DType::F64 : DType::F32; }

std::string to_compute(const Capabilities& caps, DType t, const std::string& x) {
  return gen::convert(caps, t, float_compute_dtype(caps), x);
}

std::string compare(const Capabilities& caps, BinaryOp op, DType ta, const std::string& a, DType tb,
                    const std::string& b) {
  if (wide_int(caps, ta) != wide_int(caps, tb) && (is_float(ta) || is_float(tb))) {
    // c = the integer operand compared with the float one; from a's side when a is the integer.
    const bool a_int = wide_int(caps, ta);
    const DType ti = a_int ? ta : tb, tf = a_int ? tb : ta;
    const std::string c = "nx_cmp_" + std::string(wide_name(ti)) + "_" + fsuffix(caps) + "(" +
                          (a_int ? a : b) + ", " + to_compute(caps, tf, a_int ? b : a) + ")";
    const std::string lt = a_int ? "-1" : "1", gt = a_int ? "1" : "-1";
    switch (op) {
      case BinaryOp::equal: return "(" + c + " == 0)";
      case BinaryOp::not_equal: return "(" + c + " != 0)";
      case BinaryOp::greater: return "(" + c + " == " + gt + ")";
      case BinaryOp::less: return "(" + c + " == " + lt + ")";
      case BinaryOp::greater_equal: return "(" + c + " == 0 || " + c + " == " + gt + ")";
      case BinaryOp::less_equal: return "(" + c + " == 0 || " + c + " == " + lt + ")";
      default: break;
    }
  }
  if (is_float(ta) || is_float(tb)) {
    const std::string fa = to_compute(caps, ta, a), fb = to_compute(caps, tb, b);
    // In f32 (no f64) by the subnormal-safe helpers (codegen's preamble); doubles compare exactly.
    const bool f32 = !caps.float64;
    auto rel = [&](const char* helper, const char* op_symbol, const std::string& x, const std::string& y) {
      return f32 ? std::string(helper) + "(" + x + ", " + y + ")" : "(" + x + " " + op_symbol + " " + y + ")";
    };
    switch (op) {
      case BinaryOp::equal: return rel("nx_eq_f32", "==", fa, fb);
      case BinaryOp::not_equal: return "!" + rel("nx_eq_f32", "==", fa, fb);
      case BinaryOp::greater: return rel("nx_lt_f32", "<", fb, fa);
      case BinaryOp::less: return rel("nx_lt_f32", "<", fa, fb);
      case BinaryOp::greater_equal: return rel("nx_le_f32", "<=", fb, fa);
      case BinaryOp::less_equal: return rel("nx_le_f32", "<=", fa, fb);
      default: break;
    }
  } else {
    switch (op) {
      case BinaryOp::equal: return int_eq(ta, a, tb, b);
      case BinaryOp::not_equal: return "!" + int_eq(ta, a, tb, b);
      case BinaryOp::greater: return int_lt(tb, b, ta, a);
      case BinaryOp::less: return int_lt(ta, a, tb, b);
      case BinaryOp::greater_equal: return "!" + int_lt(ta, a, tb, b);
      case BinaryOp::less_equal: return "!" + int_lt(tb, b, ta, a);
      default: break;
    }
  }
  fail(ErrorKind::Internal, "compare: not a comparison");
}

Body binary_body(const Capabilities& caps, BinaryOp op, DType ta, DType tb, DType out) {
  const std::string name = op_name(op);
  const std::string ft = gen::float_compute_type(caps);
  const std::string sfx = fsuffix(caps);
  const bool any_float = is_float(ta) || is_float(tb);
  switch (op) {
    case BinaryOp::equal: case BinaryOp::not_equal: case BinaryOp::greater: case BinaryOp::less:
    case BinaryOp::greater_equal: case BinaryOp::less_equal:
      return {"uint v = " + compare(caps, op, ta, "a", tb, "b") + " ? 1u : 0u;", "uint"};
    case BinaryOp::logical_and: return {"uint v = (" + gen::nonzero(ta, "a") + " && " + gen::nonzero(tb, "b") + ") ? 1u : 0u;", "uint"};
    case BinaryOp::logical_or: return {"uint v = (" + gen::nonzero(ta, "a") + " || " + gen::nonzero(tb, "b") + ") ? 1u : 0u;", "uint"};
    case BinaryOp::logical_xor: return {"uint v = (" + gen::nonzero(ta, "a") + " != " + gen::nonzero(tb, "b") + ") ? 1u : 0u;", "uint"};
    default: break;
  }
  const bool wide_arith = !caps.float64 && (wide_int(caps, ta) || wide_int(caps, tb)) &&
                          (op == BinaryOp::add || op == BinaryOp::subtract || op == BinaryOp::multiply ||
                           op == BinaryOp::divide);
  if (op == BinaryOp::divide && caps.float64 &&
      (out == DType::F16 ? on_f16_grid(ta) && on_f16_grid(tb) : out == DType::BF16 && f32_exact(ta) && f32_exact(tb))) {
    // f16 quotients of operands on f16's grid, bf16 quotients of f32 values: the device's
    // division (within 2.5 ulps of the quotient: Vulkan, for divisors in [2^-126, 2^126]) gives
    // Nx's bits wherever no f16 halfway point lies within 5 f32 ulps of it (ulps halve below a
    // power of 2), or no bf16 value within 6 f32 steps (Nx's f32 rounding is within 3 ulps, and
    // truncated); the rest (about 1 in 800 f16 results, 1 in 5000 bf16 ones, and subnormal bf16
    // results) and divisors out of that range by the correctly rounded f32 quotient below (f16
    // rounding it again is innocuous: f32_arith_rounds_once).
    const std::string fa = to_f32(caps, ta, "a"), fb = to_f32(caps, tb, "b");
    const std::string settles = out == DType::F16 ? "nx_f16_settles_within(v, 5u)" : "nx_bf16_settles_within(v, 6u)";
    Body body{"", "float"};
    body.functions = std::string(kDivideResidualF32) + kDivideF32 + kNarrowSettles;
    body.statements = "float fa = " + fa + "; float fb = " + fb + "; precise float v = " + builtin_f32(body, "fa / fb", 2) +
                      "; bool slow = !(nx_divisor_in_range_f32(fb) && " + settles + ");" +
                      (out == DType::BF16 ? " if (slow) slow = !nx_div_exact_f32(fa, fb, v);" : "");
    body.slow = "if (!nx_div_rn_f32(fa, fb, v)) v = nx_double_to_float(nx_qdiv_f64(nx_f32_to_f64(fa), nx_f32_to_f64(fb)));";
    return body;
  }
  if (op == BinaryOp::divide &&
      (caps.float64 ? f32_arith_rounds_once(out, ta, tb) : out == DType::F32 && !wide_arith)) {
    // Both operands are exact f32 values: divide in f32 (kDivideF32), the same bits as rounding
    // the exact quotient once (f16 and bf16 outputs: f32_arith_rounds_once). Out of its range:
    // the f64 path, or nx_div_f32 without f64.
    // With f64 the rare fallback is a slow statement: kernels run it once, after the lanes.
    const std::string fa = to_f32(caps, ta, "a"), fb = to_f32(caps, tb, "b");
    Body body{"float fa = " + fa + "; float fb = " + fb + "; float v" +
                  (caps.float64 ? "; bool slow = !nx_div_rn_f32(fa, fb, v);" : " = nx_div_f32(fa, fb);"),
              "float"};
    if (caps.float64) body.slow = "v = nx_double_to_float(nx_qdiv_f64(nx_f32_to_f64(fa), nx_f32_to_f64(fb)));";
    body.functions = std::string(kDivideResidualF32) + kDivideF32;
    return body;
  }
  // NX_VULKAN_F32_MATH is read (and checked) for the f32 math functions, atan2 and pow.
  const bool fast_mode =
      out == DType::F32 && (op == BinaryOp::atan2 || op == BinaryOp::pow) && gen::f32_math_fast(name);
  if (fast_mode && ta == DType::F32 && tb == DType::F32 && gen::has_math_ulp1_f32(name)) {
    Body body = ulp1_body(caps, name, "a, b", kBinaryTableBinding,
                          caps.float64 ? "v = nx_double_to_float(nx_" + name + "(nx_f32_to_f64(a), nx_f32_to_f64(b)));"
                                       : "v = nx_" + name + "_f32(a, b);");
    body.statements += " " + gen::math_special_f32(name, "a", "b");
    return body;
  }
  if (caps.float64 && (out == DType::F16 || out == DType::BF16) && f32_exact(ta) && f32_exact(tb) &&
      gen::has_math_ulp1_f32(name)) {
    // As unary_body's f16 and bf16 results: the fast f32 function where its rounding settles.
    Body body = narrow_ulp1_body(caps, name, out, {"fa", "fb"}, kBinaryTableBinding,
                              "nx_" + name + "(nx_f32_to_f64(fa), nx_f32_to_f64(fb))");
    body.statements = "float fa = " + to_f32(caps, ta, "a") + "; float fb = " + to_f32(caps, tb, "b") + "; " +
                      body.statements + " " + gen::math_special_f32(name, "fa", "fb");
    return body;
  }
  if (caps.float64 && held_in_f32(out) && f32_exact(ta) && f32_exact(tb) && gen::has_math_fast_f32(name)) {
    // As unary_body's fast path: f32 operands, subnormals flushed, to the plain-double fast path
    // (which leaves zero and subnormal operands unsettled); the accurate function, the operands
    // widened exactly, for the lanes it leaves.
    const std::string fa = to_f32(caps, ta, "a"), fb = to_f32(caps, tb, "b");
    Body body{"float fa = " + fa + "; float fb = " + fb + "; float v; bool slow = !nx_" + name +
                  "_fast_f32(double(nx_ftz_f32(fa)), double(nx_ftz_f32(fb)), v); " +
                  gen::math_special_f32(name, "fa", "fb"),
              "float"};
    body.functions = gen::math_fast_f32_glsl(kBinaryTableBinding, out);
    body.slow = "v = nx_round_out(nx_" + name + "(nx_f32_to_f64(fa), nx_f32_to_f64(fb)));";
    body.setup = gen::math_fast_f32_setup(name);
    body.table = gen::math_fast_f32_table(name);
    return body;
  }
  if (caps.float64 && f32_arith_rounds_once(out, ta, tb) && !float_arith(op, "float", "", "").empty()) {
    // Both operands are exact f32 values: f32 add/sub/mul are correctly rounded (Vulkan), and
    // rounding through f64 first would give the same bits (53 >= 2*24 + 2), so compute in f32,
    // by the helpers that keep subnormals (f16 and bf16 outputs: f32_arith_rounds_once).
    // Operands on f16's grid (multiples of 2^-24 below 2^17: f16, the 8-bit floats, integers of
    // at most 16 bits) have sums, differences and products that are zero or normal f32 values,
    // which no device flushes: the plain operators give the helpers' bits, without their checks.
    const bool plain = on_f16_grid(ta) && on_f16_grid(tb) &&
                       (op == BinaryOp::add || op == BinaryOp::subtract || op == BinaryOp::multiply);
    const std::string fa = to_f32(caps, ta, "a"), fb = to_f32(caps, tb, "b");
    return {"float fa = " + fa + "; float fb = " + fb + "; " + (plain ? "precise " : "") + "float v = " +
                (plain ? plain_arith(op, "fa", "fb") : float_arith(op, "float", "fa", "fb")) + ";",
            "float"};
  }
  if (is_float(out) && wide_arith) {
    // f32 compute with an integer operand beyond 2^24: hi + lo operands (kWideIntHelpers).
    auto operand = [&](DType t, const std::string& x, const std::string& n) {
      if (!wide_int(caps, t)) return std::string("float ") + n + "h = " + to_compute(caps, t, x) + "; float " + n + "l = 0.0;\n      ";
      return std::string("float ") + n + "l; float " + n + "h = nx_wide_" + wide_name(t) + "(" + x + ", " + n + "l);\n      ";
    };
    std::string pre = operand(ta, "a", "a") + operand(tb, "b", "b");
    std::string e;
    switch (op) {
      case BinaryOp::add: case BinaryOp::subtract: {
        const std::string sg = op == BinaryOp::add ? "" : "-";
        pre += "float se; float s0 = nx_wide_two_sum(ah, " + sg + "bh, se);\n      ";
        e = std::string("isinf(s0) || isnan(s0) ? s0 : s0 + (se + (al ") + (sg.empty() ? "+" : "-") + " bl))";
        break;
      }
      case BinaryOp::multiply: e = "nx_wide_mul(ah, al, bh, bl)"; break;
      default: e = "nx_wide_div(ah, al, bh, bl)"; break;
    }
    return {pre + "precise float v = " + e + ";", "float"};
  }
  if (is_float(out)) {
    const std::string pre = ft + " fa = " + to_compute(caps, ta, "a") + "; " + ft + " fb = " + to_compute(caps, tb, "b") + ";\n      ";
    std::string e = float_arith(op, ft, "fa", "fb");
    switch (op) {
      case BinaryOp::add: case BinaryOp::subtract: case BinaryOp::multiply: case BinaryOp::max: case BinaryOp::min: break;
      // Without f64: correctly rounded in f32, so also right for f16 and bf16 outputs (24 >= 2*11 + 2).
      case BinaryOp::divide: e = caps.float64 ? "nx_qdiv_f64(fa, fb)" : "nx_div_f32(fa, fb)"; break;
      case BinaryOp::remainder: e = (sfx == "f32" ? "nx_fmod_bits_f32" : "nx_fmod_" + sfx) + "(fa, fb)"; break;
      case BinaryOp::pow: e = caps.float64 ? "nx_pow(fa, fb)" : "nx_pow_f32(fa, fb)"; break;
      case BinaryOp::atan2: e = caps.float64 ? "nx_atan2(fa, fb)" : "nx_atan2_f32(fa, fb)"; break;
      default: bad(name, std::string("integer-only op given float output type ") + type_name(out));
    }
    Body body{pre + "precise " + ft + " v = " + e + ";", ft, op == BinaryOp::pow || op == BinaryOp::atan2};
    if (op == BinaryOp::divide && !caps.float64) body.functions = std::string(kDivideResidualF32) + kDivideF32;
    return body;
  }
  if (any_float)
    bad(name, std::string("output type ") + type_name(out) + " is an integer type but an operand is a float (" +
                  type_name(ta) + ", " + type_name(tb) + ")");
  if (op == BinaryOp::divide || op == BinaryOp::atan2)
    bad(name, std::string("the output type must be a float type, got ") + type_name(out));
  const std::string ht = gen::value_type(out);
  const bool w = is64(out);
  const std::string ut = u(w), it = s(w);
  const std::string bits = std::to_string(type_info(out).bits);
  const std::string A = gen::convert(caps, ta, out, "a"), B = gen::convert(caps, tb, out, "b");
  std::string pre = ht + " A = " + A + "; " + ht + " B = " + B + ";\n      ";
  // Sign and magnitude of the exact operand values, in the unsigned type of the output's width.
  const std::string mag =
      std::string("bool na = ") + (is_signed(ta) ? negative(w, "A") : "false") + "; bool nb = " +
      (is_signed(tb) ? negative(w, "B") : "false") + ";\n      " + ut + " ma = na ? " + ut + "(0) - " + ut +
      "(A) : " + ut + "(A); " + ut + " mb = nb ? " + ut + "(0) - " + ut + "(B) : " + ut + "(B);\n      ";
  // B is a shift count out of range: negative (exact value) or >= the output's width.
  const std::string count_over = std::string("(") + (is_signed(tb) ? negative(w, "B") + " || " : "") + ut +
                                 "(B) >= " + ut + "(" + bits + ")";
  switch (op) {
    case BinaryOp::add: return {pre + ht + " v = A + B;", ht};
    case BinaryOp::subtract: return {pre + ht + " v = A - B;", ht};
    case BinaryOp::multiply: return {pre + ht + " v = A * B;", ht};
    case BinaryOp::bitwise_and: return {pre + ht + " v = A & B;", ht};
    case BinaryOp::bitwise_or: return {pre + ht + " v = A | B;", ht};
    case BinaryOp::bitwise_xor: return {pre + ht + " v = A ^ B;", ht};
    case BinaryOp::quotient:
      return {pre + mag + ht + " v = (mb == " + ut + "(0)) ? " + ht + "(" + ut + "(0) - " + ut + "(1)) : " + ht +
                  "((na != nb) ? " + ut + "(0) - ma / mb : ma / mb);",
              ht};
    case BinaryOp::remainder:
      return {pre + mag + ht + " v = (mb == " + ut + "(0)) ? A : " + ht + "(na ? " + ut + "(0) - ma % mb : ma % mb);", ht};
    case BinaryOp::max:
      return {pre + ht + " v = " + int_lt(ta, "a", tb, "b") + " ? B : A;", ht};
    case BinaryOp::min:
      return {pre + ht + " v = " + int_lt(tb, "b", ta, "a") + " ? B : A;", ht};
    case BinaryOp::left_shift:
      return {pre + ht + " v = " + count_over + ") ? " + ht + "(0) : " + ht + "(" + ut + "(A) << " + ut + "(B));", ht};
    case BinaryOp::right_shift:
      if (is_signed(ta))
        return {pre + ht + " v = " + count_over + ") ? (" + negative(w, "A") + " ? " + ht + "(-1) : " + ht +
                    "(0)) : " + ht + "(" + it + "(A) >> " + ut + "(B));",
                ht};
      return {pre + ht + " v = " + count_over + ") ? " + ht + "(0) : " + ht + "(" + ut + "(A) >> " + ut + "(B));", ht};
    case BinaryOp::pow: {
      std::string neg_b = is_signed(tb) ? negative(w, "B") : "false";
      return {pre + ht + " v = " + ht + "(1);\n      if (" + neg_b + ") {\n        v = (A == " + ht + "(1)) ? " + ht +
                  "(1) : ((" + (is_signed(ta) ? it + "(A) == " + it + "(-1)" : std::string("false")) + ") ? ((" + ut + "(B) & " + ut + "(1)) != " + ut + "(0) ? " + ht +
                  "(" + it + "(-1)) : " + ht + "(1)) : " + ht + "(0));\n      } else {\n        " + ht + " base = A; " + ut +
                  " e = " + ut + "(B);\n        for (int k = 0; k < 64 && e != " + ut + "(0); ++k) { if ((e & " + ut +
                  "(1)) != " + ut + "(0)) v *= base; base *= base; e >>= 1; }\n      }",
              ht};
    }
    default: break;
  }
  fail(ErrorKind::Internal, name + ": no integer form");
}

bool is_float_op(UnaryOp op) {
  switch (op) {
#define NXVK_FLOAT_OP(n) case UnaryOp::n:
    NXVK_FLOAT_OP(exp) NXVK_FLOAT_OP(expm1) NXVK_FLOAT_OP(log) NXVK_FLOAT_OP(log1p) NXVK_FLOAT_OP(sigmoid)
    NXVK_FLOAT_OP(cos) NXVK_FLOAT_OP(sin) NXVK_FLOAT_OP(tan) NXVK_FLOAT_OP(cosh) NXVK_FLOAT_OP(sinh)
    NXVK_FLOAT_OP(tanh) NXVK_FLOAT_OP(acos) NXVK_FLOAT_OP(asin) NXVK_FLOAT_OP(atan) NXVK_FLOAT_OP(acosh)
    NXVK_FLOAT_OP(asinh) NXVK_FLOAT_OP(atanh) NXVK_FLOAT_OP(sqrt) NXVK_FLOAT_OP(rsqrt) NXVK_FLOAT_OP(cbrt)
    NXVK_FLOAT_OP(erf) NXVK_FLOAT_OP(erfc) NXVK_FLOAT_OP(erf_inv)
#undef NXVK_FLOAT_OP
      return true;
    default: return false;
  }
}

Body unary_body(const Capabilities& caps, UnaryOp op, DType t, DType out) {
  const std::string name = op_name(op);
  const std::string ft = gen::float_compute_type(caps);
  const std::string ht = gen::value_type(t);
  if (is_float_op(op)) {
    if (!is_float(out)) bad(name, std::string("the output type must be a float type, got ") + type_name(out));
    // NX_VULKAN_F32_MATH is read (and checked) for every f32 math function.
    const bool fast_mode = t == DType::F32 && out == DType::F32 && gen::f32_math_fast(name);
    // Every body below whose input is held in f32 (f32, f16, bf16) settles the inputs with fixed
    // results (NaN, zeros, infinities, outside the domain) where its fast path leaves them:
    // gen::math_special_f32.
    const std::string special = held_in_f32(t) ? gen::math_special_f32(name) : std::string();
    if (fast_mode && gen::has_math_ulp1_f32(name)) {
      Body body = ulp1_body(caps, name, "a", kUnaryTableBinding,
                            caps.float64 ? "v = nx_double_to_float(nx_" + name + "(" + to_compute(caps, t, "a") + "));"
                                         : "v = nx_" + name + "_f32(a);");
      body.statements += " " + special;
      return body;
    }
    if (caps.float64 && (out == DType::F16 || out == DType::BF16) && held_in_f32(t) && gen::has_math_ulp1_f32(name)) {
      Body body = narrow_ulp1_body(caps, name, out, {"a"}, kUnaryTableBinding,
                                   "nx_" + name + "(" + to_compute(caps, t, "a") + ")");
      body.statements += " " + special;
      if (out == DType::BF16) body.statements += " " + gen::math_bf16_fixed_results(name);
      return body;
    }
    if (caps.float64 && op == UnaryOp::sqrt && (out == DType::F16 || out == DType::BF16) && held_in_f32(t)) {
      // f16 and bf16 square roots from the device's f32 sqrt (Vulkan: inherited from 1 /
      // inversesqrt, under 5 ulps), settled as the divide's: no f16 halfway point, or bf16 value,
      // within 12 f32 steps of it, or an exact bf16 root (a zero residual x - v v: 4, 2.25); the
      // rest and subnormal inputs by the accurate f64 sqrt, rounded as Nx rounds it.
      const bool f16 = out == DType::F16;
      const std::string accurate = "nx_sqrt(" + to_compute(caps, t, "a") + ")";
      Body body{"", "float"};
      body.functions = std::string(kDivideResidualF32) + kNarrowSettles;
      body.statements = "float v = " + builtin_f32(body, "sqrt(a)", 4) + "; bool slow = !(nx_normal_operand_f32(a) && nx_" +
                        (f16 ? "f16" : "bf16") + "_settles_within(v, 12u));" +
                        (f16 ? "" : " if (slow && nx_normal_operand_f32(a)) slow = !nx_div_exact_f32(a, v, v);") + " " + special;
      body.slow = narrow_rounded(out, accurate);
      return body;
    }
    if (t == DType::F32 && out == DType::F32 && gen::use_math_ff_f32(caps, name)) {
      // The fast path in f32 arithmetic, correctly rounded where it settles (nearly every input);
      // the rest by the accurate f64 function where the device has f64, else the f32 library's.
      // A function that settles all needs neither, so its kernel has no f64 at all: its lanes run
      // the first stage and the function's remainder is deferred to those that stage leaves.
      const bool settles_all = gen::math_ff_f32_settles_all(name);
      const std::string first = settles_all ? gen::math_ff_f32_first_stage(name) : "nx_" + name + "_ff_f32";
      Capabilities kernel_caps = caps;
      if (settles_all) kernel_caps.float64 = false;
      Body body{"float v; bool slow = !" + first + "(a, v); " + special, "float"};
      body.functions = gen::math_ff_f32_glsl(kUnaryTableBinding, kernel_caps);
      body.slow = settles_all     ? "nx_" + name + "_ff_f32(a, v);"
                  : caps.float64 ? "double fx = " + to_compute(caps, t, "a") + "; v = nx_double_to_float(nx_" + name + "(fx));"
                                 : "v = nx_" + name + "_f32(a);";
      body.setup = gen::math_ff_f32_setup(name);
      body.table = gen::math_ff_f32_table(name);
      body.without_f64 = settles_all;
      return body;
    }
    if (caps.float64 && held_in_f32(out) && gen::has_math_fast_f32(name)) {
      // The fast path per lane; the accurate function (large: dd, or glibc's code for sigmoid)
      // only for the lanes it leaves unsettled. An input held in f32 reaches the fast path with
      // f32 subnormals flushed to zero (nx_ftz_f32: what NVIDIA's double(a) does, made the same on
      // every device), which leaves every fast function's result right: f(0) is then either
      // f(subnormal) rounded (exp, cos, cosh, erfc: 1) or not a normal f32, which the fast path
      // leaves unsettled, and the accurate function widens the input exactly. f16 and bf16
      // results round the same approximation to their format (math_fast_f32_glsl's `out`).
      const std::string exact = to_compute(caps, t, "a");
      const std::string widen = held_in_f32(t) ? "double(nx_ftz_f32(a))" : exact;
      Body body{"double fx = " + widen + "; float v; bool slow = !nx_" + name + "_fast_f32(fx, v); " + special,
                "float"};
      body.functions = gen::math_fast_f32_glsl(kUnaryTableBinding, out);
      body.slow = "v = nx_round_out(nx_" + name + "(" + exact + "));";
      body.setup = gen::math_fast_f32_setup(name);
      body.table = gen::math_fast_f32_table(name);
      return body;
    }
    const std::string fn = !caps.float64 ? "nx_" + name + "_f32"
                           : out == DType::F64 ? gen::math_f64_function(name)
                                               : "nx_" + name;
    return {ft + " fx = " + to_compute(caps, t, "a") + "; " + ft + " v = " + fn + "(fx);", ft, true};
  }
  switch (op) {
    case UnaryOp::is_nan:
      return {std::string("uint v = ") + (is_float(t) ? "isnan(a) ? 1u : 0u;" : "0u;"), "uint"};
    case UnaryOp::is_infinity:
      return {std::string("uint v = ") + (is_float(t) ? "isinf(a) ? 1u : 0u;" : "0u;"), "uint"};
    case UnaryOp::real: {
      const std::string vt = gen::value_type(out);
      return {vt + " v = " + gen::convert(caps, t, out, "a") + ";", vt};
    }
    case UnaryOp::imag: {
      const std::string vt = gen::value_type(out);
      return {vt + " v = " + vt + "(0);", vt};
    }
    case UnaryOp::conjugate:
      fail(ErrorKind::Unsupported, "conjugate: complex types are not supported yet");
    default: break;
  }
  if (out != t)
    bad(name, std::string("the output type must be the input type ") + type_name(t) + ", got " + type_name(out));
  const std::string z = ht + "(0)";
  const std::string fs = t == DType::F64 ? "d" : "f";
  if (ht == "float") {  // f32, f16, bf16: sign and order in integer code (subnormals kept)
    switch (op) {
      case UnaryOp::negate: return {"float v = nx_neg_f32(a);", ht};
      case UnaryOp::abs: return {"float v = nx_lt_f32(a, 0.0) ? nx_neg_f32(a) : a;", ht};
      case UnaryOp::sign: return {"float v = nx_lt_f32(0.0, a) ? 1.0 : (nx_lt_f32(a, 0.0) ? -1.0 : a);", ht};
      default: break;
    }
  }
  switch (op) {
    case UnaryOp::negate: return {ht + " v = -a;", ht};
    case UnaryOp::abs: return {ht + " v = (a < " + z + ") ? -a : a;", ht};
    case UnaryOp::sign:
      if (is_float(t)) return {ht + " v = (a > " + z + ") ? " + ht + "(1) : ((a < " + z + ") ? " + ht + "(-1) : a);", ht};
      if (is_signed(t)) return {ht + " v = (a > " + z + ") ? " + ht + "(1) : ((a < " + z + ") ? " + ht + "(-1) : " + z + ");", ht};
      return {ht + " v = (a > " + z + ") ? " + ht + "(1) : " + z + ";", ht};
    case UnaryOp::ceil: return {ht + " v = " + (is_float(t) ? "nx_ceil_" + fs + "(a);" : "a;"), ht};
    case UnaryOp::floor: return {ht + " v = " + (is_float(t) ? "nx_floor_" + fs + "(a);" : "a;"), ht};
    case UnaryOp::round:
      // Half away from zero (Erlang's round/1); a zero result is +0.0 (it is the integer 0).
      if (is_float(t))
        return {ht + " tr = nx_trunc_" + fs + "(a); " + ht + " v = (abs(a - tr) >= " + ht + "(0.5)) ? tr + sign(a) : tr;" +
                    " if (v == " + z + ") v = " + z + ";",
                ht};
      return {ht + " v = a;", ht};
    default: break;
  }
  if (is_float(t)) bad(name, std::string("integer types only, got ") + type_name(t));
  const uint32_t bits = type_info(t).bits;
  const std::string mask = bits >= 32 ? "0xffffffffu" : std::to_string((1u << bits) - 1) + "u";
  switch (op) {
    case UnaryOp::bitwise_not: return {ht + " v = ~a;", ht};
    case UnaryOp::count_leading_zeros:
      if (bits == 64)
        return {"uint lo = uint(a), hi = uint(uint64_t(a) >> 32); " + ht + " v = " + ht +
                    "(hi != 0u ? 31 - findMSB(hi) : 63 - findMSB(lo));",
                ht};
      return {ht + " v = " + ht + "(" + std::to_string(bits - 1) + " - findMSB(uint(a) & " + mask + "));", ht};
    case UnaryOp::population_count:
      if (bits == 64) return {ht + " v = " + ht + "(bitCount(uint(a)) + bitCount(uint(uint64_t(a) >> 32)));", ht};
      return {ht + " v = " + ht + "(bitCount(uint(a) & " + mask + "));", ht};
    default: break;
  }
  fail(ErrorKind::Internal, name + ": no form");
}

}  // namespace nxvk::elementwise
