// The GLSL math library (src/ops/math_library.cpp) on the device against long double libm:
// ~50k inputs per function (random bit patterns over the whole range, dense samples of the
// interesting range, edge cases: +-0, subnormals, +-inf, NaN, huge arguments, domain edges) for
// the f64 path, the f32 results computed in f64 and rounded once, and the f32-only path (a device
// opened with f64 masked off). Asserts the ulp bounds stated in docs/CAPABILITIES.md and that
// every NaN / inf / signed zero agrees with C99 Annex F. For sigmoid, rsqrt, acosh, atanh, sinh
// and erfc the f64 path's reference is glibc itself: it must give glibc's bits (what
// Nx.BinaryBackend computes), asserted where this host's libm is that glibc.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <sstream>
#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

#include "nxvk/ops.hpp"
#include "nxvk_test.hpp"
#include "ops_elementwise_util.hpp"
#include "ops/codegen.hpp"
#include "ops/math_library.hpp"
#include "ref/math_ref.hpp"

namespace nxvk::test {
namespace {

using mathref::MathFn;
using mathref::Path;

constexpr size_t kInputs = 50000;
// Bounds asserted here (and stated in docs/CAPABILITIES.md).
constexpr double kMaxUlpF64 = 1.05;  // measured max 1.009 (expm1: Nx's exp(x) - 1), others <= 0.91 (tan)
constexpr double kMaxUlpF32ViaF64 = 0.51;  // correctly rounded except near-ties
constexpr double kMaxUlpF32Only = 1.0;  // measured max 0.868 (tan), erf/erfc/erf_inv <= 0.752
// The f64 path of these reproduces glibc 2.36's results bit for bit (src/ops/math_glibc.inc), so
// its bound is glibc's: 5 ulp, glibc's documented bound for erfc on x86_64 (libm-test-ulps), the
// largest of the six; measured max 3.14 (erfc, 10^6 inputs on lavapipe).
constexpr double kMaxUlpF64Glibc = 5.0;
bool glibc_bits(const std::string& fn) { return gen::math_f64_is_glibc(fn); }
// Whether this host's libm is the glibc those are written to match: 2.36 on x86_64 with FMA and
// AVX2 (exp, log, log1p and expm1 run as glibc's FMA builds there), as on Debian 12. rsqrt
// (1 / sqrt(x), IEEE operations only) is checked everywhere.
bool host_libm_is_reference(const std::string& fn) {
  if (fn == "rsqrt") return true;
#if defined(__GLIBC__) && defined(__x86_64__)
  return std::strcmp(gnu_get_libc_version(), "2.36") == 0 && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}
using mathref::same_result;

// The op library's NAME on f32 inputs x (and y, for a binary function), its output buffer
// poisoned first.
std::vector<float> op_f32(Device& dev, const std::string& name, const std::vector<float>& x,
                          const std::vector<float>& y = {}) {
  const int64_t n = static_cast<int64_t>(x.size());
  Tensor tx = from_binary(dev, DType::F32, {n}, std::as_bytes(std::span(x)));
  Tensor ty = y.empty() ? tx : from_binary(dev, DType::F32, {n}, std::as_bytes(std::span(y)));
  poison_next(dev, x.size() * sizeof(float));
  Tensor out = y.empty() ? unary(*parse_unary_op(name), tx, DType::F32)
                         : binary(*parse_binary_op(name), tx, ty, DType::F32, {n});
  auto bytes = to_binary(out);
  std::vector<float> r(x.size());
  std::memcpy(r.data(), bytes.data(), bytes.size());
  return r;
}

// The second operands for a binary function's inputs x (x's values in reverse order, so both
// range alike), else empty; and the operands the reference paths take (x itself for a unary one).
std::vector<float> second_operands(const MathFn& fn, const std::vector<float>& x) {
  return fn.arity == 2 ? std::vector<float>(x.rbegin(), x.rend()) : std::vector<float>{};
}
const std::vector<float>& ref_y(const std::vector<float>& x, const std::vector<float>& y) { return y.empty() ? x : y; }
// "x" or "x, y" in hex, for messages.
std::string operands(const std::vector<float>& x, const std::vector<float>& y, size_t i) {
  std::ostringstream o;
  o << std::hexfloat << x[i];
  if (!y.empty()) o << ", " << y[i];
  return o.str();
}

std::string first_diffs(const mathref::Stats& s) {
  std::string r;
  char b[160];
  for (const auto& d : s.first_diffs) {
    std::snprintf(b, sizeof b, " x=%a: %a, libm %a;", d.x, d.got, d.lib);
    r += b;
  }
  return r;
}

class MathTest : public DeviceTest, public ::testing::WithParamInterface<std::string> {
 protected:
  const MathFn& fn() { return mathref::math_function(GetParam()); }
  std::shared_ptr<Device> f32_only() { return open_device(DeviceOptions{.disable = {"f64"}}); }
};

std::string describe(const mathref::Stats& s, bool f64) {
  char b[200];
  if (f64) std::snprintf(b, sizeof b, "max %.3f ulp at (%.17g, %.17g); %llu special mismatches", s.max_ulp, s.worst_xd,
                         s.worst_yd, static_cast<unsigned long long>(s.special_mismatch));
  else std::snprintf(b, sizeof b, "max %.3f ulp at (%.9g, %.9g); %llu special mismatches", s.max_ulp, s.worst_x,
                     s.worst_y, static_cast<unsigned long long>(s.special_mismatch));
  return b;
}

// Every pair of special values, for pow and atan2 (C99 Annex F lists them pairwise).
template <class F>
void special_pairs(std::vector<F>& x, std::vector<F>& y) {
  using L = std::numeric_limits<F>;
  const F v[] = {F(0), F(-0.0), F(1), F(-1), F(0.5), F(-0.5), F(2), F(-2), F(3), F(-3), F(-8), F(1) / F(3),
                 L::infinity(), -L::infinity(), L::quiet_NaN(), L::denorm_min(), -L::denorm_min(), L::max(),
                 -L::max(), F(1e-30), F(1e30), F(0.999), F(1.001), F(-1.5), F(100), F(-100)};
  for (F a : v)
    for (F b : v) {
      x.push_back(a);
      y.push_back(b);
    }
}

// The plain-double fast paths' tables: 2^(j/64), and per log cell kLogTable's c with -log c,
// each the double nearest the value (within half an ulp of long double's exp2l and logl).
double table_double(std::span<const uint32_t> w, size_t k) {
  uint64_t bits = uint64_t(w[2 * k]) | (uint64_t(w[2 * k + 1]) << 32);
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}
bool nearest_double(double d, long double exact) {
  long double half_ulp = std::ldexp(0.5L, std::ilogb(d) - 52);
  return std::fabs(static_cast<long double>(d) - exact) <= half_ulp * (1 + 0x1p-10L);
}
TEST(MathTables, ExpTableHoldsTwoToTheJOver64) {
  auto w = gen::math_fast_f32_table("exp");
  ASSERT_EQ(w.size(), 128u);
  for (int j = 0; j < 64; ++j) EXPECT_TRUE(nearest_double(table_double(w, j), std::exp2l(j / 64.0L))) << "j = " << j;
}
// A fast-mode kernel that reads a table into shared memory covers at least 16 elements per
// invocation (its grid-stride loop runs four times over 16.8M elements): every element is still
// written, and each the same as in a small tensor (the poisoned output catches an unwritten one).
class MathGrid : public DeviceTest {};
TEST_F(MathGrid, TableKernelCoversEveryElementPastItsGrid) {
  ScopedEnv mode("NX_VULKAN_F32_MATH", "fast");
  std::vector<float> period(1021);
  for (size_t i = 0; i < period.size(); ++i) period[i] = -3.0f + 6.0f * float(i) / float(period.size());
  std::vector<float> x(2 * 8192 * 256 * 4 + 7);
  for (size_t i = 0; i < x.size(); ++i) x[i] = period[i % period.size()];
  for (const char* name : {"erf", "erfc"}) {
    auto big = op_f32(device(), name, x);
    auto small = op_f32(device(), name, period);
    size_t diffs = 0;
    for (size_t i = 0; i < x.size(); ++i) diffs += !same_result(big[i], small[i % period.size()]);
    EXPECT_EQ(diffs, 0u) << name << " of " << x.size();
  }
}
TEST(MathTables, LogTableHoldsTheF32CellsAndTheirLogs) {
  auto w = gen::math_fast_f32_table("log");
  auto cells = gen::math_ff_f32_table("log");  // per cell: c as f32 bits, -log c (hi, lo), 0
  ASSERT_EQ(w.size(), 4u * 129u);
  for (int j = 0; j < 129; ++j) {
    float c;
    std::memcpy(&c, &cells[4 * (j + 53)], 4);
    EXPECT_EQ(table_double(w, 2 * j), double(c)) << "cell " << j + 53;
    if (c == 1.0f) {
      EXPECT_EQ(table_double(w, 2 * j + 1), 0.0) << "cell " << j + 53;
    } else {
      EXPECT_TRUE(nearest_double(table_double(w, 2 * j + 1), -std::log(static_cast<long double>(c)))) << "cell " << j + 53;
    }
  }
  // m in [sqrt(1/2), 1) and [1, sqrt(2)) falls in cells 53..181, the two around 1 with c = 1.
  EXPECT_EQ(table_double(w, 2 * (127 - 53)), 1.0);
  EXPECT_EQ(table_double(w, 2 * (128 - 53)), 1.0);
}
TEST_P(MathTest, F64WithinBound) {
  if (!device().caps().float64) GTEST_SKIP() << "device without f64";
  auto x = mathref::inputs_f64(fn(), kInputs, seed()), y = mathref::inputs_f64(fn(), kInputs, seed(), true);
  if (fn().arity == 2) special_pairs(x, y);
  auto s = mathref::measure_f64(device(), fn(), x, y);
  // f64 erf_inv is Nx.BinaryBackend's approximation (nx_erf_inv_nx), with its signed zero: no ulp
  // bound here; MathF64GivesBinaryBackendBits checks its bits, special values included.
  if (GetParam() == "erf_inv") return;
  EXPECT_EQ(s.special_mismatch, 0u) << describe(s, true);
  if (!glibc_bits(GetParam())) {
    EXPECT_LE(s.max_ulp, kMaxUlpF64) << describe(s, true);
    return;
  }
  if (host_libm_is_reference(GetParam())) {
    EXPECT_EQ(s.not_libm_identical, 0u) << "results differing from glibc's:" << first_diffs(s);
  }
  if (GetParam() == "sigmoid") {
    // Nx's formula 1 / (1 + exp(-x)) gives 0 where exp(-x) overflows (x < -709.78) while the
    // true value is still a subnormal: the ulp bound holds above that.
    std::vector<double> xs;
    for (double v : x)
      if (!(v < -709.78)) xs.push_back(v);
    s = mathref::measure_f64(device(), fn(), xs, xs);
  }
  EXPECT_LE(s.max_ulp, kMaxUlpF64Glibc) << describe(s, true);
}

TEST_P(MathTest, F32ViaF64WithinBound) {
  if (!device().caps().float64) GTEST_SKIP() << "device without f64";
  auto x = mathref::inputs_f32(fn(), kInputs, seed()), y = mathref::inputs_f32(fn(), kInputs, seed(), true);
  if (fn().arity == 2) special_pairs(x, y);
  auto s = mathref::measure_f32(device(), fn(), Path::F32ViaF64, x, y);
  EXPECT_EQ(s.special_mismatch, 0u) << describe(s, false);
  EXPECT_LE(s.max_ulp, kMaxUlpF32ViaF64) << describe(s, false);
  if (glibc_bits(GetParam()) && host_libm_is_reference(GetParam())) {
    EXPECT_EQ(s.not_libm_identical, 0u);
  }
}

// f64 tensors' expm1 and erf_inv give Nx.BinaryBackend's bits (math_f64_function): exp(x) - 1
// for |x| >= 1/2 (nearer 0, the accurate expm1: F64WithinBound) and Complex.erf_inv, both
// computed here with this host's libm, on the same input mix as the bound tests.
TEST_F(DeviceTest, MathF64GivesBinaryBackendBits) {
  if (!device().caps().float64) GTEST_SKIP() << "device without f64";
  if (!host_libm_is_reference("expm1")) GTEST_SKIP() << "this host's libm is not glibc 2.36 with FMA";
  for (const char* name : {"expm1", "erf_inv"}) {
    const MathFn& fn = mathref::math_function(name);
    auto x = mathref::inputs_f64(fn, kInputs, seed());
    auto got = mathref::run_f64(device(), fn, x, x);
    size_t checked = 0, differ = 0;
    std::string first;
    for (size_t i = 0; i < x.size(); ++i) {
      const bool expm1 = std::string(name) == "expm1";
      if (expm1 && !(std::fabs(x[i]) >= 0.5)) continue;
      const double want = expm1 ? std::exp(x[i]) - 1.0 : mathref::complex_erf_inv(x[i]);
      ++checked;
      if (same_result(got[i], want)) continue;
      if (++differ <= 4) {
        char b[120];
        std::snprintf(b, sizeof b, " x=%a: %a, Nx %a;", x[i], got[i], want);
        first += b;
      }
    }
    EXPECT_GT(checked, x.size() / 4) << name;
    EXPECT_EQ(differ, 0u) << name << ": " << differ << " of " << checked << " differ from Nx.BinaryBackend's:" << first;
  }
}

// f64 expm1 on (-1/2, 1/2) (its own function there: Nx's exp(x) - 1 loses every digit near 0)
// and tanh on (-1/4, 1/4) (e^2x - 1 over e^2x + 1) are within 0.7 ulp. The random mix of the
// bound tests reaches this range only now and then: a reduction by ln2 there gave up to 1.09 ulp
// (x = 0.3472, 2 e^r - 1 magnifying e^r's error), which one CI seed in many found.
TEST_F(DeviceTest, MathF64Expm1NearZeroWithinTwoThirdsUlp) {
  if (!device().caps().float64) GTEST_SKIP() << "device without f64";
  std::mt19937_64 rng(seed());
  for (auto [name, half_width] : {std::pair{"expm1", 0.5}, std::pair{"tanh", 0.25}}) {
    std::uniform_real_distribution<double> u(-half_width, half_width);
    std::vector<double> x(200000);
    for (double& v : x) v = u(rng);
    auto s = mathref::measure_f64(device(), mathref::math_function(name), x, x);
    EXPECT_LE(s.max_ulp, 0.7) << name << ": " << describe(s, true);
  }
}

// f16 and bf16 results (Nx: computed in f64, rounded once to f16; bf16 the f32 value truncated)
// take the fast f32 functions with their format's settle test (narrow_ulp1_body; sqrt the
// device's sqrt, settled likewise) and the accurate function for the rest:
// every f16 and every bf16 input through every unary
// function, and pairs of them through pow and atan2, against the long double reference rounded
// as Nx rounds (f16 directly: the f32 result rounded again would differ next to f16's halfway
// points); pow(63, 2) = 3969 and others are such halfway points exactly (round to even: 3968).
// Both settle modes (packed outputs list whole words for the second kernel).
TEST_F(DeviceTest, MathF16AndBf16ResultsAreRoundedOnce) {
  if (!device().caps().float64) GTEST_SKIP() << "device without f64";
  // Nx's rounding of a value to t, and t's value of bits h (ref/elementwise's conversions).
  auto round_to = [](DType t, long double v) {
    ref::Bytes b(2);
    ref::write_value(t, ref::Value{true, 0, static_cast<double>(v)}, b, 0);
    uint16_t h;
    std::memcpy(&h, b.data(), 2);
    return h;
  };
  auto value_of = [](DType t, uint16_t h) -> long double {
    ref::Bytes b(2);
    std::memcpy(b.data(), &h, 2);
    return ref::read_value(t, b, 0).f;
  };
  auto tensor = [&](DType t, const std::vector<uint16_t>& bits) {
    return from_binary(device(), t, {int64_t(bits.size())}, std::as_bytes(std::span(bits)));
  };
  auto bits_of = [](const Tensor& t) {
    auto bytes = to_binary(t);
    std::vector<uint16_t> h(bytes.size() / 2);
    std::memcpy(h.data(), bytes.data(), bytes.size());
    return h;
  };
  auto is_nan = [](DType t, uint16_t h) {
    return t == DType::F16 ? (h & 0x7fff) > 0x7c00 : (h & 0x7fff) > 0x7f80;
  };
  std::vector<uint16_t> every(65536);
  for (uint32_t i = 0; i < every.size(); ++i) every[i] = static_cast<uint16_t>(i);
  std::mt19937 rng(seed());
  for (DType t : {DType::F16, DType::BF16}) {
    // Pairs: random bits, and moderate magnitudes (where pow and atan2 mostly settle fast).
    std::vector<uint16_t> pa, pb;
    const uint16_t moderate = t == DType::F16 ? 0x3c00 : 0x3f80;  // 1.0
    for (int k = 0; k < 1 << 17; ++k) {
      const bool near_one = k % 2 == 0;
      pa.push_back(static_cast<uint16_t>(near_one ? moderate - 0x800 + rng() % 0x1000 : rng()));
      pb.push_back(static_cast<uint16_t>(near_one ? (rng() % 0x1000 + moderate - 0x800) ^ (rng() % 2 << 15) : rng()));
    }
    // Exact f16 halfway points: m^2 2^2j for the odd m whose square has 12 bits (63^2 = 3969),
    // m^3 for 13 and 15; the fast path must leave them to the accurate function (round to even).
    for (int m : {47, 49, 51, 53, 55, 57, 59, 61, 63, 13, 15})
      for (int j = -10; j <= 1; ++j) {
        pa.push_back(round_to(t, std::ldexp(m, m > 15 ? j : j / 2))), pb.push_back(round_to(t, m > 15 ? 2 : 3));
        pa.push_back(round_to(t, -std::ldexp(m, m > 15 ? j : j / 2))), pb.push_back(pb.back());
      }
    for (const char* settle : {"second", "inline"}) {
      ScopedEnv place("NX_VULKAN_SETTLE", settle);
      for (const auto& f : mathref::math_functions()) {
        const bool binary = f.arity == 2;
        const std::vector<uint16_t>& x = binary ? pa : every;
        poison_next(device(), 2 * x.size());  // an element the kernels leave unwritten fails
        Tensor out = binary ? nxvk::binary(*parse_binary_op(f.name), tensor(t, pa), tensor(t, pb), t,
                                           {int64_t(pa.size())})
                            : unary(*parse_unary_op(f.name), tensor(t, every), t);
        auto got = bits_of(out);
        size_t bad = 0;
        for (size_t i = 0; i < x.size(); ++i) {
          const long double want_v = f.ref(value_of(t, x[i]), binary ? value_of(t, pb[i]) : 0.0L);
          const uint16_t want = round_to(t, want_v);
          if (got[i] == want || (is_nan(t, want) && is_nan(t, got[i]))) continue;
          if (bad++ < 5) {
            char b[120];
            if (binary)
              std::snprintf(b, sizeof b, "(0x%04x, 0x%04x): 0x%04x, want 0x%04x", x[i], pb[i], got[i], want);
            else
              std::snprintf(b, sizeof b, "(0x%04x): 0x%04x, want 0x%04x", x[i], got[i], want);
            ADD_FAILURE() << f.name << " " << type_name(t) << b << " (" << settle << ")";
          }
        }
        EXPECT_EQ(bad, 0u) << f.name << " " << type_name(t) << " (" << settle << "): " << bad << " of " << x.size();
      }
    }
  }
}

// f32-only devices' erf and erfc (float-float: nx_erf_f32, nx_erfc_f32) on a dense grid of every
// piece of their fits, [0, 10): within 1 ulp. The random mix of F32OnlyWithinBound reaches a
// piece's ends only now and then; with only the fits' constant terms in float-float, erfc gave
// 1.15 ulp next to 2 and 4 (the ends of its [2, 4) piece), which one CI seed in many found.
TEST_F(DeviceTest, MathF32OnlyErfAndErfcWithinOneUlpOnEveryPiece) {
  auto dev = open_device(DeviceOptions{.disable = {"f64"}});
  ASSERT_FALSE(dev->caps().float64);
  for (const char* name : {"erf", "erfc"}) {
    const MathFn& fn = mathref::math_function(name);
    std::vector<float> x;
    for (uint32_t u = 0x3c000000u; u < 0x41200000u; u += 11) {  // [2^-7, 10)
      float f;
      std::memcpy(&f, &u, 4);
      x.push_back(f);
      x.push_back(-f);
    }
    auto got = mathref::run_f32(*dev, fn, Path::F32Only, x, x);
    double worst = 0;
    float worst_x = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double e = mathref::ulp_error_f32(got[i], fn.ref(x[i], 0));
      if (e > worst) worst = e, worst_x = x[i];
    }
    EXPECT_LE(worst, 1.0) << name << " of " << x.size() << " inputs: " << worst << " ulp at " << worst_x;
  }
}

// The fast f32 path gives the accurate function's bits (it rounds directly only where the
// rounding is unambiguous): on the edge-case mix and a dense random sample.
TEST_P(MathTest, F32FastPathEqualsAccurate) {
  if (!device().caps().float64) GTEST_SKIP() << "device without f64";
  if (!gen::has_math_fast_f32(GetParam())) GTEST_SKIP() << "no fast f32 path";
  const bool binary = fn().arity == 2;
  auto x = mathref::inputs_f32(fn(), 4 * kInputs, seed());
  std::vector<float> y = binary ? mathref::inputs_f32(fn(), 4 * kInputs, seed(), true) : std::vector<float>{};
  if (binary) special_pairs(x, y);
  const std::vector<float>& y_or_x = binary ? y : x;
  auto fast = mathref::run_f32(device(), fn(), Path::F32ViaF64, x, y_or_x);
  auto accurate = mathref::run_f32(device(), fn(), Path::F32ViaF64Accurate, x, y_or_x);
  // And the op library's kernel (four lanes per invocation, unsettled lanes redone afterwards).
  auto op = op_f32(device(), GetParam(), x, y);
  size_t diffs = 0, op_diffs = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!same_result(fast[i], accurate[i]) && diffs++ < 5)
      ADD_FAILURE() << GetParam() << "(" << operands(x, y, i) << "): fast " << std::hexfloat << fast[i] << ", accurate " << accurate[i];
    if (!same_result(op[i], accurate[i]) && op_diffs++ < 5)
      ADD_FAILURE() << GetParam() << "(" << operands(x, y, i) << "): op " << std::hexfloat << op[i] << ", accurate " << accurate[i];
  }
  EXPECT_EQ(diffs, 0u) << "of " << x.size();
  EXPECT_EQ(op_diffs, 0u) << "of " << x.size();
  // The fast path alone: what it settles is the accurate path's result, and it settles most of
  // the sample (else the comparisons above would pass through the fallback).
  auto alone = mathref::run_fast_f32(device(), GetParam(), x, y);
  size_t settled = 0, alone_diffs = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!alone[i].first) continue;
    ++settled;
    if (!same_result(alone[i].second, accurate[i]) && alone_diffs++ < 5)
      ADD_FAILURE() << GetParam() << "(" << operands(x, y, i) << "): fast alone " << std::hexfloat << alone[i].second
                    << ", accurate " << accurate[i];
  }
  EXPECT_EQ(alone_diffs, 0u);
  RecordProperty("settled", std::to_string(settled) + " of " + std::to_string(x.size()));
  EXPECT_GT(double(settled), 0.5 * double(x.size())) << "the fast path settles too little";
}

