// Our own math library in GLSL: Vulkan's built-ins are not accurate enough on every device
// (only add/sub/mul are correctly rounded; GLSL.std.450 has no f64 exp/log/sin/pow at all).
// math_library_glsl(caps) returns GLSL, appended after gen::preamble, defining for every
// NAME in {exp expm1 log log1p sigmoid cos sin tan cosh sinh tanh acos asin atan acosh asinh
// atanh sqrt rsqrt cbrt erf erfc erf_inv} and for pow(x, y), atan2(y, x):
//   double nx_NAME(double x)     (only where caps.float64)  f64 path, also used for f32/f16/bf16
//                                tensors on f64 devices (rounded once by nx_double_to_float)
//   float  nx_NAME_f32(float x)  f32-only path for devices without f64
// and, in math_fast_f32_glsl(binding) (after the library; only where caps.float64; its kernels
// bind math_fast_f32_table(NAME) and run math_fast_f32_setup(NAME) at the start of main()),
//   bool   nx_NAME_fast_f32(double x, out float r)  for NAME in {exp expm1 log log1p sqrt
//                                rsqrt tanh sinh cosh sin cos tan erf erfc asinh acosh atanh}:
//                                r = the f32 result of nx_NAME where the fast path settles it,
//                                else false
//   float  nx_NAME_to_f32(double x)  the same, with nx_NAME as the fallback
// and, in math_ff_f32_glsl(binding, caps) (after the library; f32 arithmetic only, with or
// without f64; its kernels bind math_ff_f32_table(NAME) and run math_ff_f32_setup(NAME) at the
// start of main()),
//   bool   nx_NAME_ff_f32(float x, out float r)  for NAME in {exp log sigmoid sqrt}: r = the
//                                correctly rounded f32 result where it settles, else false (then
//                                the caller runs the accurate nx_NAME, or nx_NAME_f32 without f64)
// and, in math_ulp1_f32_glsl(binding, caps, NAME) (the fast f32 math mode; f32 arithmetic; its
// kernels bind math_ulp1_f32_table(NAME) and run math_ulp1_f32_setup(NAME) at the start of main();
// NAME sizes the shared memory its piece table takes),
//   bool   nx_NAME_ulp1_f32(float x, out float r)  for NAME in {exp expm1 log log1p sigmoid
//                                tanh sinh cosh sin cos tan atan asin acos atanh asinh acosh erf
//                                erfc erf_inv rsqrt cbrt}, and nx_NAME_ulp1_f32(float a, float b, out float r)
//                                for NAME in {atan2 pow}:
//                                r within 1 ulp of the correctly rounded f32 result, else false
// Special values follow C99 Annex F (as Nx.BinaryBackend, which calls the C library through
// Erlang). The f64 path of sigmoid, rsqrt, acosh, atanh, sinh and erfc gives glibc 2.36's bits
// (Nx.BinaryBackend's results, math_glibc.inc) rather than the most accurate ones.
// docs/CAPABILITIES.md states the measured accuracy of each function.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "nxvk/capabilities.hpp"
#include "nxvk/types.hpp"

namespace nxvk::gen {

std::string math_library_glsl(const Capabilities& caps);
// The f64 function that an f64 tensor's NAME calls: nx_NAME, except nx_expm1_nx and
// nx_erf_inv_nx, which give Nx.BinaryBackend's f64 bits (math_glibc.inc; f32, f16 and bf16
// results keep the accurate nx_NAME).
std::string math_f64_function(const std::string& name);
// Whether NAME has a fast nx_NAME_to_f32; their GLSL (math_fast_f32.inc, reading buffer
// `table_binding`), the statements main() must start with, and the words to bind there (one
// word where NAME needs no table).
bool has_math_fast_f32(const std::string& name);
// Whether the f64 path of `name` is a port of glibc's code (sigmoid, rsqrt, acosh, atanh, sinh,
// erfc: math_glibc.inc), which f32 results fall back to.
bool math_f64_is_glibc(const std::string& name);
// `out`: the result's format, f32, f16 or bf16 (the rounding test and the fallback's rounding:
// nx_round_fast, nx_round_out; f16 rounds the f64 value directly, as Nx.BinaryBackend does).
std::string math_fast_f32_glsl(uint32_t table_binding, DType out = DType::F32);
std::string math_fast_f32_setup(const std::string& name);
std::span<const uint32_t> math_fast_f32_table(const std::string& name);
// Whether NAME has nx_NAME_ff_f32; their GLSL (reading buffer `table_binding`), the statements
// main() must start with, and the words to bind there (one word where NAME needs no table).
bool has_math_ff_f32(const std::string& name);
// Whether the op library runs it for f32 on a device like `caps` (where it measured faster than
// the alternative: math_ff_f32.inc lists the figures).
bool use_math_ff_f32(const Capabilities& caps, const std::string& name);
// Whether nx_NAME_ff_f32 settles every input (its kernels need no fallback, and so no f64).
bool math_ff_f32_settles_all(const std::string& name);
// The fast first stage of one that settles all (math_ff_f32.inc), else "".
std::string math_ff_f32_first_stage(const std::string& name);
std::string math_ff_f32_glsl(uint32_t table_binding, const Capabilities& caps);
std::string math_ff_f32_setup(const std::string& name);
std::span<const uint32_t> math_ff_f32_table(const std::string& name);
// The f32 math mode: nxvk::set_f32_math's, else NX_VULKAN_F32_MATH's (read per op, so a process
// may switch): "exact" (the default: correctly rounded f32 results) or "fast" (within 1 ulp of
// them, from f32 arithmetic, for the functions has_math_ulp1_f32 names). Another value of the
// variable fails (InvalidArgument) naming `op`.
bool f32_math_fast(const std::string& op);
// Whether NAME has bool nx_NAME_ulp1_f32(float x, out float r) (math_ulp1_f32.inc): r within
// 1 ulp of the correctly rounded f32 result, else false (the exact path's input); their GLSL
// (after the library, reading buffer `table_binding`), the statements main() must start with,
// and the words to bind there (one word where NAME needs no table).
bool has_math_ulp1_f32(const std::string& name);
std::string math_ulp1_f32_glsl(uint32_t table_binding, const Capabilities& caps, const std::string& name);
std::string math_ulp1_f32_setup(const std::string& name);
std::span<const uint32_t> math_ulp1_f32_table(const std::string& name);
// GLSL statements that settle f32 `v` (clearing `slow`) for the inputs `a` of unary NAME whose
// results are fixed by the input alone: NaN, and NAME's zeros, infinities and inputs outside its
// domain (log(0), sqrt(-1), acosh(0.5), ...), which the f32 fast paths leave to the accurate
// function. Their kernels run them only where the fast path left a lane unsettled.
std::string math_special_f32(const std::string& name);
// The same for binary NAME (pow, atan2; "" for others) of f32 variables a and b: pow's x^+-0,
// +0^y and negative x to a non-integer y; atan2's NaN, zero and infinite operands.
std::string math_special_f32(const std::string& name, const std::string& a, const std::string& b);
// GLSL statements that settle bf16 results of unary NAME whose f32 result is a bf16 value
// (saturation, f(x) = x or 1 near 0), which the bf16 settle test leaves ("" for NAME without).
std::string math_bf16_fixed_results(const std::string& name);

}  // namespace nxvk::gen
