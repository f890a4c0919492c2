#include "ops/math_library.hpp"

#include <array>
#include <atomic>
#include <iterator>
#include <vector>

#include "nxvk/error.hpp"
#include "nxvk/ops.hpp"
#include "runtime/env.hpp"

namespace nxvk::gen {
namespace {

#include "ops/math_coeffs.inc"
#include "ops/math_primitives.inc"
#include "ops/math_template.inc"
#include "ops/math_glibc.inc"
#include "ops/math_fast_f32.inc"
#include "ops/math_ff_f32.inc"
#include "ops/math_ulp1_f32.inc"

std::string instantiate(const std::string& tmpl, const std::string& type, const std::string& suffix) {
  std::string out;
  out.reserve(tmpl.size() + tmpl.size() / 8);
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] == '$' && i + 1 < tmpl.size() && (tmpl[i + 1] == 'T' || tmpl[i + 1] == 'S')) {
      out += tmpl[i + 1] == 'T' ? type : suffix;
      ++i;
    } else {
      out += tmpl[i];
    }
  }
  return out;
}

const FfF32Function* ff_f32_function(const std::string& name) {
  for (const auto& f : kMathFfF32Functions)
    if (name == f.name) return &f;
  return nullptr;
}

}  // namespace

std::string math_library_glsl(const Capabilities& caps) {
  // The f32 path is always present (f16/bf16/f32 kernels on devices without f64 call it); the f64
  // path needs the Float64 capability, so it is emitted only where the device has it. The f64
  // path's sigmoid, rsqrt, acosh, atanh, sinh and erfc reproduce glibc's bits (math_glibc.inc,
  // what Nx.BinaryBackend computes); the f32-only path keeps the accurate versions.
  static const std::string f32 = std::string(kPrimF32) + kMathCoeffsF32 + kTwoOverPi + kPayneHanek +
                                 instantiate(kMathTemplate, "float", "_f32") +
                                 instantiate(kMathTemplateF32Only, "float", "_f32");
  static const std::string f64 = std::string(kPrimF64) + kMathCoeffsF64 + instantiate(kMathTemplate, "double", "") +
                                 kMathGlibcF64;
  return caps.float64 ? f32 + f64 : f32;
}

std::string math_f64_function(const std::string& name) {
  return name == "expm1" || name == "erf_inv" ? "nx_" + name + "_nx" : "nx_" + name;
}

bool math_f64_is_glibc(const std::string& name) {
  for (const char* n : {"sigmoid", "rsqrt", "acosh", "atanh", "sinh", "erfc"})
    if (name == n) return true;
  return false;
}

bool has_math_fast_f32(const std::string& name) { return fast_f32_function(name) != nullptr; }

std::string math_fast_f32_glsl(uint32_t table_binding, DType out) {
  if (out != DType::F32 && out != DType::F16 && out != DType::BF16)
    fail(ErrorKind::Internal, std::string("math_fast_f32_glsl: no fast path to ") + type_name(out));
  // nx_NAME_to_f32(x): the fast path with the accurate function as its fallback (the tests' f32
  // reference; the op library's kernels defer the fallback instead).
  std::string s = "layout(std430, binding = " + std::to_string(table_binding) +
                  ") readonly buffer NxFastTable_t { uint w[]; } nx_fast_table;\n" +
                  (out == DType::F16 ? kRoundOutF16 : kRoundOutF32) + kMathFastF32;
  for (const FastF32Function& f : kMathFastF32Functions) {
    const std::string n = f.name;
    const std::string params = f.arity == 2 ? "double x, double y" : "double x", args = f.arity == 2 ? "x, y" : "x";
    s += "float nx_" + n + "_to_f32(" + params + ") {\n  float r;\n  return nx_" + n + "_fast_f32(" + args +
         ", r) ? r : nx_round_out(nx_" + n + "(" + args + "));\n}\n";
  }
  return s;
}

std::string math_fast_f32_setup(const std::string& name) {
  const FastF32Function* f = fast_f32_function(name);
  return f && f->table ? f->table->setup : "";
}

std::span<const uint32_t> math_fast_f32_table(const std::string& name) {
  const FastF32Function* f = fast_f32_function(name);
  return f && f->table ? f->table->words : std::span<const uint32_t>(kNoTable);
}