// Uniform samples of the fast paths' main ranges, and the edges of their special ranges (the
// f32-only and the plain-double paths share them).
std::vector<float> ff_inputs(const std::string& name, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> x;
  auto uniform = [&](float lo, float hi, int count) {
    std::uniform_real_distribution<float> d(lo, hi);
    for (int i = 0; i < count; ++i) x.push_back(d(rng));
  };
  auto positive_floats = [&](int count) {  // uniform over the bits of every positive finite float
    std::uniform_int_distribution<uint32_t> bits(1, 0x7f7fffffu);
    for (int i = 0; i < count; ++i) {
      uint32_t b = bits(rng);
      float v;
      std::memcpy(&v, &b, 4);
      x.push_back(v);
    }
  };
  auto around = [&](const std::vector<float>& edges) {
    for (float e : edges)
      for (int s = -20; s <= 20; ++s) {
        float v = e;
        for (int k = 0; k < std::abs(s); ++k) v = std::nextafter(v, s < 0 ? -1e9f : 1e9f);
        x.push_back(v);
      }
  };
  if (name == "exp") {
    uniform(-87.0f, 88.5f, 100000);
    uniform(-1.0f, 1.0f, 50000);
    uniform(-0.02f, 0.02f, 20000);  // k = 0 and its neighbours
    around({-87.0f, 88.5f, 88.75f, -104.0f, 88.7228394f, -103.972f, -87.3365479f});
    uniform(-0x1p-22f, 0x1p-22f, 20000);  // results next to 1, a power of two
    around({0x1p-24f, -0x1p-24f, 0x1p-25f, -0x1p-25f, -0x1p-26f});
  } else if (name == "sigmoid") {
    uniform(-87.0f, 17.4f, 100000);
    uniform(-4.0f, 4.0f, 50000);
    uniform(-0.02f, 0.02f, 20000);
    around({-87.0f, 17.4f, -104.0f, 16.6355324f, 17.3286800f, -103.972f, -87.3365479f,
            -32.0f});  // the plain-double path's switch from 1 / (1 + e^-x) to e^x
    uniform(-0x1p-20f, 0x1p-20f, 20000);  // results next to 1/2, a power of two
    around({0x1p-23f, -0x1p-23f, 0x1p-24f, -0x1p-24f, -0x1p-25f});
  } else if (name == "log") {
    positive_floats(100000);
    uniform(0.98f, 1.02f, 40000);    // the cells next to 1
    uniform(0x1p-20f, 4.0f, 40000);
    around({1.0f, 0.70710677f, 1.4142135f, 1.0078125f, 0.99609375f, 1e-45f, 1.1754944e-38f, 3.4028235e38f});
  } else if (name == "atan" || name == "atan2") {
    uniform(-2.0f, 2.0f, 60000);     // quotients either side of 1, where the reciprocal comes in
    uniform(-40.0f, 40.0f, 30000);
    positive_floats(40000);
    // atan2's thirds (ratios 0.4140625 and 2.4140625: q = y/x, (y - x)/(y + x) or -x/y) and
    // reciprocal range (the larger operand to 2^100), atan's 1 (the switch to pi/2 - atan(1/q))
    // and 2^60 (to +-pi/2), and an old table's cell edges j/16 +- 1/32 and their reciprocals
    // (kept: awkward quotients all the same).
    std::vector<float> edges = {1.0f,      -1.0f,      0x1p60f,   0x1.000002p60f, 0x1p-12f, 0.4140625f,
                                -0.4140625f, 2.4140625f, -2.4140625f, 0x1p100f,      0x1p-100f};
    for (int j = 0; j < 16; ++j) edges.push_back((2 * j + 1) / 32.0f), edges.push_back(32.0f / (2 * j + 1));
    around(edges);
  } else if (name == "pow") {  // also the exponents, in reverse order (second_operands)
    uniform(0.0f, 4.0f, 60000);
    uniform(-4.0f, 4.0f, 40000);
    uniform(0.999f, 1.001f, 20000);  // log|x| near 0: its relative error matters
    uniform(-25.0f, 25.0f, 20000);
    for (int k = -30; k <= 30; ++k) x.push_back(float(k)), x.push_back(k + 0.5f);  // integer exponents, negative bases
    around({1.0f, -1.0f, 2.0f, 0.5f, 88.0f});
  } else if (name == "asin" || name == "acos") {
    uniform(-1.0f, 1.0f, 100000);
    uniform(0.999f, 1.0f, 30000);    // s = sqrt(1 - x^2) small: the quotient's far cells
    uniform(-1.0f, -0.999f, 30000);
    uniform(-0x1p-10f, 0x1p-10f, 10000);
    around({1.0f, -1.0f, 0.70710677f, -0.70710677f, 0x1p-12f, 0.5f, -0.5f});  // 1/2: the plain-double path's halves
  } else if (name == "asinh") {
    uniform(-4.0f, 4.0f, 60000);
    uniform(-0.03f, 0.03f, 30000);
    positive_floats(30000);
    // The plain-double path's switches: the series to the log (2^-7), log(a + sqrt(1 + a^2)) to
    // log 2a (2^30).
    around({0x1p-7f, -0x1p-7f, 0x1p30f, -0x1p30f, 0x1p-12f});
  } else if (name == "acosh") {
    uniform(1.0f, 5.0f, 60000);
    uniform(1.0f, 1.001f, 30000);
    positive_floats(30000);
    // The series' switch (s = 2^-7, x = 1 + 2^-15 and a hair: every f32 from 1 to past it), 2^30.
    for (uint32_t b = 0x3f800001u; b < 0x3f800200u; ++b) {
      float v;
      std::memcpy(&v, &b, 4);
      x.push_back(v);
    }
    around({0x1p30f, 2.0f});
  } else if (name == "atanh") {
    uniform(-1.0f, 1.0f, 60000);
    uniform(-0.03f, 0.03f, 30000);
    around({0x1p-7f, -0x1p-7f, 0.99999994f, -0.99999994f, 0.5f});  // the series' switch, the ends
  } else if (name == "erf" || name == "erfc") {
    uniform(-4.0f, name == "erf" ? 4.0f : 10.0f, 100000);
    // The plain-double path's switches: erf's series to 1 - erfc (2), erfc's fits (2, 4), the
    // reciprocal (4), erf's +-1 and erfc's 2 and +0 (4, -4, 10.2), the subnormal results (10).
    around({2.0f, -2.0f, 4.0f, -4.0f, 1.0f, -1.0f, 10.0f, 10.2f, 0x1p-12f, -0x1p-12f});
  } else if (name == "erf_inv") {
    uniform(-1.0f, 1.0f, 100000);
    uniform(0.99f, 1.0f, 30000);     // the far fit (w >= 6.25 from 0.99903) and erfc's ranges
    uniform(-1.0f, -0.999f, 20000);
    uniform(-0x1p-10f, 0x1p-10f, 10000);
    // w = 6.25 (from one polynomial to an f32 guess and a Halley step), older switches (y = 0.84,
    // 1, 2: erf's series to erfc, erfc's fits), the last floats below 1, tiny and subnormal
    // results.
    around({0.76514271f, 0.99903431f, 0.84270079f, 0.99532227f, 0.99999994f, -0.99999994f, 0x1p-126f, 0x1p-100f,
            -0x1p-12f});
  } else if (name == "cbrt") {
    positive_floats(100000);
    uniform(-8.0f, 8.0f, 50000);
    for (int k = 1; k < 2000; ++k) {  // cubes and their neighbours: exact results
      float c = float(k) * float(k) * float(k);
      x.push_back(c);
      x.push_back(-std::nextafter(c, 0.0f));
      x.push_back(std::nextafter(c, 1e30f));
    }
  } else if (name == "sqrt") {
    positive_floats(150000);
    uniform(0.0f, 4.0f, 20000);
    for (uint32_t b = 1; b < 2000; ++b) {  // subnormals and squares' neighbours
      float v;
      std::memcpy(&v, &b, 4);
      x.push_back(v);
      float q = float(b) * float(b);
      x.push_back(q);
      x.push_back(std::nextafter(q, 0.0f));
      x.push_back(std::nextafter(q, 1e30f));
    }
  }
  return x;
}

