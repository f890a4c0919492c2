#include "ref/math_ref.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>

#include "nxvk/ops.hpp"
#include "ops/codegen.hpp"
#include "ops/math_library.hpp"

namespace nxvk::mathref {
namespace {

using ld = long double;

ld erf_inv_ref(ld x) {
  if (std::isnan(x) || x < -1 || x > 1) return NAN;
  if (x == 1) return INFINITY;
  if (x == -1) return -INFINITY;
  if (x == 0) return x;
  const ld a = std::fabs(x);
  const ld pi = 3.14159265358979323846264338327950288L;
  // Start from a classic approximation, then Newton on erf (or erfc near 1, where 1 - a is
  // exact for float and double inputs).
  ld w = -std::log((1 - a) * (1 + a));
  ld y = std::sqrt(w) * 0.9L;
  if (a < 0.9L) y = a * std::sqrt(pi) / 2;
  for (int it = 0; it < 200; ++it) {
    ld f = a < 0.5L ? std::erf(y) - a : (1 - a) - std::erfc(y);
    ld d = 2 / std::sqrt(pi) * std::exp(-y * y);
    ld step = f / d;
    ld ny = y - step;
    if (!(ny > 0)) ny = y / 2;
    if (ny == y) break;
    y = ny;
  }
  return x < 0 ? -y : y;
}

// acc t + n rounded twice (volatile: never fused into an fma), as Erlang computes it.
double mul_add(double acc, double t, double n) {
  volatile double p = acc * t;
  return p + n;
}

#define U1(name, expr) [](ld x, ld) -> ld { return expr; }
#define D1(expr) [](double x, double) -> double { return expr; }

const std::vector<MathFn> kFns = {
    {"exp", 1, U1(exp, std::exp(x)), D1(std::exp(x)), -110, 90},
    {"expm1", 1, U1(expm1, std::expm1(x)), D1(std::expm1(x)), -20, 20},
    {"log", 1, U1(log, std::log(x)), D1(std::log(x)), 0, 4},
    {"log1p", 1, U1(log1p, std::log1p(x)), D1(std::log1p(x)), -1, 2},
    {"sigmoid", 1, U1(sigmoid, 1 / (1 + std::exp(-x))), D1(1 / (1 + std::exp(-x))), -40, 40},
    {"cos", 1, U1(cos, std::cos(x)), D1(std::cos(x)), -10, 10},
    {"sin", 1, U1(sin, std::sin(x)), D1(std::sin(x)), -10, 10},
    {"tan", 1, U1(tan, std::tan(x)), D1(std::tan(x)), -10, 10},
    {"cosh", 1, U1(cosh, std::cosh(x)), D1(std::cosh(x)), -90, 90},
    {"sinh", 1, U1(sinh, std::sinh(x)), D1(std::sinh(x)), -90, 90},
    {"tanh", 1, U1(tanh, std::tanh(x)), D1(std::tanh(x)), -10, 10},
    {"acos", 1, U1(acos, std::acos(x)), D1(std::acos(x)), -1, 1},
    {"asin", 1, U1(asin, std::asin(x)), D1(std::asin(x)), -1, 1},
    {"atan", 1, U1(atan, std::atan(x)), D1(std::atan(x)), -10, 10},
    {"acosh", 1, U1(acosh, std::acosh(x)), D1(std::acosh(x)), 1, 10},
    {"asinh", 1, U1(asinh, std::asinh(x)), D1(std::asinh(x)), -10, 10},
    {"atanh", 1, U1(atanh, std::atanh(x)), D1(std::atanh(x)), -1, 1},
    {"sqrt", 1, U1(sqrt, std::sqrt(x)), D1(std::sqrt(x)), 0, 10},
    {"rsqrt", 1, U1(rsqrt, 1 / std::sqrt(x)), D1(1 / std::sqrt(x)), 0, 10},
    {"cbrt", 1, U1(cbrt, std::cbrt(x)), D1(std::cbrt(x)), -10, 10},
    {"erf", 1, U1(erf, std::erf(x)), D1(std::erf(x)), -6, 6},
    {"erfc", 1, U1(erfc, std::erfc(x)), D1(std::erfc(x)), -6, 30},
    {"erf_inv", 1, U1(erf_inv, erf_inv_ref(x)), D1(double(erf_inv_ref(x))), -1, 1},
    {"pow", 2, [](ld x, ld y) -> ld { return std::pow(x, y); },
     [](double x, double y) -> double { return std::pow(x, y); }, -4, 4},
    {"atan2", 2, [](ld y, ld x) -> ld { return std::atan2(y, x); },
     [](double y, double x) -> double { return std::atan2(y, x); }, -10, 10},
};

}  // namespace

double complex_erf_inv(double z) {
  if (std::isnan(z) || std::fabs(z) > 1) return NAN;
  if (std::fabs(z) == 1) return std::copysign(INFINITY, z);
  if (z == 0) return 0.0;  // the integer 0, for -0.0 too
  volatile double omz = 1 - z, opz = 1 + z;
  volatile double prod = omz * opz;
  double w = -std::log(prod), p;
  if (w < 5) {
    const double t = w - 2.5;
    p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
                     0.246640727, 1.50140941})
      p = mul_add(p, t, c);
  } else {
    const double t = std::sqrt(w) - 3;
    p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                     1.00167406, 2.83297682})
      p = mul_add(p, t, c);
  }
  return p * z;
}

