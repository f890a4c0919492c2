// Bandwidth of elementwise ops and reductions against the copy bandwidth measured in the same run.
//
//   nxvk_bench_ops [--elements N] [--reps R] [--iters I] [--only NAME[,NAME...]]
//
// Method: inputs are random (never zeros); each case runs untimed to warm up: one call (kernel
// compile, pipeline creation), then repetitions for at least a second of GPU work (as many
// output buffers in the allocator's cache as I calls in flight need: creating 1 GiB takes about
// 20 ms on the H200; and the GPU's clocks, which ramp up under load), then R repetitions of
// I back-to-back dispatches, each repetition timed by the wall clock from the first record to
// the completion of a sync, divided by I. The median repetition is reported, with the bytes the op must move (reads + writes) per
// second and the ratio to the best copy bandwidth of this run (vkCmdCopyBuffer or our copy
// kernel, whichever is faster), and the host's time per call (the median over the repetitions
// of the time to issue the I calls, before the sync, divided by I): the runtime submits a large
// dispatch at once when the GPU is idle, so the host's work overlaps the GPU's unless it is
// the longer of the two. Each row is printed as soon as it is measured; an input is drawn when a
// selected case first reads it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "nxvk/ops.hpp"
#include "ops/math_library.hpp"

using namespace nxvk;

namespace {

struct Options {
  int64_t elements = 256ll << 20;
  int reps = 7;
  int iters = 10;
  std::string only;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Timing {
  double seconds;       // per iteration, issue to completion
  double host_seconds;  // per iteration, issuing only
  uint64_t allocations;  // memory the timed repetitions had to create (a 1 GiB block: ~20 ms)
};

// Medians over reps of the time per iteration of `body`, after the warm-up: one call (which
// builds the kernels: the GPU idles meanwhile), then calls until the GPU has been busy for
// kWarmSeconds. An idle H100 sits at 345 MHz and takes about a second of load to reach its
// boost clock (seen with nvidia-smi), so a short warm-up timed compute-bound kernels at a
// fraction of their speed, by a different fraction in each case. Until the twenty-sixth session
// the second counted from before the first call: a kernel whose build took that long (a first
// build, with no pipeline cached) was timed right after the idle build, in every repetition at
// a third to two thirds of its speed (the single-process outliers of docs/BENCHMARKS.md).
constexpr double kWarmSeconds = 1.0;
Timing time_op(Device& device, const Options& o, const std::function<void()>& body) {
  body();
  device.sync();
  const auto warm_start = std::chrono::steady_clock::now();
  do {
    for (int i = 0; i < o.iters; ++i) body();
    device.sync();
  } while (std::chrono::duration<double>(std::chrono::steady_clock::now() - warm_start).count() < kWarmSeconds);
  std::vector<double> samples, host;
  const uint64_t allocations = device.memory_stats().allocations;
  for (int r = 0; r < o.reps; ++r) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < o.iters; ++i) body();
    auto issued = std::chrono::steady_clock::now();
    device.sync();
    auto end = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double>(end - start).count() / o.iters);
    host.push_back(std::chrono::duration<double>(issued - start).count() / o.iters);
  }
  return {median(samples), median(host), device.memory_stats().allocations - allocations};
}

// Whether case `name` runs: every case without --only, else those whose name starts with one of
// its comma-separated words ("sin" selects "sin f32" and "sinh f32").
bool selected(const std::string& only, const std::string& name) {
  if (only.empty()) return true;
  size_t start = 0;
  while (start <= only.size()) {
    size_t end = only.find(',', start);
    if (end == std::string::npos) end = only.size();
    if (end > start && name.rfind(only.substr(start, end - start), 0) == 0) return true;
    start = end + 1;
  }
  return false;
}

// Uniform in [lo, hi), and with `relu`, the negatives made 0 (a ReLU's output: with lo = -hi, half
// zeros, whose log and sqrt results are fixed: since the twenty-sixth session the fast paths'
// kernels settle them, before which each went to a second kernel and a tensor a quarter zeros
// ran 5x slower on lavapipe).
Tensor random_f32(Device& device, const Shape& shape, uint32_t seed, float lo = -2.0f, float hi = 2.0f,
                  bool relu = false) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> host(static_cast<size_t>(shape_size(shape)));
  for (auto& x : host) x = relu ? std::max(dist(rng), 0.0f) : dist(rng);
  return from_binary(device, DType::F32, shape, std::as_bytes(std::span<const float>(host)));
}

