// Host reference and device runner for the GLSL math library (src/ops/math_library.cpp):
// evaluates nx_<fn> on the device through tiny generated kernels and measures errors in ulps
// against long double libm (x87, 64-bit significand). Shared by the GoogleTest suite and the
// nxvk_ulp tool.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nxvk/runtime.hpp"

namespace nxvk::mathref {

struct MathFn {
  const char* name;
  int arity;                           // 1, or 2 for pow(x, y) and atan2(y, x)
  long double (*ref)(long double, long double);  // long double reference
  double (*ref_f64)(double, double);   // C library in double ("f64 libm", what Nx computes)
  double lo, hi;                       // the interesting range for dense sampling
};
const std::vector<MathFn>& math_functions();
const MathFn& math_function(const std::string& name);

// The three ways an op computes: f64 inputs/outputs; f32 through nx_<fn> in double and
// nx_double_to_float; f32 through nx_<fn>_f32.
// F32ViaF64 is what the op library runs for an f32 result on an f64 device (the fast path of the
// functions that have one, math_fast_f32.inc); F32ViaF64Accurate always the accurate f64 function.
enum class Path { F64, F32ViaF64, F32ViaF64Accurate, F32Only };
const char* path_name(Path p);

// Evaluates fn on the device (x, and y for binary functions). Inputs/outputs are f32 bit
// patterns for the F32 paths, f64 for the F64 path (as doubles).
// The same result: both NaN (any payload), or the same bits (so -0.0 differs from 0.0).
template <class F>
bool same_result(F got, F want) {
  if (std::isnan(want)) return std::isnan(got);
  return std::memcmp(&got, &want, sizeof(F)) == 0;
}

// How many f32 values lie between got and want (0: same_result), counting -0 and +0 as
// neighbours; UINT64_MAX where one is NaN and the other not. The fast f32 math mode's measure.
inline uint64_t f32_ulp_distance(float got, float want) {
  if (same_result(got, want)) return 0;
  if (std::isnan(got) || std::isnan(want)) return UINT64_MAX;
  auto key = [](float v) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    const int64_t mag = b & 0x7fffffffu;
    return (b >> 31) ? -mag - 1 : mag;
  };
  const int64_t d = key(got) - key(want);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

// Nx.BinaryBackend's f64 erf_inv, Complex.erf_inv (what nx_erf_inv_nx reproduces), with this
// host's log and sqrt, every product and sum rounded.
double complex_erf_inv(double z);

// nx_NAME_ff_f32 alone (math_ff_f32.inc): per input, whether it settled and its result.
std::vector<std::pair<bool, float>> run_ff_f32(Device& dev, const std::string& name, const std::vector<float>& x);
// nx_NAME_fast_f32 alone (math_fast_f32.inc, a device with f64): the same.
// y: the second operand of a binary function (atan2), else empty.
std::vector<std::pair<bool, float>> run_fast_f32(Device& dev, const std::string& name, const std::vector<float>& x,
                                                 const std::vector<float>& y = {});
// nx_NAME_ulp1_f32 alone (math_ulp1_f32.inc, the fast f32 math mode): the same. Its residuals
// c - a b as this device runs them (Device: one fma where it rounds once, else Dekker's product),
// or FusedFmaInF64: the fma variant (kMathUlp1ResidualFma) with the fma computed in f64, exact,
// which checks that variant on a device whose own fma does not round once (lavapipe).
enum class Residual { Device, FusedFmaInF64 };
std::vector<std::pair<bool, float>> run_ulp1_f32(Device& dev, const std::string& name, const std::vector<float>& x,
                                                 const std::vector<float>& y = {},
                                                 Residual residual = Residual::Device);
std::vector<float> run_f32(Device& dev, const MathFn& fn, Path path, const std::vector<float>& x,
                           const std::vector<float>& y);
std::vector<double> run_f64(Device& dev, const MathFn& fn, const std::vector<double>& x,
                            const std::vector<double>& y);

// Error of `got` against the exact value `ref` in ulps of the format (the binade of ref;
// subnormal ulp below the normal range). NaN/inf mismatches give +inf; matching specials 0.
double ulp_error_f32(float got, long double ref);
double ulp_error_f64(double got, long double ref);

// Inputs: random bit patterns over the whole range, dense samples of [lo, hi], edge cases.
std::vector<float> inputs_f32(const MathFn& fn, size_t n, uint64_t seed, bool second_operand = false);
std::vector<double> inputs_f64(const MathFn& fn, size_t n, uint64_t seed, bool second_operand = false);

struct Stats {
  double max_ulp = 0;
  float worst_x = 0, worst_y = 0;   // f32 paths
  double worst_xd = 0, worst_yd = 0;  // f64 path
  uint64_t count = 0;
  uint64_t not_libm_identical = 0;  // results whose bits differ from "f64 libm then round"
  uint64_t special_mismatch = 0;    // NaN / inf / zero-sign disagreements
  // The first few inputs whose bits differ from libm (f64 path: x, y, ours, libm's).
  struct Diff { double x, y, got, lib; };
  std::vector<Diff> first_diffs;
};
Stats measure_f32(Device& dev, const MathFn& fn, Path path, const std::vector<float>& x,
                  const std::vector<float>& y);
Stats measure_f64(Device& dev, const MathFn& fn, const std::vector<double>& x,
                  const std::vector<double>& y);

}  // namespace nxvk::mathref