// Where nx_NAME_ff_f32 settles a result it is the accurate function's (correctly rounded)
// f32; it settles all but a small fraction of its main range.
TEST_P(MathTest, F32OnlyFastPathSettlesCorrectly) {
  if (!gen::has_math_ff_f32(GetParam())) GTEST_SKIP() << "no f32-only fast path";
  if (!device().caps().float64) GTEST_SKIP() << "device without f64 (the reference)";
  auto main_range = ff_inputs(GetParam(), seed());
  auto x = mathref::inputs_f32(fn(), 4 * kInputs, seed());
  const size_t n_main = main_range.size();
  x.insert(x.begin(), main_range.begin(), main_range.end());
  auto ff = mathref::run_ff_f32(device(), GetParam(), x);
  auto accurate = mathref::run_f32(device(), fn(), Path::F32ViaF64Accurate, x, x);
  size_t diffs = 0, unsettled_main = 0, settled = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!ff[i].first) {
      unsettled_main += i < n_main;
      continue;
    }
    ++settled;
    if (!same_result(ff[i].second, accurate[i]) && diffs++ < 5)
      ADD_FAILURE() << GetParam() << "(" << std::hexfloat << x[i] << "): f32-only " << ff[i].second << ", accurate "
                    << accurate[i];
  }
  EXPECT_EQ(diffs, 0u) << "of " << settled << " settled";
  EXPECT_LT(double(unsettled_main), 0.01 * double(n_main)) << "the fast path settles too little";
}