// An input made on first use: a run with --only makes only what its cases read (at 1G elements each
// input is 4 GiB of random numbers, most of a minute to draw on one host core).
class Input {
 public:
  explicit Input(std::function<Tensor()> make) : make_(std::move(make)) {}
  const Tensor& operator()() {
    if (!tensor_) tensor_ = make_();
    return *tensor_;
  }

 private:
  std::function<Tensor()> make_;
  std::optional<Tensor> tensor_;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--elements") o.elements = std::stoll(argv[i + 1]);
    else if (k == "--reps") o.reps = std::stoi(argv[i + 1]);
    else if (k == "--iters") o.iters = std::stoi(argv[i + 1]);
    else if (k == "--only") o.only = argv[i + 1];
  }
  try {
    auto device = Device::open("");
    const int64_t n = o.elements;
    const int64_t cols = 4096;
    const int64_t rows = n / cols;
    const double b4 = 4.0 * double(n);
    std::printf("device: %s (f64 %s, fused fma %s); %lld f32 elements (%.0f MiB per tensor); median of %d reps x %d "
                "iters; f32 math %s (NX_VULKAN_F32_MATH)\n\n",
                device->caps().name.c_str(), device->caps().float64 ? "yes" : "no",
                device->caps().fused_fma_f32 ? "yes" : "no", (long long)n, b4 / (1 << 20), o.reps, o.iters,
                gen::f32_math_fast("bench") ? "fast" : "exact");
    Tensor a = random_f32(*device, {rows, cols}, 1);
    auto input = [&](uint32_t seed, const Shape& shape, float lo = -2.0f, float hi = 2.0f, bool zeros = false) {
      return Input([&device, seed, shape, lo, hi, zeros] { return random_f32(*device, shape, seed, lo, hi, zeros); });
    };
    Input b = input(2, {rows, cols});
    Input row_vec = input(3, {cols});
    Input col_vec = input(4, {rows, 1});
    Input pos = input(5, {rows, cols}, 0x1p-20f, 4.0f);    // log's domain
    Input unit = input(6, {rows, cols}, -0.99f, 0.99f);    // asin's, acos's, atanh's, erf_inv's
    Input ge1 = input(7, {rows, cols}, 1.0f, 5.0f);        // acosh's
    Input relu = input(8, {rows, cols}, -4.0f, 4.0f, true);  // half zeros
    Input a16([&] { return as_type(a, DType::F16); }), abf16([&] { return as_type(a, DType::BF16); });
    Input b16([&] { return as_type(b(), DType::F16); }), bbf16([&] { return as_type(b(), DType::BF16); });
    auto scratch = device->allocate(a.bytes());
    // Each row is printed when measured (a run cut short keeps its rows), as a share of the best
    // copy bandwidth of the two copy rows, which come first.
    double copy_bw = 0, add_seconds = 0;
    struct Copy {
      std::string name;
      Timing time;
      double bytes;
    };
    std::vector<Copy> copies;
    auto print_row = [&](const std::string& name, const Timing& t, double bytes) {
      double bw = bytes / t.seconds;
      std::printf("| %s | %.3f | %.1f | %.0f%% | %.1f | %llu |\n", name.c_str(), t.seconds * 1e3, bw / 1e9,
                  100.0 * bw / copy_bw, t.host_seconds * 1e6, static_cast<unsigned long long>(t.allocations));
      std::fflush(stdout);
    };
    auto run = [&](const std::string& name, double bytes, const std::function<void()>& body) {
      // The copy references always run: every ratio is to a copy measured in the same run.
      bool reference = name.rfind("copy", 0) == 0;
      if (!reference && !selected(o.only, name)) return;
      try {
        Timing t = time_op(*device, o, body);
        if (name == "add f32 same shape") add_seconds = t.seconds;
        if (!reference) return print_row(name, t, bytes);
        copy_bw = std::max(copy_bw, bytes / t.seconds);
        copies.push_back({name, t, bytes});
        if (copies.size() < 2) return;
        std::printf("| op | time (ms) | GB/s | %% of copy | host (us/call) | new buffers |\n|---|---:|---:|---:|---:|---:|\n");
        for (const Copy& c : copies) print_row(c.name, c.time, c.bytes);
      } catch (const std::exception& e) {
        std::printf("%-34s failed: %s\n", name.c_str(), e.what());
      }
    };
    run("copy (vkCmdCopyBuffer)", 2 * b4, [&] { device->copy(*a.buffer, 0, *scratch, 0, a.bytes()); });
    run("copy (kernel, uvec4)", 2 * b4, [&] {
      const uint32_t spec[] = {256};
      uint32_t vec4s = static_cast<uint32_t>(n / 4);
      BufferView views[] = {{a.buffer}, {scratch}};
      uint32_t groups = std::min<uint32_t>((vec4s + 255) / 256, 65535);
      device->dispatch({"copy_vec4", "", 2}, views, std::as_bytes(std::span<const uint32_t>(&vec4s, 1)),
                       {groups}, spec);
    });
    run("negate f32", 2 * b4, [&] { (void)unary(UnaryOp::negate, a, DType::F32); });
    run("abs f32", 2 * b4, [&] { (void)unary(UnaryOp::abs, a, DType::F32); });
    run("exp f32", 2 * b4, [&] { (void)unary(UnaryOp::exp, a, DType::F32); });
    run("sigmoid f32", 2 * b4, [&] { (void)unary(UnaryOp::sigmoid, a, DType::F32); });
    run("tanh f32", 2 * b4, [&] { (void)unary(UnaryOp::tanh, a, DType::F32); });
    run("expm1 f32", 2 * b4, [&] { (void)unary(UnaryOp::expm1, a, DType::F32); });
    run("log f32 (0, 4]", 2 * b4, [&] { (void)unary(UnaryOp::log, pos(), DType::F32); });
    run("log1p f32 (0, 4]", 2 * b4, [&] { (void)unary(UnaryOp::log1p, pos(), DType::F32); });
    run("sqrt f32 (0, 4]", 2 * b4, [&] { (void)unary(UnaryOp::sqrt, pos(), DType::F32); });
    run("log f32 [0, 4), half zeros", 2 * b4, [&] { (void)unary(UnaryOp::log, relu(), DType::F32); });
    run("sqrt f32 [0, 4), half zeros", 2 * b4, [&] { (void)unary(UnaryOp::sqrt, relu(), DType::F32); });
    run("sin f32", 2 * b4, [&] { (void)unary(UnaryOp::sin, a, DType::F32); });
    run("cos f32", 2 * b4, [&] { (void)unary(UnaryOp::cos, a, DType::F32); });
    run("tan f32", 2 * b4, [&] { (void)unary(UnaryOp::tan, a, DType::F32); });
    run("sinh f32", 2 * b4, [&] { (void)unary(UnaryOp::sinh, a, DType::F32); });
    run("cosh f32", 2 * b4, [&] { (void)unary(UnaryOp::cosh, a, DType::F32); });
    run("erf f32", 2 * b4, [&] { (void)unary(UnaryOp::erf, a, DType::F32); });
    run("erfc f32", 2 * b4, [&] { (void)unary(UnaryOp::erfc, a, DType::F32); });
    // The rest of the math functions (fast paths since the thirteenth session, erf_inv's the fourteenth).
    run("asin f32 (-1, 1)", 2 * b4, [&] { (void)unary(UnaryOp::asin, unit(), DType::F32); });
    run("acos f32 (-1, 1)", 2 * b4, [&] { (void)unary(UnaryOp::acos, unit(), DType::F32); });
    run("atan f32", 2 * b4, [&] { (void)unary(UnaryOp::atan, a, DType::F32); });
    run("asinh f32", 2 * b4, [&] { (void)unary(UnaryOp::asinh, a, DType::F32); });
    run("acosh f32 [1, 5)", 2 * b4, [&] { (void)unary(UnaryOp::acosh, ge1(), DType::F32); });
    run("atanh f32 (-1, 1)", 2 * b4, [&] { (void)unary(UnaryOp::atanh, unit(), DType::F32); });
    run("rsqrt f32 (0, 4]", 2 * b4, [&] { (void)unary(UnaryOp::rsqrt, pos(), DType::F32); });
    run("cbrt f32", 2 * b4, [&] { (void)unary(UnaryOp::cbrt, a, DType::F32); });
    run("erf_inv f32 (-1, 1)", 2 * b4, [&] { (void)unary(UnaryOp::erf_inv, unit(), DType::F32); });
    run("pow f32 (0, 4] ^ [-2, 2)", 3 * b4, [&] { (void)binary(BinaryOp::pow, pos(), a, DType::F32, a.shape); });
    run("atan2 f32", 3 * b4, [&] { (void)binary(BinaryOp::atan2, a, b(), DType::F32, a.shape); });
    // Half-precision math (f16 and bf16 in and out: half the bytes of f32's): b4 / 2 per tensor.
    for (const auto& [label, t] : {std::pair<const char*, Input*>{"f16", &a16}, {"bf16", &abf16}})
      for (UnaryOp op : {UnaryOp::exp, UnaryOp::sigmoid, UnaryOp::tanh, UnaryOp::erf})
        run(std::string(op_name(op)) + " " + label, b4, [&, op, t] { (void)unary(op, (*t)(), (*t)().type); });
    Input pos16([&] { return as_type(pos(), DType::F16); }), posbf16([&] { return as_type(pos(), DType::BF16); });
    run("sqrt f16 (0, 4]", b4, [&] { (void)unary(UnaryOp::sqrt, pos16(), DType::F16); });
    run("sqrt bf16 (0, 4]", b4, [&] { (void)unary(UnaryOp::sqrt, posbf16(), DType::BF16); });
    // f16 moves and conversions without math: what the conversions alone cost.
    run("negate f16", b4, [&] { (void)unary(UnaryOp::negate, a16(), DType::F16); });
    run("as_type f32 to f16", 1.5 * b4, [&] { (void)as_type(a, DType::F16); });
    run("as_type f16 to f32", 1.5 * b4, [&] { (void)as_type(a16(), DType::F32); });
    run("add f16 same shape", 1.5 * b4, [&] { (void)binary(BinaryOp::add, a16(), b16(), DType::F16, a.shape); });
    run("divide f16 same shape", 1.5 * b4, [&] { (void)binary(BinaryOp::divide, a16(), b16(), DType::F16, a.shape); });
    run("divide bf16 same shape", 1.5 * b4, [&] { (void)binary(BinaryOp::divide, abf16(), bbf16(), DType::BF16, a.shape); });
    // A comparison writes u8 (four elements per word): two f32 reads and a byte per element.
    run("greater f32 same shape", 2.25 * b4, [&] { (void)binary(BinaryOp::greater, a, b(), DType::U8, a.shape); });
    run("add f32 same shape", 3 * b4, [&] { (void)binary(BinaryOp::add, a, b(), DType::F32, a.shape); });
    run("multiply f32 same shape", 3 * b4, [&] { (void)binary(BinaryOp::multiply, a, b(), DType::F32, a.shape); });
    run("divide f32 same shape", 3 * b4, [&] { (void)binary(BinaryOp::divide, a, b(), DType::F32, a.shape); });
    run("max f32 same shape", 3 * b4, [&] { (void)binary(BinaryOp::max, a, b(), DType::F32, a.shape); });
    run("add f32 [R,C] + [C] broadcast", 2 * b4, [&] { (void)binary(BinaryOp::add, a, row_vec(), DType::F32, a.shape); });
    run("add f32 [R,C] + [R,1] broadcast", 2 * b4, [&] { (void)binary(BinaryOp::add, a, col_vec(), DType::F32, a.shape); });
    run("sum f32 all axes", b4, [&] { (void)reduce(ReduceOp::sum, a, {0, 1}, false, DType::F32); });
    run("sum f32 axis 1 (rows)", b4, [&] { (void)reduce(ReduceOp::sum, a, {1}, false, DType::F32); });
    run("sum f32 axis 0 (columns)", b4, [&] { (void)reduce(ReduceOp::sum, a, {0}, false, DType::F32); });

    if (add_seconds > 0) std::printf("\nelements/s (same-shape add): %.3g\n", double(n) / add_seconds);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nxvk_bench_ops: %s\n", e.what());
    return 1;
  }
}
