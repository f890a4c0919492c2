// Reductions against the CPU reference (tests/ref/reduce.cpp). Integer results, max/min, all/any
// and argmax/argmin must match bit for bit; float sums and products within the bound of the
// reordered double accumulation (documented in reduce.cpp): 1 ulp of the output type plus
// n * 2^-52 * sum|x|. Determinism: identical bits over repeated runs and workgroup sizes.
#include <cmath>

#include "ops/reduce_internal.hpp"
#include "ops_shape_util.hpp"
#include "ref/reduce.hpp"

namespace nxvk::test {
namespace {

DType sum_type(DType t) {
  switch (t) {
    case DType::U2: case DType::U4: case DType::U8: case DType::U16: case DType::U32: return DType::U32;  // as Nx (u64 stays u64)
    case DType::S2: case DType::S4: case DType::S8: case DType::S16: case DType::S32: return DType::S32;
    default: return t;
  }
}

double ulp_of(DType t, double v) {
  const int mant = t == DType::F16 ? 10 : t == DType::BF16 ? 7 : t == DType::F32 ? 23 : t == DType::F8 ? 2
                   : t == DType::F8E4M3FN ? 3 : 52;
  const int emin = t == DType::F16 || t == DType::F8 ? -14 : t == DType::BF16 || t == DType::F32 ? -126
                   : t == DType::F8E4M3FN ? -6 : -1022;
  int e;
  std::frexp(v, &e);
  return std::ldexp(1.0, std::max(e - 1, emin) - mant);
}

class Reduce : public DeviceTest {
 protected:
  void check(ReduceOp op, DType t, const Shape& s, const std::vector<int64_t>& axes, bool keep) {
    if (!device_has(device(), t)) return;
    DType out = op == ReduceOp::all || op == ReduceOp::any ? DType::U8
                : (op == ReduceOp::sum || op == ReduceOp::product) ? sum_type(t) : t;
    auto h = random_tensor(rng(), t, s, true);
    std::vector<double> abs_sum;
    auto want = ref::reduce(op, h, axes, keep, out, &abs_sum);
    poison_cache(device(), want.bytes.size() + 64);
    auto got = download(reduce(op, upload(device(), h), axes, keep, out));
    ASSERT_EQ(got.shape, want.shape);
    const bool approx = type_info(out).is_float() && (op == ReduceOp::sum || op == ReduceOp::product);
    for (int64_t i = 0; i < got.size(); ++i) {
      if (!approx || ref::get_bits(got, i) == ref::get_bits(want, i)) {
        ASSERT_EQ(ref::get_bits(got, i), ref::get_bits(want, i))
            << op_name(op) << " " << type_name(t) << shape_string(s) << " element " << i;
        continue;
      }
      const double g = ref::get(got, i).f, w = ref::get(want, i).f;
      ASSERT_FALSE(std::isnan(g) != std::isnan(w) || (std::isinf(w) && g != w))
          << op_name(op) << " " << type_name(t) << " " << g << " vs " << w;
      const double n = static_cast<double>(h.size());
      const double tol = (op == ReduceOp::product ? 4 : 1) * ulp_of(out, w) + n * 0x1p-52 * abs_sum[i];
      ASSERT_LE(std::fabs(g - w), tol) << op_name(op) << " " << type_name(t) << shape_string(s) << " element " << i;
    }
  }
};

const std::vector<std::pair<Shape, std::vector<int64_t>>> kCases = {
    {{}, {}},            {{1}, {0}},          {{0}, {0}},             {{7}, {0}},
    {{3, 0}, {1}},       {{3, 0}, {0}},       {{13, 17}, {1}},        {{13, 17}, {0}},
    {{13, 17}, {0, 1}},  {{5, 1, 3}, {0, 2}}, {{4, 6, 5}, {1}},       {{4, 6, 5}, {0, 2}},
    {{2, 3, 4, 5}, {1, 3}}, {{3, 300}, {1}},  {{300, 3}, {0}},        {{1, 20001}, {1}},
    {{20001}, {0}},      {{600, 7}, {0}},     {{2, 9000, 3}, {1}},    {{97, 1, 89}, {0, 1, 2}},
    {{5, 1000}, {1}}};  // rows of 300, 1000, 20001 elements: 2, 4 and 32 per lane

TEST_F(Reduce, EveryOpTypeAndLayout) {
  std::vector<DType> types = real_types();
  types.insert(types.end(), sub_byte_types().begin(), sub_byte_types().end());
  for (int o = 0; o < 6; ++o)
    for (DType t : types)
      for (const auto& [s, axes] : kCases)
        for (bool keep : {rng()() % 2 == 0}) ASSERT_NO_FATAL_FAILURE(check(static_cast<ReduceOp>(o), t, s, axes, keep));
}

TEST_F(Reduce, ArgMaxArgMin) {
  for (DType t : real_types()) {
    if (!device_has(device(), t)) continue;
    for (const Shape& s : std::vector<Shape>{{1}, {13, 17}, {4, 6, 5}, {2, 9000}, {20001}}) {
      auto h = random_tensor(rng(), t, s, true);
      Tensor x = upload(device(), h);
      for (auto op : {ArgReduceOp::argmax, ArgReduceOp::argmin})
        for (auto tb : {TieBreak::Low, TieBreak::High})
          for (int64_t a = -1; a < static_cast<int64_t>(s.size()); ++a)
            for (bool keep : {a == 0}) {
              std::optional<int64_t> axis = a < 0 ? std::nullopt : std::optional<int64_t>(a);
              DType out = device_has(device(), DType::S64) ? DType::S64 : DType::S32;
              auto want = ref::arg_reduce(op, h, axis, keep, tb, out);
              ASSERT_TRUE(same_bits(download(arg_reduce(op, x, axis, keep, tb, out)), want))
                  << op_name(op) << " " << type_name(t) << shape_string(s) << " axis " << a;
            }
    }
  }
}

TEST_F(Reduce, NxNaNAndZeroRules) {
  // Nx.BinaryBackend: argmax/argmin return the LAST NaN; reduce_max keeps the first of equal
  // values (-0.0 vs 0.0); sums start from +0.
  auto f = [&](std::vector<double> v) {
    auto h = ref::make(DType::F32, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) ref::set(h, i, ref::of_double(v[i]));
    return h;
  };
  auto x = f({1, NAN, 2, NAN, 5});
  EXPECT_EQ(ref::get(download(arg_reduce(ArgReduceOp::argmax, upload(device(), x), {}, false, TieBreak::Low, DType::S32)), 0).s, 3);
  EXPECT_EQ(ref::get(download(arg_reduce(ArgReduceOp::argmin, upload(device(), x), {}, false, TieBreak::High, DType::S32)), 0).s, 3);
  // Ties of -0 and +0, for every float type (a compiler may turn a compare into a min or max
  // instruction that ranks -0 below +0: it did for f16 in the cumulative ops on the H200).
  for (DType t : real_types()) {
    if (!type_info(t).is_float() || !device_has(device(), t)) continue;
    const uint64_t minus_zero = uint64_t(1) << (type_info(t).bits - 1);
    for (bool max : {true, false}) {
      auto z = ref::make(t, {2});
      ref::set_bits(z, max ? 0 : 1, minus_zero);  // max of [-0, +0], min of [+0, -0]: the first
      poison_cache(device(), 8);
      const uint64_t got = ref::get_bits(
          download(reduce(max ? ReduceOp::reduce_max : ReduceOp::reduce_min, upload(device(), z), {0}, false, t)), 0);
      EXPECT_EQ(got, max ? minus_zero : 0u) << (max ? "reduce_max " : "reduce_min ") << type_name(t);
    }
  }
  auto nz = f({-0.0, -0.0});
  EXPECT_EQ(ref::get_bits(download(reduce(ReduceOp::sum, upload(device(), nz), {0}, false, DType::F32)), 0), 0u);
}

TEST_F(Reduce, IntegerSumEqualsHostSumProperty) {
  for (int rep = 0; rep < 20; ++rep) {
    const int64_t n = 1 + rng()() % 50000;
    auto h = random_tensor(rng(), DType::S32, {n});
    int64_t want = 0;
    for (int64_t i = 0; i < n; ++i) want = static_cast<int64_t>(static_cast<uint64_t>(want) + ref::get(h, i).u);
    DType out = device_has(device(), DType::S64) ? DType::S64 : DType::S32;
    auto got = download(reduce(ReduceOp::sum, upload(device(), h), {0}, false, out));
    EXPECT_EQ(ref::get(got, 0).s, out == DType::S64 ? want : static_cast<int64_t>(static_cast<int32_t>(want)));
  }
}

TEST_F(Reduce, DeterministicAcrossRunsAndWorkgroupSizes) {
  std::mt19937 r(seed());
  std::uniform_real_distribution<float> u(-1e3f, 1e3f);
  for (const auto& [s, axes] : std::vector<std::pair<Shape, std::vector<int64_t>>>{
           {{1 << 20}, {0}}, {{64, 4099}, {1}}, {{32, 4096}, {1}}, {{3000, 65}, {0}}, {{7, 50, 9}, {0, 2}}}) {
    auto h = ref::make(DType::F32, s);
    for (int64_t i = 0; i < h.size(); ++i) ref::set(h, i, ref::of_double(u(r) * std::pow(10.0, static_cast<int>(r() % 7) - 3)));
    Tensor x = upload(device(), h);
    std::vector<uint8_t> first;
    for (uint32_t wg : {256u, 64u, 32u, 128u}) {
      reduce_internal::set_workgroup_size(wg);
      for (int run = 0; run < (wg == 256 && s.size() == 1 ? 100 : 3); ++run) {
        auto got = download(reduce(ReduceOp::sum, x, axes, false, DType::F32)).bytes;
        if (first.empty()) first = got;
        ASSERT_EQ(got, first) << "workgroup " << wg << " run " << run << " shape " << shape_string(s);
      }
    }
    reduce_internal::set_workgroup_size(0);
  }
}

TEST_F(Reduce, ComplexIsUnsupported) {
  Tensor x = upload(device(), ref::make(DType::C64, {3}));
  EXPECT_NXVK_ERROR(reduce(ReduceOp::sum, x, {0}, false, DType::C64), ErrorKind::Unsupported, "sum", "complex not supported yet");
}

TEST_F(Reduce, LargerThanMaxStorageBufferRangeIsChunked) {
  // Sum over all of a tensor past maxStorageBufferRange: split into bindable chunks.
  const uint64_t range = device().caps().max_storage_buffer_range;
  if (range > (256ull << 20)) GTEST_SKIP() << "maxStorageBufferRange " << range << " is too large to exceed cheaply";
  const int64_t n = static_cast<int64_t>(range / 4) + 12345;
  std::vector<float> host(n);
  double want = 0;
  for (int64_t i = 0; i < n; ++i) { host[i] = static_cast<float>((i * 7919) % 1000) * 0.25f; want += host[i]; }
  Tensor x = from_binary(device(), DType::F32, {n}, std::as_bytes(std::span<const float>(host)));
  auto got = download(reduce(ReduceOp::sum, x, {0}, false, DType::F32));
  EXPECT_EQ(ref::get(got, 0).f, static_cast<double>(static_cast<float>(want)));
}

// f32 subnormals (GPUs may flush them in arithmetic and comparisons; Nx keeps them), on the
// default device and with f64 masked off: every result bit for bit.
TEST_F(Reduce, F32Subnormals) {
  auto masked = open_device(DeviceOptions{.disable = {"f64", "int64"}});
  auto tiny = [&](const Shape& s, bool small) {
    ref::HostTensor h = ref::make(DType::F32, s);
    for (int64_t i = 0; i < h.size(); ++i) ref::set_bits(h, i, tiny_f32_bits(rng(), small));
    return h;
  };
  for (Device* d : {&device(), masked.get()}) {
    const std::string where = d->caps().float64 ? " (f64 device)" : " (f64 masked off)";
    // Sums of subnormals below 2^-135 are exact in any order.
    auto small = tiny({37, 41}, true), mixed = tiny({37, 41}, false);
    auto pairs = tiny({300, 2}, false);  // a product of two: one rounding, whatever the order
    for (int64_t i = 0; i < pairs.size(); i += 2)
      if (rng()() % 2) ref::set_bits(pairs, i, power_of_two_f32_bits(rng()));
    struct Case { ReduceOp op; const ref::HostTensor* x; DType out; };
    for (const Case& c : {Case{ReduceOp::sum, &small, DType::F32}, Case{ReduceOp::product, &pairs, DType::F32},
                          Case{ReduceOp::reduce_max, &mixed, DType::F32}, Case{ReduceOp::reduce_min, &mixed, DType::F32},
                          Case{ReduceOp::any, &small, DType::U8}, Case{ReduceOp::all, &small, DType::U8},
                          Case{ReduceOp::any, &mixed, DType::U8}, Case{ReduceOp::all, &mixed, DType::U8}})
      for (const std::vector<int64_t>& axes : {std::vector<int64_t>{1}, std::vector<int64_t>{0, 1}}) {
        if (c.op == ReduceOp::product && axes.size() == 2) continue;  // more than one rounding
        auto want = ref::reduce(c.op, *c.x, axes, false, c.out);
        poison_cache(*d, want.bytes.size() + 64);
        EXPECT_TRUE(same_bits(download(reduce(c.op, upload(*d, *c.x), axes, false, c.out)), want))
            << op_name(c.op) << " over " << axes.size() << " axes" << where;
      }
    const DType idx = d->caps().int64 ? DType::S64 : DType::S32;
    for (auto op : {ArgReduceOp::argmax, ArgReduceOp::argmin})
      for (auto axis : {std::optional<int64_t>(1), std::optional<int64_t>()}) {
        auto want = ref::arg_reduce(op, mixed, axis, false, TieBreak::Low, idx);
        poison_cache(*d, want.bytes.size() + 64);
        EXPECT_TRUE(same_bits(download(arg_reduce(op, upload(*d, mixed), axis, false, TieBreak::Low, idx)), want))
            << op_name(op) << (axis ? " axis 1" : " flat") << where;
      }
  }
}

TEST_F(Reduce, WithoutFloat64AndInt64) {
  auto dev = open_device(DeviceOptions{.disable = {"f64", "int64"}});
  for (DType t : {DType::F32, DType::F16, DType::S32, DType::U8}) {
    auto h = random_tensor(rng(), t, {37, 41}, true);
    for (auto op : {ReduceOp::sum, ReduceOp::reduce_max, ReduceOp::any}) {
      DType out = op == ReduceOp::any ? DType::U8 : op == ReduceOp::sum ? sum_type(t) : t;
      std::vector<double> abs_sum;
      auto want = ref::reduce(op, h, {1}, false, out, &abs_sum);
      auto got = download(reduce(op, upload(*dev, h), {1}, false, out));
      for (int64_t i = 0; i < got.size(); ++i) {
        if (op == ReduceOp::sum && type_info(t).is_float()) {
          const double g = ref::get(got, i).f, w = ref::get(want, i).f;
          if (std::isnan(w) || std::isinf(w)) { EXPECT_EQ(ref::get_bits(got, i), ref::get_bits(want, i)); continue; }
          // f32 accumulation: n ulps of the running sum bound the reordering.
          EXPECT_LE(std::fabs(g - w), ulp_of(out, w) + 41 * 0x1p-23 * abs_sum[i]) << i;
        } else {
          EXPECT_EQ(ref::get_bits(got, i), ref::get_bits(want, i)) << op_name(op) << " " << type_name(t) << " " << i;
        }
      }
    }
    EXPECT_NXVK_ERROR(reduce(ReduceOp::sum, upload(*dev, h), {0}, false, DType::S64), ErrorKind::Unsupported,
                      "unsupported on this device: s64");
  }
}

}  // namespace
}  // namespace nxvk::test