// On a device without f64 the op library runs nx_NAME_ff_f32 and, where it does not settle, the
// f32 library function: each element is one or the other (the fast path's settled results being
// the correctly rounded ones, as the f64 device's accurate path gives them), and the fast path
// settles nearly all of its main range.
TEST_P(MathTest, F32OnlyDeviceTakesTheFastPath) {
  if (!gen::use_math_ff_f32(f32_only()->caps(), GetParam())) GTEST_SKIP() << "the op library does not use an f32-only fast path";
  auto dev = f32_only();
  auto x = mathref::inputs_f32(fn(), 2 * kInputs, seed());
  auto main_range = ff_inputs(GetParam(), seed() + 1);
  x.insert(x.end(), main_range.begin(), main_range.end());
  auto ff = mathref::run_ff_f32(*dev, GetParam(), x);
  auto library = mathref::run_f32(*dev, fn(), Path::F32Only, x, x);
  auto op = op_f32(*dev, GetParam(), x);
  std::vector<float> accurate;
  if (device().caps().float64) accurate = mathref::run_f32(device(), fn(), Path::F32ViaF64Accurate, x, x);
  size_t diffs = 0, wrong = 0, settled = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = ff[i].first ? ff[i].second : library[i];
    settled += ff[i].first;
    if (!same_result(op[i], want) && diffs++ < 5)
      ADD_FAILURE() << GetParam() << "(" << std::hexfloat << x[i] << "): op " << op[i] << ", expected " << want;
    if (ff[i].first && !accurate.empty() && !same_result(ff[i].second, accurate[i]) && wrong++ < 5)
      ADD_FAILURE() << GetParam() << "(" << std::hexfloat << x[i] << "): settled " << ff[i].second << ", accurate "
                    << accurate[i];
  }
  EXPECT_EQ(diffs, 0u) << "of " << x.size();
  EXPECT_EQ(wrong, 0u) << "of " << settled << " settled";
  EXPECT_GT(settled, x.size() / 2) << "the fast path settles too little";
}