bool has_math_ff_f32(const std::string& name) { return ff_f32_function(name) != nullptr; }

bool use_math_ff_f32(const Capabilities& caps, const std::string& name) {
  const FfF32Function* f = ff_f32_function(name);
  if (!f) return false;
  if (!caps.float64) return f->without_f64;
  return f->with_f64 && (caps.fused_fma_f32 || !f->with_f64_needs_fused_fma);
}

bool math_ff_f32_settles_all(const std::string& name) {
  const FfF32Function* f = ff_f32_function(name);
  return f && f->first_stage;
}

std::string math_ff_f32_first_stage(const std::string& name) {
  const FfF32Function* f = ff_f32_function(name);
  return f && f->first_stage ? f->first_stage : "";
}

std::string math_ff_f32_glsl(uint32_t table_binding, const Capabilities& caps) {
  return std::string(kExpConstantsF32) + kLogConstantsF32 + "layout(std430, binding = " +
         std::to_string(table_binding) + ") readonly buffer NxFfTable_t { uint w[]; } nx_ff_table;\n" +
         (caps.fused_fma_f32 ? kMathFfF32TwoProdFma : kMathFfF32TwoProdDekker) + kMathFfF32;
}

std::string math_ff_f32_setup(const std::string& name) {
  const FfF32Function* f = ff_f32_function(name);
  return f ? f->setup : "";
}

std::span<const uint32_t> math_ff_f32_table(const std::string& name) {
  const FfF32Function* f = ff_f32_function(name);
  return f ? f->table : std::span<const uint32_t>(kNoTable);
}

namespace {
// set_f32_math's override: -1 none (the variable decides), 0 exact, 1 fast.
std::atomic<int> g_f32_math_override{-1};
}  // namespace

bool f32_math_fast(const std::string& op) {
  if (const int o = g_f32_math_override.load(std::memory_order_relaxed); o >= 0) return o == 1;
  const std::string mode = env::get("NX_VULKAN_F32_MATH").value_or("exact");
  if (mode == "exact" || mode.empty()) return false;
  if (mode == "fast") return true;
  fail(ErrorKind::InvalidArgument,
       op + ": NX_VULKAN_F32_MATH must be \"exact\" or \"fast\", got \"" + mode + "\"");
}

namespace {
const Ulp1F32Function* ulp1_f32_function(const std::string& name) {
  for (const Ulp1F32Function& f : kMathUlp1F32Functions)
    if (name == f.name) return &f;
  return nullptr;
}
}  // namespace

bool has_math_ulp1_f32(const std::string& name) { return ulp1_f32_function(name) != nullptr; }

std::string math_ulp1_f32_glsl(uint32_t table_binding, const Capabilities& caps, const std::string& name) {
  const Ulp1F32Function* f = ulp1_f32_function(name);
  const size_t piece_vec4s = f && !f->pieces.empty() ? f->pieces.size() / 4 : 1;
  return std::string(kMathCoeffsUlp1F32) + kExpConstantsF32 + "layout(std430, binding = " +
         std::to_string(table_binding) + ") readonly buffer NxUlp1Table_t { uint w[]; } nx_ulp1_table;\n" +
         "const uint NX_ULP1_PIECE_VEC4S = " + std::to_string(piece_vec4s) + "u;\n" +
         (caps.fused_fma_f32 ? kMathUlp1ResidualFma : kMathUlp1ResidualDekker) + kMathUlp1F32;
}

std::string math_ulp1_f32_setup(const std::string& name) {
  const Ulp1F32Function* f = ulp1_f32_function(name);
  if (!f || (!f->exp_table && f->pieces.empty())) return "";
  std::string s = f->exp_table ? kMathUlp1ExpSetup : "";
  if (!f->pieces.empty()) {
    // The pieces follow the exp table's 128 words where the function has both.
    const std::string o = f->exp_table ? "128u + " : "";
    s += " for (uint j = gl_LocalInvocationIndex; j < NX_ULP1_PIECE_VEC4S; j += gl_WorkGroupSize.x) "
         "nx_pieces_ulp1[j] = uintBitsToFloat(uvec4(nx_ulp1_table.w[" + o + "4u * j], nx_ulp1_table.w[" + o +
         "4u * j + 1u], nx_ulp1_table.w[" + o + "4u * j + 2u], nx_ulp1_table.w[" + o + "4u * j + 3u]));";
  }
  return s + " barrier();";
}