namespace {

bool uses_fast_f32(const MathFn& fn, Path path) { return path == Path::F32ViaF64 && gen::has_math_fast_f32(fn.name); }

std::string kernel(const Capabilities& caps, const MathFn& fn, Path path) {
  const bool f64 = path == Path::F64;
  const DType io = f64 ? DType::F64 : DType::F32;
  std::string s = gen::preamble(caps) + gen::math_library_glsl(caps);
  s += gen::buffer(0, "xs", io, true) + gen::buffer(1, "ys", io, true) + gen::buffer(2, "dst", io, false);
  s += "layout(push_constant) uniform Push { uint n; } pc;\n";
  std::string call = f64 ? gen::math_f64_function(fn.name) : std::string("nx_") + fn.name + (path == Path::F32Only ? "_f32" : "");
  std::string x = gen::load(io, "xs", "i"), y = gen::load(io, "ys", "i");
  std::string vt = path == Path::F32Only ? "float" : "double";
  if (path == Path::F32ViaF64 || path == Path::F32ViaF64Accurate) {
    // Widen exactly, as the op library does: a driver's double(x) may flush f32 subnormals
    // (NVIDIA does: shaderDenormPreserveFloat32 is false there).
    x = "nx_f32_to_f64(" + x + ")";
    y = "nx_f32_to_f64(" + y + ")";
  }
  std::string args = fn.arity == 2 ? x + ", " + y : x;
  std::string setup;
  if (uses_fast_f32(fn, path)) {
    // What the op library runs for an f32 result: the fast path with the accurate fallback.
    s += gen::math_fast_f32_glsl(3);
    setup = gen::math_fast_f32_setup(fn.name);
    call = std::string("nx_") + fn.name + "_to_f32";
    vt = "float";
  }
  s += gen::elementwise_main(io, "dst", vt + " v = " + call + "(" + args + ");", vt, false, setup);
  return s;
}

template <class T>
std::vector<T> run(Device& dev, const MathFn& fn, Path path, const std::vector<T>& x, const std::vector<T>& y) {
  const DType io = path == Path::F64 ? DType::F64 : DType::F32;
  const int64_t n = static_cast<int64_t>(x.size());
  Tensor tx = from_binary(dev, io, {n}, std::as_bytes(std::span<const T>(x)));
  Tensor ty = fn.arity == 2 ? from_binary(dev, io, {n}, std::as_bytes(std::span<const T>(y))) : tx;
  Tensor out = empty_tensor(dev, io, {n}, "math_ref");
  dev.fill(*out.buffer, 0, out.buffer->size(), 0xdeadbeefu);
  std::vector<BufferView> views = {{tx.buffer}, {ty.buffer}, {out.buffer}};
  if (uses_fast_f32(fn, path)) {
    auto table = gen::math_fast_f32_table(fn.name);
    views.push_back(dev.params(table.data(), table.size_bytes()));
  }
  uint32_t nn = static_cast<uint32_t>(n);
  gen::launch(dev, Kernel{std::string("math_") + fn.name + "_" + path_name(path), kernel(dev.caps(), fn, path)}, views,
              gen::bytes_of(nn), gen::elementwise_invocations(io, n));
  auto bytes = to_binary(out);
  std::vector<T> r(x.size());
  std::memcpy(r.data(), bytes.data(), r.size() * sizeof(T));
  return r;
}

template <class F, class U>
F from_bits(U u) {
  F f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
template <class U, class F>
U to_bits(F f) {
  U u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

template <class F>
double ulp_error(F got, ld ref) {
  constexpr int mant = std::numeric_limits<F>::digits;          // 24 / 53
  constexpr int emin = std::numeric_limits<F>::min_exponent - 1; // -126 / -1022
  if (std::isnan(ref)) return std::isnan(got) ? 0 : INFINITY;
  if (std::isnan(got)) return INFINITY;
  const ld maxf = std::numeric_limits<F>::max();
  if (std::isinf(ref) || std::fabs(ref) > maxf) {
    // Overflow: exact when got is the correctly rounded value (inf or the largest finite).
    F cr = static_cast<F>(ref);
    if (got == cr) return 0;
    if (std::isinf(got)) return INFINITY;
    ref = std::isinf(ref) ? std::copysign(maxf * 2, ref) : ref;
  }
  if (std::isinf(got)) {
    // ulps of the format past the largest finite number.
    return std::fabs(static_cast<ld>(std::copysign(maxf, got)) * 2 - ref) / std::ldexp(1.0L, std::numeric_limits<F>::max_exponent - mant);
  }
  int e;
  std::frexp(ref, &e);  // ref = m 2^e, m in [0.5, 1)
  e = std::max(e - 1, emin);
  const ld ulp = std::ldexp(1.0L, e - (mant - 1));
  double err = static_cast<double>(std::fabs(static_cast<ld>(got) - ref) / ulp);
  if (got == 0 && ref == 0 && std::signbit(got) != std::signbit(ref)) return INFINITY;
  return err;
}

template <class F, class U>
void add_edges(std::vector<F>& v) {
  using L = std::numeric_limits<F>;
  const F e[] = {F(0), F(-0.0), L::denorm_min(), -L::denorm_min(), L::min(), -L::min(),
                 L::min() / 2, -L::min() / 3, L::max(), -L::max(), L::infinity(), -L::infinity(),
                 L::quiet_NaN(), -L::quiet_NaN(), F(1), F(-1), F(0.5), F(-0.5), F(2), F(-2), F(3), F(-3),
                 F(1) / F(3), F(-8), F(0.25), L::epsilon(), F(1) - L::epsilon() / 2, F(1) + L::epsilon(),
                 F(-1) + L::epsilon() / 2, F(-1) - L::epsilon(), F(1e-30), F(1e30), F(10), F(100), F(1000),
                 F(88.72283), F(88.72284), F(-87.33654), F(-103.972), F(-103.973), F(709.782712893384),
                 F(709.7827128933841), F(-745.1332191019411), F(-708.3964185322641), F(710.4758600739439),
                 F(1.5707963267948966), F(-1.5707963267948966), F(3.141592653589793), F(6.283185307179586),
                 F(0.7853981633974483), F(1e6), F(1e10), F(1e22), F(1e300), F(0.3465735902799726),
                 F(-0.3465735902799726), F(0.6931471805599453), F(20), F(-20), F(40), F(-40), F(0.5493061443340549),
                 F(1.4142135623730951), F(0.7071067811865476), F(4), F(5), F(27), F(-27), F(0.9999), F(-0.9999)};
  for (F x : e) v.push_back(x);
  // Neighbours of a few special points.
  const F pts[] = {F(1), F(-1), F(0.5), F(2)};
  for (F p : pts) {
    U b = to_bits<U>(p);
    for (int d = 1; d <= 4; ++d) {
      v.push_back(from_bits<F>(U(b + d)));
      v.push_back(from_bits<F>(U(b - d)));
    }
  }
}

template <class F, class U>
std::vector<F> inputs(const MathFn& fn, size_t n, uint64_t seed, bool second) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + (second ? 17 : 3));
  std::vector<F> v;
  v.reserve(n);
  add_edges<F, U>(v);
  double lo = fn.lo, hi = fn.hi;
  if (fn.arity == 2 && second && std::string(fn.name) == "pow") { lo = -40; hi = 40; }
  std::uniform_real_distribution<double> dense(lo, hi);
  std::uniform_real_distribution<double> unit(-1, 1);
  while (v.size() < n) {
    uint64_t r = rng();
    switch (r % 8) {
      case 0:
      case 1:
      case 2: v.push_back(from_bits<F>(U(rng()))); break;   // whole range by bit pattern
      case 3:  // log-uniform magnitudes over a moderate range
        v.push_back(F(std::ldexp(1.0 + std::fabs(unit(rng)), int(rng() % 80) - 40) * (rng() & 1 ? 1 : -1)));
        break;
      case 4:  // small integers and halves (pow's special cases)
        v.push_back(F(double(int64_t(rng() % 41) - 20) / ((rng() & 1) ? 1 : 2)));
        break;
      default: v.push_back(F(dense(rng))); break;
    }
  }
  if (v.size() > n) v.resize(n);
  std::shuffle(v.begin() + 0, v.end(), rng);
  return v;
}

}  // namespace