// On a device with f64 the op library's f32 kernel runs a fast path per lane: f32 arithmetic
// (nx_NAME_ff_f32: sqrt where fma rounds once) or plain double (nx_NAME_fast_f32: exp, sigmoid,
// log, sin, ...). Whether NAME has one there, and what it does alone: [settled, bits] per input.
bool has_lane_path(const Capabilities& caps, const std::string& name) {
  return gen::use_math_ff_f32(caps, name) || gen::has_math_fast_f32(name);
}
bool lane_path_settles_all(const Capabilities& caps, const std::string& name) {
  return gen::use_math_ff_f32(caps, name) && gen::math_ff_f32_settles_all(name);
}
std::vector<std::pair<bool, float>> run_lane_path(Device& dev, const std::string& name, const std::vector<float>& x,
                                                  const std::vector<float>& y = {}) {
  return gen::use_math_ff_f32(dev.caps(), name) ? mathref::run_ff_f32(dev, name, x) : mathref::run_fast_f32(dev, name, x, y);
}

// The accurate f64 function takes the inputs the lane path leaves unsettled: every element is
// the accurate path's, and the inputs include unsettled ones (the special ranges' edges), so
// that both halves of the kernel run. sqrt's f32-arithmetic path settles every input.
TEST_P(MathTest, F64DeviceTakesTheFastPath) {
  if (!device().caps().float64) GTEST_SKIP() << "device without f64";
  if (!has_lane_path(device().caps(), GetParam())) GTEST_SKIP() << "no fast path per lane";
  auto x = mathref::inputs_f32(fn(), 2 * kInputs, seed());
  auto main_range = ff_inputs(GetParam(), seed() + 2);
  x.insert(x.end(), main_range.begin(), main_range.end());
  auto y = second_operands(fn(), x);
  auto lane = run_lane_path(device(), GetParam(), x, y);
  auto accurate = mathref::run_f32(device(), fn(), Path::F32ViaF64Accurate, x, ref_y(x, y));
  size_t unsettled = 0;
  for (size_t i = 0; i < x.size(); ++i) unsettled += !lane[i].first;
  for (const char* mode : {"inline", "second"}) {
    ScopedEnv settle("NX_VULKAN_SETTLE", mode);
    auto op = op_f32(device(), GetParam(), x, y);
    size_t diffs = 0;
    for (size_t i = 0; i < x.size(); ++i)
      if (!same_result(op[i], accurate[i]) && diffs++ < 5)
        ADD_FAILURE() << GetParam() << "(" << operands(x, y, i) << "), " << mode << ": op " << std::hexfloat << op[i]
                      << ", accurate " << accurate[i] << (lane[i].first ? " (settled)" : " (unsettled)");
    EXPECT_EQ(diffs, 0u) << "of " << x.size() << ", " << mode;
  }
  if (lane_path_settles_all(device().caps(), GetParam())) {  // its kernel has no accurate function
    EXPECT_EQ(unsettled, 0u);
    return;
  }
  EXPECT_GT(unsettled, 0u) << "no input took the accurate function";
  EXPECT_LT(unsettled, x.size() / 2) << "the fast path settles too little";
}

// The kernel redoes the lanes its fast path leaves unsettled after the four of a quad (and in
// the tail, inline): inputs the fast path leaves unsettled, with its candidate wrong where
// possible, sit in every lane of a quad, in the last quad and in the tail (203 = 50 quads and
// 3), among settled ones.
TEST_P(MathTest, F64DeviceRedoesEveryUnsettledLane) {
  if (!device().caps().float64) GTEST_SKIP() << "device without f64";
  if (!has_lane_path(device().caps(), GetParam()) || lane_path_settles_all(device().caps(), GetParam()))
    GTEST_SKIP() << "no accurate function in this kernel";
  auto pool = mathref::inputs_f32(fn(), 2 * kInputs, seed());
  auto main_range = ff_inputs(GetParam(), seed() + 3);
  pool.insert(pool.end(), main_range.begin(), main_range.end());
  auto pool_y = second_operands(fn(), pool);
  auto lane = run_lane_path(device(), GetParam(), pool, pool_y);
  auto accurate_pool = mathref::run_f32(device(), fn(), Path::F32ViaF64Accurate, pool, ref_y(pool, pool_y));
  std::vector<size_t> settled, unsettled, wrong;  // indices into pool
  for (size_t i = 0; i < pool.size(); ++i) {
    if (lane[i].first) settled.push_back(i);
    else (same_result(lane[i].second, accurate_pool[i]) ? unsettled : wrong).push_back(i);
  }
  ASSERT_GE(settled.size(), 203u);
  std::vector<size_t> hard = wrong.empty() ? unsettled : wrong;
  ASSERT_FALSE(hard.empty()) << "no unsettled input";
  std::vector<size_t> pick(settled.begin(), settled.begin() + 203);
  const size_t positions[] = {0, 5, 10, 15, 31, 32, 199, 200, 202};
  for (size_t k = 0; k < std::size(positions); ++k) pick[positions[k]] = hard[k % hard.size()];
  std::vector<float> x, y;
  for (size_t i : pick) {
    x.push_back(pool[i]);
    if (!pool_y.empty()) y.push_back(pool_y[i]);
  }
  auto accurate = mathref::run_f32(device(), fn(), Path::F32ViaF64Accurate, x, ref_y(x, y));
  // Settled in place and by the second kernel (elementwise.cpp's settle_in_second_kernel).
  for (const char* mode : {"inline", "second"}) {
    ScopedEnv settle("NX_VULKAN_SETTLE", mode);
    auto op = op_f32(device(), GetParam(), x, y);
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_TRUE(same_result(op[i], accurate[i])) << GetParam() << "(" << operands(x, y, i) << ") at " << i << ", "
                                                   << mode << ": op " << std::hexfloat << op[i] << ", accurate "
                                                   << accurate[i];
  }
  RecordProperty("unsettled_with_a_wrong_candidate", std::to_string(wrong.size()));
}

// f32 subnormal inputs reach the fast path flushed to zero (nx_ftz_f32, on every device): the op
// must still give the accurate function's bits, with the input widened exactly.
TEST_P(MathTest, F64DeviceFastPathOnSubnormalInputs) {
  if (!device().caps().float64) GTEST_SKIP() << "device without f64";
  if (!gen::has_math_fast_f32(GetParam()) || gen::use_math_ff_f32(device().caps(), GetParam()))
    GTEST_SKIP() << "no plain-double fast path";
  std::mt19937 rng(static_cast<uint32_t>(seed()));
  std::vector<float> x;
  for (int i = 0; i < 2051; ++i) {
    const uint32_t bits = (rng() & 0x007fffffu) | (i % 2 ? 0x80000000u : 0u);
    float f;
    std::memcpy(&f, &bits, 4);
    x.push_back(f);
  }
  for (float f : {0.0f, -0.0f, 0x1p-126f, -0x1p-126f, 0x1.fffffcp-127f, 0x1p-149f, -0x1p-149f, 0.5f}) x.push_back(f);
  std::vector<float> y;
  if (fn().arity == 2) {
    // Subnormals against normal operands of either sign and size, and against each other, in
    // either position.
    const float normal[] = {1.0f, -1.0f, 0x1p-126f, -3.5f, 1e30f, -1e-30f, 0.75f};
    const size_t n = x.size();
    for (size_t i = 0; i < n; ++i) y.push_back(i % 4 == 0 ? x[(i * 7 + 3) % n] : normal[i % std::size(normal)]);
    for (size_t i = 0; i < n; ++i) {
      x.push_back(y[i]);
      y.push_back(x[i]);
    }
  }
  auto accurate = mathref::run_f32(device(), fn(), Path::F32ViaF64Accurate, x, ref_y(x, y));
  auto op = op_f32(device(), GetParam(), x, y);
  size_t diffs = 0;
  for (size_t i = 0; i < x.size(); ++i)
    if (!same_result(op[i], accurate[i]) && diffs++ < 5)
      ADD_FAILURE() << GetParam() << "(" << operands(x, y, i) << "): op " << std::hexfloat << op[i] << ", accurate "
                    << accurate[i];
  EXPECT_EQ(diffs, 0u) << "of " << x.size();
}

TEST_P(MathTest, F32OnlyWithinBound) {
  auto dev = f32_only();
  ASSERT_FALSE(dev->caps().float64);
  auto x = mathref::inputs_f32(fn(), kInputs, seed()), y = mathref::inputs_f32(fn(), kInputs, seed(), true);
  if (fn().arity == 2) special_pairs(x, y);
  auto s = mathref::measure_f32(*dev, fn(), Path::F32Only, x, y);
  EXPECT_EQ(s.special_mismatch, 0u) << describe(s, false);
  EXPECT_LE(s.max_ulp, kMaxUlpF32Only) << describe(s, false);
}