std::span<const uint32_t> math_ulp1_f32_table(const std::string& name) {
  // Each function's words: the exp table (if it reads it), then its piece table (if any).
  static const std::array<std::vector<uint32_t>, std::size(kMathUlp1F32Functions)> tables = [] {
    std::array<std::vector<uint32_t>, std::size(kMathUlp1F32Functions)> t;
    for (size_t i = 0; i < t.size(); ++i) {
      const Ulp1F32Function& f = kMathUlp1F32Functions[i];
      if (f.exp_table) t[i].assign(std::begin(kExp2Table), std::end(kExp2Table));
      t[i].insert(t[i].end(), f.pieces.begin(), f.pieces.end());
    }
    return t;
  }();
  for (size_t i = 0; i < tables.size(); ++i)
    if (name == kMathUlp1F32Functions[i].name && !tables[i].empty()) return tables[i];
  return std::span<const uint32_t>(kNoTable);
}

namespace {
// Each function's inputs with fixed results, as a condition on the input's bits b (and ab = b
// without the sign) and the result's bits (sign = b's sign bit), after NaN (every function's NaN
// gives NaN). The results are those of the accurate functions (MathSpecialInputsGiveTheAccurateBits,
// the tests' kExact table and F32FastPathEqualsAccurate compare them). Settling them in the fast
// path's kernel matters for data that holds many (log of a ReLU's output, masked NaN): left
// unsettled, each costs the second kernel a global atomic, and past n/64 of them it redoes every
// element (log of a tensor a quarter zeros ran 5 times slower on lavapipe).
struct SpecialInput {
  const char* name;
  const char* condition;
  const char* bits;
};
const SpecialInput kSpecialInputs[] = {
    {"log", "ab == 0u", "0xff800000u"},  // -inf
    {"log", "b > 0x80000000u", "0x7fc00000u"},
    {"log", "b == 0x7f800000u", "0x7f800000u"},
    {"log1p", "b == 0xbf800000u", "0xff800000u"},  // log1p(-1) = -inf
    {"log1p", "b > 0xbf800000u", "0x7fc00000u"},
    {"log1p", "b == 0x7f800000u", "0x7f800000u"},
    {"sqrt", "ab == 0u || b == 0x7f800000u", "b"},
    {"sqrt", "b > 0x80000000u", "0x7fc00000u"},
    {"rsqrt", "ab == 0u", "0x7f800000u | sign"},
    {"rsqrt", "b > 0x80000000u", "0x7fc00000u"},
    {"rsqrt", "b == 0x7f800000u", "0u"},
    {"cbrt", "ab == 0u || ab == 0x7f800000u", "b"},
    {"asin", "ab > 0x3f800000u", "0x7fc00000u"},
    {"acos", "ab > 0x3f800000u", "0x7fc00000u"},
    {"atanh", "ab > 0x3f800000u", "0x7fc00000u"},
    {"atanh", "ab == 0x3f800000u", "0x7f800000u | sign"},
    {"erf_inv", "ab > 0x3f800000u", "0x7fc00000u"},
    {"erf_inv", "ab == 0x3f800000u", "0x7f800000u | sign"},
    {"acosh", "b == 0x3f800000u", "0u"},  // acosh 1 = +0
    {"acosh", "b < 0x3f800000u || b > 0x7f800000u", "0x7fc00000u"},  // below 1, and every negative
    {"acosh", "b == 0x7f800000u", "0x7f800000u"},
    {"exp", "b == 0x7f800000u", "0x7f800000u"},
    {"exp", "b == 0xff800000u", "0u"},
    {"expm1", "b == 0x7f800000u", "0x7f800000u"},
    {"expm1", "b == 0xff800000u", "0xbf800000u"},  // -1
    {"sigmoid", "b == 0x7f800000u", "0x3f800000u"},
    {"sigmoid", "b == 0xff800000u", "0u"},
    {"tanh", "ab == 0x7f800000u", "0x3f800000u | sign"},
    {"erf", "ab == 0x7f800000u", "0x3f800000u | sign"},
    {"erfc", "b == 0x7f800000u", "0u"},
    {"erfc", "b == 0xff800000u", "0x40000000u"},  // 2
    {"sinh", "ab == 0x7f800000u", "b"},
    {"asinh", "ab == 0x7f800000u", "b"},
    {"cosh", "ab == 0x7f800000u", "0x7f800000u"},
    {"atan", "ab == 0x7f800000u", "0x3fc90fdbu | sign"},  // +-pi/2 rounded
    {"sin", "ab == 0x7f800000u", "0x7fc00000u"},
    {"cos", "ab == 0x7f800000u", "0x7fc00000u"},
    {"tan", "ab == 0x7f800000u", "0x7fc00000u"},
};
}  // namespace