const std::vector<MathFn>& math_functions() { return kFns; }

const MathFn& math_function(const std::string& name) {
  for (const auto& f : kFns)
    if (name == f.name) return f;
  throw std::invalid_argument("unknown math function " + name);
}

const char* path_name(Path p) {
  switch (p) {
    case Path::F64: return "f64";
    case Path::F32ViaF64: return "f32_via_f64";
    case Path::F32ViaF64Accurate: return "f32_via_f64_accurate";
    case Path::F32Only: return "f32_only";
  }
  return "?";
}

std::vector<float> run_f32(Device& dev, const MathFn& fn, Path path, const std::vector<float>& x,
                           const std::vector<float>& y) {
  return run<float>(dev, fn, path, x, y);
}
std::vector<double> run_f64(Device& dev, const MathFn& fn, const std::vector<double>& x,
                            const std::vector<double>& y) {
  return run<double>(dev, fn, Path::F64, x, y);
}

double ulp_error_f32(float got, long double ref) { return ulp_error<float>(got, ref); }
double ulp_error_f64(double got, long double ref) { return ulp_error<double>(got, ref); }

std::vector<float> inputs_f32(const MathFn& fn, size_t n, uint64_t seed, bool second) {
  return inputs<float, uint32_t>(fn, n, seed, second);
}
std::vector<double> inputs_f64(const MathFn& fn, size_t n, uint64_t seed, bool second) {
  return inputs<double, uint64_t>(fn, n, seed, second);
}