// The fast f32 math mode's inputs: the function's sample, 2^20 uniformly random bit patterns
// (every exponent alike), and the 48 floats each side of the points where its branches, reductions
// or residuals change (both signs), where an error bound is tightest.
std::vector<float> ulp1_inputs(const MathFn& fn, uint32_t seed, size_t& sample) {
  auto x = mathref::inputs_f32(fn, 4 * kInputs, seed);
  sample = x.size();
  std::mt19937 rng(seed + 11);
  for (int i = 0; i < (1 << 20); ++i) {
    const uint32_t b = rng();
    float f;
    std::memcpy(&f, &b, 4);
    x.push_back(f);
  }
  const float anchors[] = {0.0f, 0x1p-126f, 0x1p-12f, 0.5f, 0.78539816f, 1.0f, 1.57079633f, 4.71238899f,
                           9.42477798f, 252.898209f, 505.796417f, 1011.59283f, 4096.0f, 0x1p25f, INFINITY,
                           0x1p-123f,                            // erf_inv
                           0.92987350f, 0.99903431f, 0.47031821f,  // erf_inv's log form: w = 2, 6.25, 1/4
                           0x1.1995bcp-6f, 0x1.0c6444p-5f,  // erf_inv: 2 ulps off with one piece below w = 2
                           0x1p-25f, 20.0f, 87.0f,               // sigmoid
                           0.625f, 9.0f,                         // tanh
                           2.0f, 4.0f, 0x1p-100f, 1.5f, 2.5f, 3.0f, 3.5f,  // erf's pieces
                           0x1.e775fp-1f, 0x1.f754a4p-1f,  // erf: 2 ulps off when its fit ran to 1
                           88.0f, -87.0f, 0.35f, 17.4f, 0x1p-24f,  // exp, expm1
                           20.0f,                                  // sinh, cosh
                           6.0f, 8.0f, 9.0f};  // erfc: its G pieces, the exact path from 8
  // The piece tables' edges: erf_inv's u = 1 - x^2 and atanh's u = 1 - x at 2^-k and 1.5 2^-k,
  // asinh's x and acosh's x - 1 at 2^k and 1.5 2^k.
  std::vector<float> points(std::begin(anchors), std::end(anchors));
  for (int k = 1; k <= 24; ++k)
    for (double m : {1.0, 1.5}) {
      points.push_back(float(std::sqrt(1.0 - m * std::ldexp(1.0, -k))));
      points.push_back(float(1.0 - m * std::ldexp(1.0, -k)));
    }
  for (int k = -1; k <= 12; ++k)
    for (double m : {1.0, 1.5}) {
      points.push_back(float(m * std::ldexp(1.0, k)));
      points.push_back(float(1.0 + m * std::ldexp(1.0, k)));
    }
  for (float a : points) {
    for (float sign : {1.0f, -1.0f}) {
      float lo = a, hi = a;
      for (int k = 0; k < 48; ++k) {
        lo = std::nextafter(lo, 0.0f);
        hi = std::nextafter(hi, INFINITY);
        x.push_back(sign * lo);
        x.push_back(sign * hi);
      }
      x.push_back(sign * a);
    }
  }
  x.push_back(NAN);
  x.push_back(-NAN);
  return x;
}

// NX_VULKAN_F32_MATH=fast: every result within 1 ulp of the correctly rounded one (the accurate
// f64 function rounded once), through the op library (unsettled lanes in the second kernel and
// in place) and on a device without f64; the ulp1 function alone settles most of the sample.
TEST_P(MathTest, FastF32MathWithinOneUlp) {
  if (!gen::has_math_ulp1_f32(GetParam())) GTEST_SKIP() << "no fast f32 math for this function";
  if (!device().caps().float64) GTEST_SKIP() << "the reference needs f64";
  size_t sample = 0;  // the function's own sample comes first
  auto x = ulp1_inputs(fn(), seed(), sample);
  std::vector<float> y = second_operands(fn(), x);  // atan2's: x reversed, then the special pairs
  if (!y.empty()) special_pairs(x, y);
  if (GetParam() == "pow") {
    // pow's error grows with |y log x|: 2^18 pairs with it uniform in [-90, 90] (past both ends
    // of the fast form's range) and x of every exponent.
    std::mt19937 rng(seed() + 13);
    std::uniform_real_distribution<double> t(-90.0, 90.0), e(-126.0, 128.0);
    for (int i = 0; i < (1 << 18); ++i) {
      const float b = float(std::exp2(e(rng)));
      if (b == 1.0f || !std::isfinite(b)) continue;
      x.push_back(b);
      y.push_back(float(t(rng) / std::log(double(b))));
    }
  }
  auto want = mathref::run_f32(device(), fn(), Path::F32ViaF64Accurate, x, ref_y(x, y));
  auto check = [&](const std::vector<float>& got, const std::string& what) {
    size_t bad = 0, one = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const uint64_t d = mathref::f32_ulp_distance(got[i], want[i]);
      one += d == 1;
      if (d > 1 && bad++ < 5)
        ADD_FAILURE() << GetParam() << "(" << operands(x, y, i) << "), " << what << ": " << std::hexfloat << got[i]
                      << ", correctly rounded " << want[i];
    }
    EXPECT_EQ(bad, 0u) << what << ", of " << x.size();
    RecordProperty(what + "_one_ulp", std::to_string(one) + " of " + std::to_string(x.size()));
  };
  ScopedEnv mode("NX_VULKAN_F32_MATH", "fast");
  for (const char* settle : {"second", "inline"}) {
    ScopedEnv s("NX_VULKAN_SETTLE", settle);
    check(op_f32(device(), GetParam(), x, y), std::string("op, ") + settle);
  }
  auto dev = f32_only();
  check(op_f32(*dev, GetParam(), x, y), "op without f64");
  auto alone = mathref::run_ulp1_f32(device(), GetParam(), x, y);
  std::vector<float> settled_got(x.size());
  size_t settled = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    settled += alone[i].first;
    settled_got[i] = alone[i].first ? alone[i].second : want[i];
  }
  check(settled_got, "alone");
  // Where this device's fma does not round once (lavapipe), the residual variant that NVIDIA runs
  // too, its fma emulated exactly in f64: so both variants are checked here.
  if (!device().caps().fused_fma_f32) {
    auto fused = mathref::run_ulp1_f32(device(), GetParam(), x, y, mathref::Residual::FusedFmaInF64);
    std::vector<float> fused_got(x.size());
    for (size_t i = 0; i < x.size(); ++i) fused_got[i] = fused[i].first ? fused[i].second : want[i];
    check(fused_got, "alone, fused-fma residual in f64");
  }
  size_t sample_settled = 0;
  for (size_t i = 0; i < sample; ++i) sample_settled += alone[i].first;
  // (atan2's sample spans every exponent of both operands; it takes the middle 128 of each.)
  const double least = fn().arity == 2 ? 0.25 : 0.5;
  EXPECT_GT(double(sample_settled), least * double(sample)) << "the fast f32 math settles too little";
  RecordProperty("settled", std::to_string(settled) + " of " + std::to_string(x.size()));
}

TEST_F(DeviceTest, FastF32MathModeIsChecked) {
  std::vector<float> x{0.5f, 2.0f};
  Tensor t = from_binary(device(), DType::F32, {2}, std::as_bytes(std::span(x)));
  ScopedEnv mode("NX_VULKAN_F32_MATH", "quick");
  for (UnaryOp op : {UnaryOp::atan, UnaryOp::exp}) {  // with a fast f32 form and without
    try {
      unary(op, t, DType::F32);
      ADD_FAILURE() << op_name(op) << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find(op_name(op) + std::string(": NX_VULKAN_F32_MATH")), std::string::npos)
          << e.what();
    }
  }
  EXPECT_NO_THROW(unary(UnaryOp::negate, t, DType::F32));  // not a math function
  // set_f32_math overrides the variable, "" hands back to it, and it checks its argument.
  std::vector<float> many(4096);
  for (size_t i = 0; i < many.size(); ++i) many[i] = 1.0f + float(i) * 0x1p-10f;
  Tensor m = from_binary(device(), DType::F32, {int64_t(many.size())}, std::as_bytes(std::span(many)));
  ScopedEnv exact_env("NX_VULKAN_F32_MATH", "exact");
  const auto exact = to_binary(unary(UnaryOp::atan, m, DType::F32));
  set_f32_math("fast");
  const auto fast = to_binary(unary(UnaryOp::atan, m, DType::F32));
  set_f32_math("");
  EXPECT_NE(fast, exact) << "set_f32_math(\"fast\") took no effect (or every result was correctly rounded)";
  EXPECT_EQ(to_binary(unary(UnaryOp::atan, m, DType::F32)), exact);
  EXPECT_THROW(set_f32_math("quick"), Error);
}

