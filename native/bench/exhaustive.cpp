// nxvk_exhaustive: every f32 input of a unary math function against the accurate f64 function
// rounded to f32 (tests/ref/math_ref's F32ViaF64Accurate kernel), bit for bit, on a device with
// f64: through the op library (its fast f32 path), and, for the functions that have one, through
// the f32-only fast path nx_NAME_ff_f32 wherever that settles (what devices without f64 run).
//   nxvk_exhaustive [--fn NAME[,NAME...]] [--chunk LOG2] [--from BITS --to BITS]
// Prints the mismatches (up to 10 per function) and their count; exits 1 if there are any.
// With NX_VULKAN_F32_MATH=fast the op library runs the fast f32 math mode: then a mismatch is a
// result more than 1 ulp from the correctly rounded one, and the counts of those 0 and 1 ulp away
// are printed too. --residual fma-in-f64 checks, instead of the op, the fast form alone
// (nx_NAME_ulp1_f32, the exact path's result where it leaves an input) as a device whose fma rounds
// once compiles it, that fma computed exactly in f64: NVIDIA's variant, on lavapipe.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "nxvk/ops.hpp"
#include "ops/math_library.hpp"
#include "ref/math_ref.hpp"

using namespace nxvk;

static std::string fmt(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

int main(int argc, char** argv) {
  std::string fns = "exp";
  uint64_t from = 0, to = 1ull << 32;
  int chunk_log2 = 24;
  std::optional<float> first, second;
  bool fma_in_f64 = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--fn") fns = argv[i + 1];
    else if (a == "--chunk") chunk_log2 = std::atoi(argv[i + 1]);
    else if (a == "--from") from = std::strtoull(argv[i + 1], nullptr, 0);
    else if (a == "--to") to = std::strtoull(argv[i + 1], nullptr, 0);
    else if (a == "--first") first = std::strtof(argv[i + 1], nullptr);
    else if (a == "--second") second = std::strtof(argv[i + 1], nullptr);
    else if (a == "--residual") {
      if (std::string(argv[i + 1]) != "fma-in-f64") {
        std::fprintf(stderr, "nxvk_exhaustive: --residual takes fma-in-f64, got %s\n", argv[i + 1]);
        return 2;
      }
      fma_in_f64 = true;
    } else {
      std::fprintf(stderr, "nxvk_exhaustive: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  auto dev = Device::open("");
  std::printf("device: %s; inputs with bits [%#llx, %#llx)\n", dev->caps().name.c_str(), (unsigned long long)from,
              (unsigned long long)to);
  int status = 0;
  std::stringstream list(fns);
  for (std::string name; std::getline(list, name, ',');) {
    const auto& fn = mathref::math_function(name);
    const bool binary_fn = fn.arity == 2;
    if (binary_fn != (first || second) || (first && second)) {
      std::fprintf(stderr, "nxvk_exhaustive: %s: %s\n", name.c_str(),
                   binary_fn ? "a binary function needs one of --first V and --second V"
                             : "--first and --second are for the binary functions");
      return 2;
    }
    if (binary_fn)
      std::printf("%s with the %s operand %a\n", name.c_str(), first ? "first" : "second", first ? *first : *second);
    const bool ff = !binary_fn && !fma_in_f64 && gen::has_math_ff_f32(name);
    const bool fast = (fma_in_f64 || gen::f32_math_fast(name)) && gen::has_math_ulp1_f32(name);
    if (fma_in_f64 && !fast) {
      std::fprintf(stderr, "nxvk_exhaustive: %s has no fast f32 form\n", name.c_str());
      return 2;
    }
    if (fma_in_f64) std::printf("%s: its fast form alone, the fma residual computed in f64\n", name.c_str());
    uint64_t mismatches = 0, ff_mismatches = 0, ff_unsettled = 0, off_by_one = 0;
    for (uint64_t start = from; start < to; start += 1ull << chunk_log2) {
      const uint64_t n = std::min<uint64_t>(1ull << chunk_log2, to - start);
      std::vector<float> x(n);
      for (uint64_t i = 0; i < n; ++i) {
        uint32_t b = static_cast<uint32_t>(start + i);
        std::memcpy(&x[i], &b, 4);
      }
      // The operands in the function's order: the swept x and, for a binary function, the fixed one.
      const std::vector<float> fixed(binary_fn ? n : 0, first ? *first : second ? *second : 0.0f);
      const std::vector<float>& a = first ? fixed : x;
      const std::vector<float>& b = second ? fixed : x;
      auto want = mathref::run_f32(*dev, fn, mathref::Path::F32ViaF64Accurate, a, b);
      auto tensor = [&](const std::vector<float>& v) {
        return from_binary(*dev, DType::F32, {int64_t(n)}, std::as_bytes(std::span(v)));
      };
      std::vector<float> result(n);
      if (fma_in_f64) {
        auto alone = mathref::run_ulp1_f32(*dev, name, a, binary_fn ? b : std::vector<float>{},
                                           mathref::Residual::FusedFmaInF64);
        for (uint64_t i = 0; i < n; ++i) result[i] = alone[i].first ? alone[i].second : want[i];
      } else {
        Tensor y = binary_fn ? binary(*parse_binary_op(name), tensor(a), tensor(b), DType::F32, {int64_t(n)})
                             : unary(*parse_unary_op(name), tensor(x), DType::F32);
        auto bytes = to_binary(y);
        std::memcpy(result.data(), bytes.data(), 4 * n);
      }
      if (ff) {
        auto settled = mathref::run_ff_f32(*dev, name, x);
        for (uint64_t i = 0; i < n; ++i) {
          if (!settled[i].first) {
            ++ff_unsettled;
            continue;
          }
          if (!mathref::same_result(settled[i].second, want[i]) && ff_mismatches++ < 10)
            std::printf("%s f32-only fast path (%a): %a, accurate %a\n", name.c_str(), x[i], settled[i].second, want[i]);
        }
      }
      for (uint64_t i = 0; i < n; ++i) {
        const float got = result[i];
        const uint64_t d = mathref::f32_ulp_distance(got, want[i]);
        if (fast && d == 1) ++off_by_one;
        else if (d != 0 && mismatches++ < 10)
          std::printf("%s(%a%s): op %a, accurate %a\n", name.c_str(), a[i], binary_fn ? (", " + fmt(b[i])).c_str() : "",
                      got, want[i]);
      }
      // Progress every 2^28 inputs, flushed: a run cut short by a time limit still says how far it got.
      if (((start + n - from) & ((1ull << 28) - 1)) == 0) {
        std::printf("  %s: inputs below %#llx: %llu at 1 ulp, %llu %s\n", name.c_str(),
                    (unsigned long long)(start + n), (unsigned long long)off_by_one, (unsigned long long)mismatches,
                    fast ? "further" : "mismatches");
        std::fflush(stdout);
      }
    }
    if (fast)
      std::printf("%s (fast f32 math): %llu results 1 ulp from the correctly rounded one, %llu further\n",
                  name.c_str(), (unsigned long long)off_by_one, (unsigned long long)mismatches);
    else
      std::printf("%s: %llu mismatches\n", name.c_str(), (unsigned long long)mismatches);
    if (ff)
      std::printf("%s f32-only fast path: %llu mismatches where it settles; %llu inputs unsettled\n", name.c_str(),
                  (unsigned long long)ff_mismatches, (unsigned long long)ff_unsettled);
    status |= mismatches != 0 || ff_mismatches != 0;
  }
  return status;
}