Stats measure_f32(Device& dev, const MathFn& fn, Path path, const std::vector<float>& x,
                  const std::vector<float>& y) {
  auto got = run_f32(dev, fn, path, x, y);
  Stats s;
  for (size_t i = 0; i < x.size(); ++i) {
    const float yi = fn.arity == 2 ? y[i] : 0.0f;
    const ld ref = fn.ref(x[i], yi);
    double e = ulp_error_f32(got[i], ref);
    if (std::isinf(e)) ++s.special_mismatch;
    if (e > s.max_ulp || (std::isnan(e))) {
      s.max_ulp = e;
      s.worst_x = x[i];
      s.worst_y = yi;
    }
    const float lib = static_cast<float>(fn.ref_f64(x[i], yi));
    if (!same_result(got[i], lib)) ++s.not_libm_identical;
    ++s.count;
  }
  return s;
}

Stats measure_f64(Device& dev, const MathFn& fn, const std::vector<double>& x, const std::vector<double>& y) {
  auto got = run_f64(dev, fn, x, y);
  Stats s;
  for (size_t i = 0; i < x.size(); ++i) {
    const double yi = fn.arity == 2 ? y[i] : 0.0;
    const ld ref = fn.ref(x[i], yi);
    double e = ulp_error_f64(got[i], ref);
    if (std::isinf(e)) ++s.special_mismatch;
    if (e > s.max_ulp) {
      s.max_ulp = e;
      s.worst_xd = x[i];
      s.worst_yd = yi;
    }
    const double lib = fn.ref_f64(x[i], yi);
    if (!same_result(got[i], lib)) {
      ++s.not_libm_identical;
      if (s.first_diffs.size() < 8) s.first_diffs.push_back({x[i], yi, got[i], lib});
    }
    ++s.count;
  }
  return s;
}