std::vector<std::string> names() {
  std::vector<std::string> v;
  for (const auto& f : mathref::math_functions()) v.push_back(f.name);
  return v;
}
INSTANTIATE_TEST_SUITE_P(Math, MathTest, ::testing::ValuesIn(names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// Exact results that are easy to get wrong, checked bit for bit on every path.
struct Exact {
  const char* fn;
  double x, y, want;
  std::optional<double> want_f64 = {};  // where f64 tensors differ (math_f64_function: Nx's bits)
};
const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
const Exact kExact[] = {
    {"log", -1, 0, nan},       {"log", 0, 0, -inf},        {"log", -0.0, 0, -inf},     {"log", inf, 0, inf},
    {"log", 1, 0, 0},          {"exp", -inf, 0, 0},        {"exp", inf, 0, inf},       {"exp", 0, 0, 1},
    {"expm1", -0.0, 0, -0.0},  {"expm1", -inf, 0, -1},     {"log1p", -1, 0, -inf},     {"log1p", -2, 0, nan},
    {"log1p", -0.0, 0, -0.0},  {"erf_inv", 1, 0, inf},     {"erf_inv", -1, 0, -inf},   {"erf_inv", -0.0, 0, -0.0, 0.0},
    {"erf_inv", 1.5, 0, nan},  {"acosh", 0.5, 0, nan},     {"acosh", 1, 0, 0},         {"atanh", 1, 0, inf},
    {"atanh", -1, 0, -inf},    {"atanh", 2, 0, nan},       {"asin", 2, 0, nan},        {"acos", 1, 0, 0},
    {"sqrt", -0.0, 0, -0.0},   {"sqrt", -1, 0, nan},       {"sqrt", inf, 0, inf},      {"sqrt", 4, 0, 2},
    {"rsqrt", 0, 0, inf},      {"rsqrt", -0.0, 0, -inf},   {"rsqrt", inf, 0, 0},       {"rsqrt", 4, 0, 0.5},
    {"cbrt", -27, 0, -3},      {"cbrt", -0.0, 0, -0.0},    {"cbrt", -inf, 0, -inf},    {"sin", -0.0, 0, -0.0},
    {"sin", inf, 0, nan},      {"cos", -inf, 0, nan},      {"tan", -0.0, 0, -0.0},     {"sigmoid", 1000, 0, 1},
    {"sigmoid", -1000, 0, 0},  {"sigmoid", 0, 0, 0.5},     {"tanh", -inf, 0, -1},      {"tanh", -0.0, 0, -0.0},
    {"cosh", -inf, 0, inf},    {"sinh", -inf, 0, -inf},    {"asinh", -0.0, 0, -0.0},   {"atan", -inf, 0, -M_PI_2},
    {"erf", -0.0, 0, -0.0},    {"erf", inf, 0, 1},         {"erfc", inf, 0, 0},        {"erfc", -inf, 0, 2},
    {"pow", nan, 0, 1},        {"pow", 1, nan, 1},         {"pow", -8, 1.0 / 3, nan},  {"pow", -2, 3, -8},
    {"pow", -0.0, -3, -inf},   {"pow", -0.0, -2, inf},     {"pow", -0.0, 3, -0.0},     {"pow", -inf, 3, -inf},
    {"pow", -inf, -3, -0.0},   {"pow", -1, inf, 1},        {"pow", 0.5, -inf, inf},    {"pow", 2, -inf, 0},
    {"pow", 2, 10, 1024},      {"pow", -2, -2, 0.25},      {"pow", 10, 2, 100},        {"pow", 0, 0, 1},
    {"atan2", 0, -0.0, M_PI},  {"atan2", -0.0, -0.0, -M_PI}, {"atan2", 0, 0, 0},       {"atan2", -0.0, 1, -0.0},
    {"atan2", 1, -inf, M_PI},  {"atan2", inf, inf, M_PI_4}, {"atan2", -inf, -inf, -3 * M_PI_4},
    {"atan2", 1, 0, M_PI_2},   {"atan2", nan, 1, nan},
};


TEST_F(DeviceTest, MathExactSpecialValuesAllPaths) {
  auto f32dev = open_device(DeviceOptions{.disable = {"f64"}});
  // One launch per function and path (kernels are slow to build on lavapipe).
  for (const auto& f : mathref::math_functions()) {
    std::vector<Exact> cases;
    for (const auto& e : kExact)
      if (std::string(e.fn) == f.name) cases.push_back(e);
    if (cases.empty()) continue;
    std::vector<double> x, y;
    std::vector<float> xf, yf;
    for (const auto& e : cases) {
      x.push_back(e.x); y.push_back(e.y);
      xf.push_back(float(e.x)); yf.push_back(float(e.y));
    }
    auto h = mathref::run_f32(*f32dev, f, Path::F32Only, xf, yf);
    for (size_t i = 0; i < cases.size(); ++i)
      EXPECT_TRUE(same_result(h[i], float(cases[i].want))) << f.name << "(" << x[i] << ", " << y[i] << ") f32 only = " << h[i];
    if (!device().caps().float64) continue;
    auto g = mathref::run_f64(device(), f, x, y);
    auto v = mathref::run_f32(device(), f, Path::F32ViaF64, xf, yf);
    for (size_t i = 0; i < cases.size(); ++i) {
      EXPECT_TRUE(same_result(g[i], cases[i].want_f64.value_or(cases[i].want))) << f.name << "(" << x[i] << ", " << y[i] << ") f64 = " << g[i];
      EXPECT_TRUE(same_result(v[i], float(cases[i].want))) << f.name << "(" << x[i] << ", " << y[i] << ") f32 via f64 = " << v[i];
    }
  }
}

// Subnormal inputs and outputs: lavapipe does not promise denormal preservation, so the library
// builds and reads them by integer code. These results must be exact on every device.
TEST_F(DeviceTest, MathSubnormals) {
  auto f32dev = open_device(DeviceOptions{.disable = {"f64"}});
  const float fd = std::numeric_limits<float>::denorm_min();
  const double dd = std::numeric_limits<double>::denorm_min();
  struct Case { const char* fn; std::vector<float> xf; std::vector<double> xd; } cases[] = {
      {"sqrt", {fd, 7 * fd, -fd}, {dd, 7 * dd}}, {"log", {fd, 3 * fd}, {dd, 7 * dd}},
      {"exp", {-100.0f, -103.5f}, {-740.0, -745.0}}, {"cbrt", {fd, -5 * fd}, {dd, -7 * dd}},
      {"rsqrt", {fd}, {dd}}, {"sin", {-fd}, {-dd}}, {"erf", {5 * fd}, {5 * dd}}, {"atan", {fd}, {dd}},
      {"expm1", {fd}, {dd}}, {"log1p", {-fd}, {-dd}}, {"erfc", {10.0f}, {26.5}}, {"erf_inv", {fd}, {dd}}};
  for (const auto& c : cases) {
    const auto& fn = mathref::math_function(c.fn);
    std::vector<float> zf(c.xf.size(), 0.0f);
    auto h = mathref::run_f32(*f32dev, fn, Path::F32Only, c.xf, zf);
    for (size_t i = 0; i < c.xf.size(); ++i)
      EXPECT_LE(mathref::ulp_error_f32(h[i], fn.ref(c.xf[i], 0)), 1.0) << c.fn << "(" << c.xf[i] << ") f32 only = " << h[i];
    if (!device().caps().float64) continue;
    auto g = mathref::run_f32(device(), fn, Path::F32ViaF64, c.xf, zf);
    for (size_t i = 0; i < c.xf.size(); ++i) {
      const float want = static_cast<float>(fn.ref(c.xf[i], 0));
      EXPECT_TRUE(same_result(g[i], want)) << c.fn << "(" << c.xf[i] << ") f32 via f64 = " << g[i] << ", want " << want;
    }
    std::vector<double> zd(c.xd.size(), 0.0);
    auto d = mathref::run_f64(device(), fn, c.xd, zd);
    for (size_t i = 0; i < c.xd.size(); ++i)
      EXPECT_LE(mathref::ulp_error_f64(d[i], fn.ref(c.xd[i], 0)), 1.0) << c.fn << "(" << c.xd[i] << ") f64 = " << d[i];
  }
}

// pow's fast path settles y log|x| >= 89 as inf and <= -104 as +-0 by t's high word: the op gives
// the accurate function's bits for pairs whose y ln|x| lies on either side of those thresholds and
// of the true ones (88.7228, where f32 overflows, and -103.972, below which it rounds to 0; the
// subnormal results from -87.34 down are left to the accurate function), for several bases and
// both signs of an odd integer power.
TEST_F(DeviceTest, PowFastPathAtOverflowAndUnderflow) {
  if (!device().caps().float64) GTEST_SKIP() << "device without f64";
  std::vector<float> x, y;
  for (float base : {2.0f, 3.0f, 0.5f, 10.0f, 1.5f, 0.1f, 1.0009765625f, 7.25f})
    for (double t : {88.7228, 88.75, 89.0, -87.3365, -103.972, -104.0}) {
      float yc = static_cast<float>(t / std::log(static_cast<double>(base)));
      for (int s = -300; s <= 300; ++s) {
        float v = yc;
        for (int k = 0; k < std::abs(s); ++k) v = std::nextafter(v, s < 0 ? -1e30f : 1e30f);
        x.push_back(base);
        y.push_back(v);
      }
    }
  for (float v : {127.0f, 129.0f, -149.0f, -151.0f}) {  // (-2)^odd: the sign of an overflow and an underflow
    x.push_back(-2.0f);
    y.push_back(v);
  }
  auto op = op_f32(device(), "pow", x, y);
  auto accurate = mathref::run_f32(device(), mathref::math_function("pow"), Path::F32ViaF64Accurate, x, y);
  size_t diffs = 0, infs = 0, zeros = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    infs += std::isinf(accurate[i]);
    zeros += accurate[i] == 0.0f;
    if (!same_result(op[i], accurate[i]) && diffs++ < 5)
      ADD_FAILURE() << "pow(" << operands(x, y, i) << "): op " << std::hexfloat << op[i] << ", accurate " << accurate[i];
  }
  EXPECT_EQ(diffs, 0u) << "of " << x.size();
  EXPECT_GT(infs, x.size() / 8);  // the sample reaches both sides of both thresholds
  EXPECT_GT(zeros, x.size() / 8);
  // The fast path alone settles those infs and zeros itself, with the same bits.
  auto alone = mathref::run_fast_f32(device(), "pow", x, y);
  size_t settled_edges = 0, alone_diffs = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!alone[i].first) continue;
    settled_edges += std::isinf(alone[i].second) || alone[i].second == 0.0f;
    if (!same_result(alone[i].second, accurate[i]) && alone_diffs++ < 5)
      ADD_FAILURE() << "pow(" << operands(x, y, i) << "): fast alone " << std::hexfloat << alone[i].second
                    << ", accurate " << accurate[i];
  }
  EXPECT_EQ(alone_diffs, 0u);
  EXPECT_GT(settled_edges, x.size() / 8);
}

