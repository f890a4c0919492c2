#include "ops/math_library.hpp"

namespace nxvk::gen {
namespace {

// First version: built-in based (correct in value, not yet within 1 ulp).
constexpr const char* kF32 = R"GLSL(
float nx_exp_f32(float x) { return exp(x); }
float nx_expm1_f32(float x) { return abs(x) < 1e-5 ? x + 0.5 * x * x : exp(x) - 1.0; }
float nx_log_f32(float x) { return x < 0.0 ? uintBitsToFloat(0x7fc00000u) : log(x); }
float nx_log1p_f32(float x) { return abs(x) < 1e-5 ? x - 0.5 * x * x : nx_log_f32(1.0 + x); }
float nx_sigmoid_f32(float x) { return 1.0 / (1.0 + exp(-x)); }
float nx_cos_f32(float x) { return cos(x); }
float nx_sin_f32(float x) { return sin(x); }
float nx_tan_f32(float x) { return tan(x); }
float nx_cosh_f32(float x) { return cosh(x); }
float nx_sinh_f32(float x) { return sinh(x); }
float nx_tanh_f32(float x) { return tanh(x); }
float nx_acos_f32(float x) { return acos(x); }
float nx_asin_f32(float x) { return asin(x); }
float nx_atan_f32(float x) { return atan(x); }
float nx_acosh_f32(float x) { return acosh(x); }
float nx_asinh_f32(float x) { return asinh(x); }
float nx_atanh_f32(float x) { return atanh(x); }
float nx_sqrt_f32(float x) { return sqrt(x); }
float nx_rsqrt_f32(float x) { return 1.0 / sqrt(x); }
float nx_cbrt_f32(float x) { return sign(x) * pow(abs(x), 1.0 / 3.0); }
float nx_erf_f32(float x) {
  float t = 1.0 / (1.0 + 0.3275911 * abs(x));
  float y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * exp(-x * x);
  return sign(x) * y;
}
float nx_erfc_f32(float x) { return 1.0 - nx_erf_f32(x); }
float nx_erf_inv_f32(float x) {
  float w = -log((1.0 - x) * (1.0 + x));
  float p;
  if (w < 5.0) {
    w = w - 2.5;
    p = 2.81022636e-08; p = 3.43273939e-07 + p * w; p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w; p = 0.00021858087 + p * w; p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w; p = 0.246640727 + p * w; p = 1.50140941 + p * w;
  } else {
    w = sqrt(w) - 3.0;
    p = -0.000200214257; p = 0.000100950558 + p * w; p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w; p = 0.00573950773 + p * w; p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w; p = 1.00167406 + p * w; p = 2.83297682 + p * w;
  }
  return abs(x) == 1.0 ? x / 0.0 : p * x;
}
float nx_pow_f32(float x, float y) { return pow(x, y); }
float nx_atan2_f32(float y, float x) { return atan(y, x); }
)GLSL";

constexpr const char* kF64 = R"GLSL(
double nx_exp(double x) { return double(nx_exp_f32(float(x))); }
double nx_expm1(double x) { return double(nx_expm1_f32(float(x))); }
double nx_log(double x) { return double(nx_log_f32(float(x))); }
double nx_log1p(double x) { return double(nx_log1p_f32(float(x))); }
double nx_sigmoid(double x) { return double(nx_sigmoid_f32(float(x))); }
double nx_cos(double x) { return double(nx_cos_f32(float(x))); }
double nx_sin(double x) { return double(nx_sin_f32(float(x))); }
double nx_tan(double x) { return double(nx_tan_f32(float(x))); }
double nx_cosh(double x) { return double(nx_cosh_f32(float(x))); }
double nx_sinh(double x) { return double(nx_sinh_f32(float(x))); }
double nx_tanh(double x) { return double(nx_tanh_f32(float(x))); }
double nx_acos(double x) { return double(nx_acos_f32(float(x))); }
double nx_asin(double x) { return double(nx_asin_f32(float(x))); }
double nx_atan(double x) { return double(nx_atan_f32(float(x))); }
double nx_acosh(double x) { return double(nx_acosh_f32(float(x))); }
double nx_asinh(double x) { return double(nx_asinh_f32(float(x))); }
double nx_atanh(double x) { return double(nx_atanh_f32(float(x))); }
double nx_sqrt(double x) { return sqrt(x); }
double nx_rsqrt(double x) { return 1.0lf / sqrt(x); }
double nx_cbrt(double x) { return double(nx_cbrt_f32(float(x))); }
double nx_erf(double x) { return double(nx_erf_f32(float(x))); }
double nx_erfc(double x) { return double(nx_erfc_f32(float(x))); }
double nx_erf_inv(double x) { return double(nx_erf_inv_f32(float(x))); }
double nx_pow(double x, double y) { return double(nx_pow_f32(float(x), float(y))); }
double nx_atan2(double y, double x) { return double(nx_atan2_f32(float(y), float(x))); }
)GLSL";

}  // namespace

std::string math_library_glsl(const Capabilities& caps) {
  std::string s = kF32;
  if (caps.float64) s += kF64;
  return s;
}

}  // namespace nxvk::gen