// The f32-only fast path (nx_NAME_ff_f32) on its own: [settled, bits] per input.
namespace {
// Per input, whether `call` (bool f(x, out float r), x read as `x`, and y, read from y's values
// or x's where y is empty) settled it and its r.
std::vector<std::pair<bool, float>> run_settling(Device& dev, const std::string& label, const std::string& functions,
                                                 const std::string& setup, std::span<const uint32_t> table,
                                                 const std::string& call, const std::vector<float>& x,
                                                 const std::vector<float>& y = {}) {
  const int64_t n = static_cast<int64_t>(x.size());
  Tensor tx = from_binary(dev, DType::F32, {n}, std::as_bytes(std::span<const float>(x)));
  Tensor ty = y.empty() ? tx : from_binary(dev, DType::F32, {n}, std::as_bytes(std::span<const float>(y)));
  Tensor out = empty_tensor(dev, DType::U32, {2 * n}, label);
  dev.fill(*out.buffer, 0, out.buffer->size(), 0xdeadbeefu);
  const std::string src = gen::preamble(dev.caps()) + gen::math_library_glsl(dev.caps()) + functions +
                          gen::buffer(0, "src", DType::F32, true) + gen::buffer(1, "dst", DType::U32, false) +
                          gen::buffer(3, "src_y", DType::F32, true) +
                          "layout(push_constant) uniform Push { uint n; } pc;\n" +
                          "void main() {\n  " + setup +
                          "\n  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += grid_stride()) {\n"
                          "    float x = uintBitsToFloat(src.w[i]);\n    float y = uintBitsToFloat(src_y.w[i]);\n"
                          "    float r = 0.0;\n    bool ok = " + call + ";\n"
                          "    dst.w[2u * i] = ok ? 1u : 0u;\n    dst.w[2u * i + 1u] = floatBitsToUint(r);\n  }\n}\n";
  const uint32_t one_word = 0;
  if (table.empty()) table = std::span<const uint32_t>(&one_word, 1);
  BufferView views[] = {{tx.buffer}, {out.buffer}, dev.params(table.data(), table.size_bytes()), {ty.buffer}};
  uint32_t nn = static_cast<uint32_t>(n);
  gen::launch(dev, Kernel{label, src}, views, gen::bytes_of(nn), nn);
  auto bytes = to_binary(out);
  std::vector<std::pair<bool, float>> r(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    uint32_t w[2];
    std::memcpy(w, bytes.data() + 8 * i, 8);
    if (w[0] > 1u) fail(ErrorKind::Internal, label + ": element " + std::to_string(i) + " unwritten");
    std::memcpy(&r[i].second, &w[1], 4);
    r[i].first = w[0] == 1u;
  }
  return r;
}
}  // namespace

std::vector<std::pair<bool, float>> run_ff_f32(Device& dev, const std::string& name, const std::vector<float>& x) {
  return run_settling(dev, "ff_" + name, gen::math_ff_f32_glsl(2, dev.caps()), gen::math_ff_f32_setup(name),
                      gen::math_ff_f32_table(name), "nx_" + name + "_ff_f32(x, r)", x);
}

std::vector<std::pair<bool, float>> run_fast_f32(Device& dev, const std::string& name, const std::vector<float>& x,
                                                 const std::vector<float>& y) {
  const std::string args = y.empty() ? "double(x)" : "double(x), double(y)";
  return run_settling(dev, "fast_" + name, gen::math_fast_f32_glsl(2), gen::math_fast_f32_setup(name),
                      gen::math_fast_f32_table(name), "nx_" + name + "_fast_f32(" + args + ", r)", x, y);
}

std::vector<std::pair<bool, float>> run_ulp1_f32(Device& dev, const std::string& name, const std::vector<float>& x,
                                                 const std::vector<float>& y, Residual residual) {
  std::string functions;
  if (residual == Residual::Device) {
    functions = gen::math_ulp1_f32_glsl(2, dev.caps(), name);
  } else {
    // The library as a device whose fma rounds once compiles it, with that fma computed in f64:
    // c - a b is exact there (a b has 48 bits, and c is near it), then rounded once to f32.
    if (!dev.caps().float64) fail(ErrorKind::Unsupported, "run_ulp1_f32: the fused-fma residual needs f64");
    Capabilities fused = dev.caps();
    fused.fused_fma_f32 = true;
    functions = gen::math_ulp1_f32_glsl(2, fused, name);
    const std::string fma = "precise float e = fma(-a, b, c);";
    const size_t at = functions.find(fma);
    if (at == std::string::npos || functions.find(fma, at + 1) != std::string::npos)
      fail(ErrorKind::Internal, "run_ulp1_f32: the fused-fma residual's line is not found once");
    functions.replace(at, fma.size(), "precise float e = float(double(c) - double(a) * double(b));");
  }
  return run_settling(dev, "ulp1_" + name + (residual == Residual::Device ? "" : "_fma_in_f64"), functions,
                      gen::math_ulp1_f32_setup(name), gen::math_ulp1_f32_table(name),
                      "nx_" + name + "_ulp1_f32(x, " + (y.empty() ? "r)" : "y, r)"), x, y);
}

}  // namespace nxvk::mathref
