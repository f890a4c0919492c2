// nxvk_ulp: measures the GLSL math library (src/ops/math_library.cpp) on a device against long
// double libm, for every function and path, and prints a markdown table.
//   nxvk_ulp [--n N] [--fn NAME[,NAME...]] [--device SELECTOR] [--seed S] [--diffs]
// --diffs prints (to stderr) the first inputs whose f64 results differ from libm's.
// Columns: max ulp error, and how many results differ in bits from "C library in f64, then
// round" (what Nx.BinaryBackend computes), over N inputs per function and path.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sstream>
#include <string>

#include "ref/math_ref.hpp"

using namespace nxvk;
using namespace nxvk::mathref;

int main(int argc, char** argv) {
  size_t n = 1000000;
  uint64_t seed = 1;
  std::string only, selector;
  bool diffs = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--n" && i + 1 < argc) n = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--fn" && i + 1 < argc) only = argv[++i];
    else if (a == "--device" && i + 1 < argc) selector = argv[++i];
    else if (a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--diffs") diffs = true;
    else {
      std::fprintf(stderr, "usage: nxvk_ulp [--n N] [--fn NAME,...] [--device SELECTOR] [--seed S] [--diffs]\n");
      return 2;
    }
  }
  auto dev = Device::open(selector);
  const bool f64 = dev->caps().float64;
  char date[64];
  std::time_t t = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&t));
  std::printf("Device: %s (%s), %s, %zu inputs per function and path, seed %llu\n\n", dev->caps().name.c_str(),
              dev->caps().driver_name.c_str(), date, n, static_cast<unsigned long long>(seed));
  std::printf("| function | f64: max ulp | f64: != libm | f32 via f64: max ulp | f32 via f64: != libm | "
              "f32 only: max ulp | f32 only: != libm | worst f32-only input |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  auto fmt = [](double u) {
    char b[32];
    if (std::isinf(u)) return std::string("inf");
    std::snprintf(b, sizeof b, "%.3f", u);
    return std::string(b);
  };
  int worst_special = 0;
  for (const auto& fn : math_functions()) {
    if (!only.empty() && ("," + only + ",").find(std::string(",") + fn.name + ",") == std::string::npos) continue;
    std::string c64 = "n/a", n64 = "n/a", cv = "n/a", nv = "n/a";
    if (f64 && std::string(fn.name) == "erf_inv") {
      // f64 erf_inv is Nx.BinaryBackend's approximation (nx_erf_inv_nx, Complex.erf_inv): its
      // largest relative error, and how many results differ from the host's Complex.erf_inv.
      auto x = inputs_f64(fn, n, seed);
      auto got = run_f64(*dev, fn, x, x);
      long double rel = 0;
      uint64_t differ = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        differ += !same_result(got[i], complex_erf_inv(x[i]));
        const long double want = fn.ref(x[i], 0);
        if (std::isfinite(want) && want != 0 && std::isfinite(got[i]))
          rel = std::max(rel, std::fabs((static_cast<long double>(got[i]) - want) / want));
      }
      char b[64];
      std::snprintf(b, sizeof b, "Nx's: relative %.2Lg", rel);
      c64 = b;
      n64 = std::to_string(differ) + " (!= Nx's)";
    } else if (f64) {
      auto x = inputs_f64(fn, n, seed), y = inputs_f64(fn, n, seed, true);
      Stats s = measure_f64(*dev, fn, x, y);
      c64 = fmt(s.max_ulp);
      n64 = std::to_string(s.not_libm_identical);
      worst_special += s.special_mismatch > 0;
      if (s.max_ulp > 1) std::fprintf(stderr, "%s f64 worst at x=%.17g y=%.17g\n", fn.name, s.worst_xd, s.worst_yd);
      if (diffs)
        for (const auto& d : s.first_diffs)
          std::fprintf(stderr, "%s f64 differs from libm at x=%a y=%a: %a, libm %a\n", fn.name, d.x, d.y, d.got, d.lib);
    }
    auto x = inputs_f32(fn, n, seed), y = inputs_f32(fn, n, seed, true);
    if (f64) {
      Stats s = measure_f32(*dev, fn, Path::F32ViaF64, x, y);
      cv = fmt(s.max_ulp);
      nv = std::to_string(s.not_libm_identical);
      worst_special += s.special_mismatch > 0;
    }
    Stats s = measure_f32(*dev, fn, Path::F32Only, x, y);
    worst_special += s.special_mismatch > 0;
    char worst[96];
    if (fn.arity == 2) std::snprintf(worst, sizeof worst, "(%.9g, %.9g)", s.worst_x, s.worst_y);
    else std::snprintf(worst, sizeof worst, "%.9g", s.worst_x);
    std::printf("| %s | %s | %s | %s | %s | %s | %llu | %s |\n", fn.name, c64.c_str(), n64.c_str(), cv.c_str(), nv.c_str(),
                fmt(s.max_ulp).c_str(), static_cast<unsigned long long>(s.not_libm_identical), worst);
    std::fflush(stdout);
  }
  return 0;
}