std::string math_special_f32(const std::string& name) {
  std::string s = "if (slow) { uint b = floatBitsToUint(a), ab = b & 0x7fffffffu, sign = b & 0x80000000u; "
                  "slow = false; if (ab > 0x7f800000u) v = uintBitsToFloat(0x7fc00000u);";
  for (const SpecialInput& c : kSpecialInputs)
    if (name == c.name) s += " else if (" + std::string(c.condition) + ") v = uintBitsToFloat(" + c.bits + ");";
  return s + " else slow = true; }";
}

namespace {
// Inputs whose bf16 result is fixed where the f32 value is a bf16 value: saturation, f(x) = x
// or 1 near 0. Truncating Nx's f32 rounding gives that value, but it lies on a truncation
// boundary, which the bf16 results' settle test (nx_bf16_settles) leaves to the accurate
// function. Saturation from the bf16 value after the last one whose result falls short (mpmath
// over every bf16 value: tanh 9, erf 3.90625, sigmoid 17.25, erfc -3.828125 (to 2) and 9.4375
// (to 0: from 9.5 the f32 value is below 2^-133, the least bf16); the functions are monotonic,
// so every larger f32 input saturates too). Near 0, Taylor's bounds: x^3/3 < 2^-25 x below
// 2^-12 (sin, tan, atan, ...: a quarter ulp at most), x^2/2 < 2^-25 below 2^-12 (cos, cosh),
// x/2 < 2^-25 below 2^-24 (expm1, log1p), e^x within 2^-25.9 of 1 below 2^-26.
const SpecialInput kBf16FixedResults[] = {
    {"tanh", "ab >= 0x41110000u", "0x3f800000u | sign"},     // 9.0625
    {"erf", "ab >= 0x407b0000u", "0x3f800000u | sign"},      // 3.921875
    {"sigmoid", "b >= 0x418b0000u && b < 0x80000000u", "0x3f800000u"},  // 17.375
    {"erfc", "b >= 0xc0760000u", "0x40000000u"},             // x <= -3.84375: 2
    {"erfc", "b >= 0x41180000u && b < 0x80000000u", "0u"},   // 9.5: below 2^-133, truncated to 0
    {"sin", "ab < 0x39800000u", "b"},  {"tan", "ab < 0x39800000u", "b"},   {"sinh", "ab < 0x39800000u", "b"},
    {"asin", "ab < 0x39800000u", "b"}, {"atan", "ab < 0x39800000u", "b"},  {"asinh", "ab < 0x39800000u", "b"},
    {"atanh", "ab < 0x39800000u", "b"}, {"tanh", "ab < 0x39800000u", "b"},
    {"cos", "ab < 0x39800000u", "0x3f800000u"}, {"cosh", "ab < 0x39800000u", "0x3f800000u"},
    {"expm1", "ab < 0x33800000u", "b"}, {"log1p", "ab < 0x33800000u", "b"},
    {"exp", "ab < 0x32800000u", "0x3f800000u"},
};
}  // namespace

std::string math_bf16_fixed_results(const std::string& name) {
  std::string s;
  for (const SpecialInput& c : kBf16FixedResults)
    if (name == c.name) s += " else if (" + std::string(c.condition) + ") v = uintBitsToFloat(" + c.bits + ");";
  if (s.empty()) return s;
  return "if (slow) { uint b = floatBitsToUint(a), ab = b & 0x7fffffffu, sign = b & 0x80000000u; slow = false; "
         "if (ab > 0x7f800000u) slow = true;" + s + " else slow = true; }";
}