// The lanes a fast path leaves unsettled can be settled by a second kernel over a list of their
// indices (room for n / 64 + 1024; forced here); where more are unsettled than the list holds,
// that kernel settles every element instead. Both ways give the accurate function's bits: log of
// positive subnormals is never settled by the fast path, so these inputs overflow the list (and
// the 2000 below do not), with settled inputs among them.
TEST_F(DeviceTest, UnsettledLanesBeyondTheListAreSettled) {
  if (!device().caps().float64) GTEST_SKIP() << "device without f64";
  const auto& log_fn = mathref::math_function("log");
  ScopedEnv settle("NX_VULKAN_SETTLE", "second");
  for (size_t unsettled : {size_t(2000), size_t(60001)}) {
    std::vector<float> x = random_floats(70003, 0.01f, 10.0f);
    // Positive subnormals: the fast path sees them flushed to zero and leaves them (zeros and
    // negatives, whose results are fixed, it settles: gen::math_special_f32).
    for (size_t i = 0; i < unsettled; ++i) x[(i * 7919) % x.size()] = 1e-40f * float(1 + i % 13);
    auto op = op_f32(device(), "log", x);
    auto accurate = mathref::run_f32(device(), log_fn, Path::F32ViaF64Accurate, x, x);
    size_t diffs = 0;
    for (size_t i = 0; i < x.size(); ++i)
      if (!same_result(op[i], accurate[i]) && diffs++ < 5)
        ADD_FAILURE() << "log(" << std::hexfloat << x[i] << ") at " << i << ": op " << op[i] << ", accurate " << accurate[i];
    EXPECT_EQ(diffs, 0u) << unsettled << " unsettled of " << x.size();
  }
}

// Inputs with fixed results (NaN, zeros, infinities, outside the domain) settle in the first
// kernel by their bits (gen::math_special_f32, unary and binary): a tensor of nothing else (and of
// the finite values next to the domains' edges) gives the accurate function's bits for every math
// function, pow and atan2, in both settle modes, and in the fast mode the same within 1 ulp (its
// contract for the finite values; a wrong entry in the table is further off).
TEST_F(DeviceTest, MathSpecialInputsGiveTheAccurateBits) {
  if (!device().caps().float64) GTEST_SKIP() << "device without f64";
  const uint32_t bits[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u,
                           0x7f800001u, 0x3f800000u, 0xbf800000u, 0x40000000u, 0xc0000000u, 0x3f000000u,
                           0xbf000000u, 0x00000001u, 0x80000001u, 0x7f7fffffu, 0xff7fffffu, 0x3f800001u,
                           0xbf800001u, 0x3f7fffffu, 0xc1200000u, 0x41a00000u};
  std::vector<float> specials;
  for (uint32_t b : bits) {
    float f;
    std::memcpy(&f, &b, 4);
    specials.push_back(f);
  }
  for (const auto& f : mathref::math_functions()) {
    std::vector<float> x, y;
    for (int rep = 0; rep < 100; ++rep)  // past the list's n/64 + 1024, were they listed
      for (float a : specials) {
        if (f.arity == 1) {
          x.push_back(a);
          continue;
        }
        for (float b : specials) x.push_back(a), y.push_back(b);
      }
    auto accurate = mathref::run_f32(device(), f, Path::F32ViaF64Accurate, x, f.arity == 2 ? y : x);
    for (const char* math : {"exact", "fast"})
      for (const char* settle : {"inline", "second"}) {
        ScopedEnv mode("NX_VULKAN_F32_MATH", math), place("NX_VULKAN_SETTLE", settle);
        auto op = op_f32(device(), f.name, x, y);
        size_t bad = 0;
        const bool fast = std::string(math) == "fast";
        for (size_t i = 0; i < x.size(); ++i)
          if (!same_result(op[i], accurate[i]) && !(fast && mathref::f32_ulp_distance(op[i], accurate[i]) <= 1) &&
              bad++ < 5)
            ADD_FAILURE() << f.name << "(" << operands(x, y, i) << "), " << math << ", " << settle << ": op "
                          << std::hexfloat << op[i] << ", accurate " << accurate[i];
        EXPECT_EQ(bad, 0u) << f.name;
      }
  }
}

// The math kernels' tables (2^(j/64), the log cells) are uploaded once per device and
// kept until it closes: repeated calls allocate nothing and record into one batch. Uploading
// them per call made each call on a zero-copy device wait for the previous one (the table's
// block, back in the cache, was still in use) and submit; through staging it took a staging
// buffer and a copy per call. The device still closes when its users drop it.
TEST_F(DeviceTest, MathTablesAreUploadedOncePerDevice) {
  if (!device().caps().float64) GTEST_SKIP() << "device without f64 (the tables are the f64 fast paths')";
  std::weak_ptr<Device> closed;
  {
    auto dev = Device::open_index(0, DeviceOptions{.batch_max = 1000});  // one batch: a submission is a wait
    const std::vector<float> x = random_floats(1000, 0.1f, 2.0f), y = random_floats(1000, -2.0f, 2.0f);
    Tensor tx = from_binary(*dev, DType::F32, {1000}, std::as_bytes(std::span(x)));
    Tensor ty = from_binary(*dev, DType::F32, {1000}, std::as_bytes(std::span(y)));
    auto round = [&] {
      return std::vector<Tensor>{unary(UnaryOp::exp, tx, DType::F32), unary(UnaryOp::log, tx, DType::F32),
                                 unary(UnaryOp::atan, ty, DType::F32), binary(BinaryOp::pow, tx, ty, DType::F32, {1000})};
    };
    auto first = round();  // four constants: exp's and log's tables, atan's unused word, pow's two tables
    dev->sync();
    const MemoryStats before = dev->memory_stats();
    EXPECT_EQ(before.constant_buffers, 4u);
    const uint64_t submissions = dev->submissions();
    std::vector<std::vector<Tensor>> rounds;
    for (int i = 0; i < 10; ++i) rounds.push_back(round());
    EXPECT_EQ(dev->submissions(), submissions) << "a math call submitted (waited for the one before)";
    dev->sync();
    const MemoryStats after = dev->memory_stats();
    EXPECT_EQ(after.constant_buffers, 4u);
    EXPECT_EQ(after.constant_bytes, before.constant_bytes);
    for (const auto& r : rounds)
      for (size_t k = 0; k < r.size(); ++k) EXPECT_EQ(to_binary(r[k]), to_binary(first[k])) << "op " << k;
    rounds.clear();
    first.clear();
    tx = Tensor{};
    ty = Tensor{};
    dev->sync();
    EXPECT_EQ(dev->memory_stats().live_buffers, 0u) << "the tables are not live buffers";
    closed = dev;
  }
  EXPECT_TRUE(closed.expired()) << "the device's tables keep it open";
}

}  // namespace
}  // namespace nxvk::test