namespace {
// pow(x, y) wherever C99 Annex F fixes the result (what the accurate function gives): y = +-0
// or x = 1 (1, NaN operands too), NaN, y = +-inf, x = +-0, x = +-inf, and x < 0 with y not an
// integer (NaN). Integer-ness and oddness of y by its bits (float arithmetic may flush a
// subnormal y to an integer 0): k = 0 not an integer, 1 even, 2 odd.
std::string special_pow(const std::string& x, const std::string& y) {
  return "if (slow) { uint bx = floatBitsToUint(" + x + "), by = floatBitsToUint(" + y +
         "), ax = bx & 0x7fffffffu, ay = by & 0x7fffffffu; int e = int(ay >> 23) - 127; "
         "uint k = ay == 0u || e >= 24 ? 1u : e < 0 || (ay & ((1u << (23 - e)) - 1u)) != 0u ? 0u "
         ": ((ay >> (23 - e)) & 1u) + 1u; "
         "uint odd_sign = k == 2u ? bx & 0x80000000u : 0u; slow = false; "
         "if (ay == 0u || bx == 0x3f800000u) v = 1.0; "
         "else if (ax > 0x7f800000u || ay > 0x7f800000u) v = uintBitsToFloat(0x7fc00000u); "
         "else if (ay == 0x7f800000u) v = ax == 0x3f800000u ? 1.0 "  // (-1)^+-inf
         ": uintBitsToFloat((ax < 0x3f800000u) == (by > 0x80000000u) ? 0x7f800000u : 0u); "
         "else if (ax == 0u) v = uintBitsToFloat((by > 0x80000000u ? 0x7f800000u : 0u) | odd_sign); "
         "else if (ax == 0x7f800000u) v = uintBitsToFloat((by > 0x80000000u ? 0u : 0x7f800000u) | odd_sign); "
         "else if (bx > 0x80000000u && k == 0u) v = uintBitsToFloat(0x7fc00000u); "
         "else slow = true; }";
}

// atan2(y, x): NaN, a zero y or x, an infinite y or x. Signed results take y's sign: +-0, +-pi,
// +-pi/2, +-pi/4, +-3pi/4 (rounded to f32).
std::string special_atan2(const std::string& y, const std::string& x) {
  return "if (slow) { uint by = floatBitsToUint(" + y + "), bx = floatBitsToUint(" + x +
         "), ay = by & 0x7fffffffu, ax = bx & 0x7fffffffu, sy = by & 0x80000000u; slow = false; "
         "if (ay > 0x7f800000u || ax > 0x7f800000u) v = uintBitsToFloat(0x7fc00000u); "
         "else if (ay == 0u) v = uintBitsToFloat(bx < 0x80000000u ? sy : 0x40490fdbu | sy); "  // 0 or pi
         "else if (ax == 0u) v = uintBitsToFloat(0x3fc90fdbu | sy); "  // pi/2
         "else if (ay == 0x7f800000u) v = uintBitsToFloat((ax < 0x7f800000u ? 0x3fc90fdbu : bx < 0x80000000u ? "
         "0x3f490fdbu : 0x4016cbe4u) | sy); "  // pi/2, pi/4, 3pi/4
         "else if (ax == 0x7f800000u) v = uintBitsToFloat(bx < 0x80000000u ? sy : 0x40490fdbu | sy); "  // 0 or pi
         "else slow = true; }";
}
}  // namespace

std::string math_special_f32(const std::string& name, const std::string& a, const std::string& b) {
  if (name == "pow") return special_pow(a, b);
  if (name == "atan2") return special_atan2(a, b);
  return "";
}

}  // namespace nxvk::gen

namespace nxvk {
void set_f32_math(const std::string& mode) {
  if (mode != "" && mode != "exact" && mode != "fast")
    fail(ErrorKind::InvalidArgument, "set_f32_math: the mode must be \"exact\" or \"fast\", got \"" + mode + "\"");
  gen::g_f32_math_override.store(mode.empty() ? -1 : mode == "fast" ? 1 : 0, std::memory_order_relaxed);
}
}  // namespace nxvk
