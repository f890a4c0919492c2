// Capabilities and the capability mask (NX_VULKAN_DISABLE / DeviceOptions::disable): a masked
// feature reads as absent, is not enabled on the VkDevice, and a kernel that uses it anyway is
// refused or caught by the validation layer.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "nxvk/selftest.hpp"
#include "nxvk_test.hpp"

namespace nxvk::test {
namespace {

class CapabilityTest : public DeviceTest {};

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST_F(CapabilityTest, DevicesAreListedWithTheirCapabilities) {
  const auto& devices = list_devices();
  ASSERT_FALSE(devices.empty());
  for (uint32_t i = 0; i < devices.size(); ++i) {
    EXPECT_EQ(devices[i].index, i);
    EXPECT_FALSE(devices[i].name.empty());
    EXPECT_GT(devices[i].max_storage_buffer_range, 0u);
    EXPECT_GT(devices[i].max_memory_allocation_size, 0u);
    EXPECT_TRUE(devices[i].timeline_semaphore);
    EXPECT_NE(devices[i].describe().find(devices[i].name), std::string::npos);
  }
  EXPECT_LT(default_device_index(), devices.size());
  EXPECT_EQ(device().caps().index, default_device_index());
  EXPECT_TRUE(device().caps().disabled.empty());
}

TEST_F(CapabilityTest, MaskingF64ThroughOptions) {
  auto dev = open_device(DeviceOptions{.disable = {"f64"}});
  EXPECT_FALSE(dev->caps().float64);
  EXPECT_FALSE(dev->caps().atomic_float64_add);
  EXPECT_FALSE(dev->caps().atomic_float64_min_max);
  EXPECT_TRUE(has(dev->caps().disabled, "f64"));
  EXPECT_NE(dev->caps().describe().find("masked off"), std::string::npos);
  // The mask is per device: the instance's list and other devices are unchanged.
  const Capabilities& original = list_devices()[dev->caps().index];
  EXPECT_TRUE(original.disabled.empty());
  EXPECT_EQ(device().caps().float64, original.float64);
  EXPECT_EQ(dev->caps().int64, original.int64);
}

// fused_fma_f32, probed with one input when the device opens, holds for fma() over many: where
// it says fused, every result is the once-rounded a b + c (std::fma); where not, some inputs
// show the double rounding. Masking it off skips the probe.
TEST_F(CapabilityTest, FusedFmaProbeHoldsForManyInputs) {
  constexpr const char* kFma = R"GLSL(#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Io_t { float w[]; } io;
void main() {
  uint i = gl_GlobalInvocationID.x;
  precise float p = io.w[3u * i] * io.w[3u * i + 1u];
  precise float e = fma(io.w[3u * i], io.w[3u * i + 1u], -p);  // as nx_ff_two_prod
  io.w[3u * i + 2u] = e;
}
)GLSL";
  constexpr uint32_t n = 64 * 256;
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> d(0.5f, 2.0f);
  std::vector<float> io(3 * n);
  for (uint32_t i = 0; i < n; ++i) io[3 * i] = d(rng), io[3 * i + 1] = d(rng), io[3 * i + 2] = NAN;  // poison
  auto buffer = device().allocate(io.size() * sizeof(float), "fma test");
  device().write(*buffer, 0, io.data(), io.size() * sizeof(float));
  device().dispatch(Kernel{"fma_test", kFma, 1}, std::vector<BufferView>{{buffer}}, {}, {n / 64});
  std::vector<float> out(io.size());
  device().read(*buffer, 0, out.data(), out.size() * sizeof(float));
  uint32_t exact = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const float a = io[3 * i], b = io[3 * i + 1];
    exact += out[3 * i + 2] == std::fma(a, b, -(a * b));  // the product's exact error
  }
  if (device().caps().fused_fma_f32) EXPECT_EQ(exact, n);
  else EXPECT_LT(exact, n) << "every fma() rounded once, yet the probe said it does not";
  auto masked = open_device(DeviceOptions{.disable = {"fused_fma"}});
  EXPECT_FALSE(masked->caps().fused_fma_f32);
  EXPECT_TRUE(has(masked->caps().disabled, "fused_fma"));
}

TEST_F(CapabilityTest, MaskingThroughEnvironmentCombinesWithOptions) {
  ScopedEnv mask("NX_VULKAN_DISABLE", "int64, int16");
  auto dev = open_device(DeviceOptions{.disable = {"f64"}});
  EXPECT_FALSE(dev->caps().int64);
  EXPECT_FALSE(dev->caps().int16);
  EXPECT_FALSE(dev->caps().float64);
  EXPECT_TRUE(has(dev->caps().disabled, "int64"));
  EXPECT_TRUE(has(dev->caps().disabled, "int16"));
  EXPECT_TRUE(has(dev->caps().disabled, "f64"));
}

TEST_F(CapabilityTest, UnknownFeatureNameIsInvalidArgument) {
  EXPECT_NXVK_ERROR(open_device(DeviceOptions{.disable = {"f65"}}), ErrorKind::InvalidArgument, "f65", "f64");
  {
    ScopedEnv mask("NX_VULKAN_DISABLE", "nonsense");
    EXPECT_NXVK_ERROR(open_device(), ErrorKind::InvalidArgument, "NX_VULKAN_DISABLE", "nonsense");
  }
  Capabilities caps = list_devices()[0];
  EXPECT_NXVK_ERROR(apply_capability_mask(caps, {"bogus"}), ErrorKind::InvalidArgument, "bogus");
}

TEST_F(CapabilityTest, MaskingEveryFeatureStillRunsTheSelftest) {
  const auto& names = maskable_features();
  for (const char* expected : {"f64", "int64", "int16", "int8", "f16", "subgroup", "unified_memory",
                               "push_descriptor"})
    EXPECT_TRUE(has(names, expected)) << expected;
  auto dev = open_device(DeviceOptions{.disable = names});
  const Capabilities& c = dev->caps();
  EXPECT_FALSE(c.float64 || c.int64 || c.int16 || c.int8 || c.float16);
  EXPECT_FALSE(c.storage_buffer_8bit || c.storage_buffer_16bit);
  EXPECT_EQ(c.subgroup_operations, 0u);
  EXPECT_FALSE(c.subgroup_size_control);
  EXPECT_FALSE(c.atomic_float32_add || c.atomic_float32_min_max);
  EXPECT_FALSE(c.cooperative_matrix_khr || c.cooperative_matrix_nv);
  EXPECT_FALSE(c.unified_memory);
  EXPECT_FALSE(c.push_descriptor);
  EXPECT_FALSE(dev->zero_copy());  // no unified memory: tensors live behind staging
  EXPECT_EQ(c.disabled.size(), names.size());
  for (const auto& result : run_selftest(*dev)) EXPECT_TRUE(result.passed) << result.name << ": " << result.detail;
}

// A kernel that stores doubles (f64) or 64-bit integers (int64).
std::string wide_kernel(bool float64) {
  std::string body = float64 ? "precise double x = double(i) * 0.1lf; precise double y = x + 0.25lf; dst.data[i] = y;"
                             : "dst.data[i] = uint64_t(i) * 4294967311ul + 7ul;";
  return std::string("#version 450\n") +
         (float64 ? "" : "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n") +
         "layout(local_size_x = 64) in;\n"
         "layout(std430, binding = 0) writeonly buffer Out { " + (float64 ? "double" : "uint64_t") +
         " data[]; } dst;\n"
         "layout(push_constant) uniform Push { uint n; } pc;\n"
         "void main() {\n  uint i = gl_GlobalInvocationID.x;\n  if (i < pc.n) { " + body + " }\n}\n";
}

class WideTypeTest : public DeviceTest, public ::testing::WithParamInterface<bool> {
 protected:
  bool float64() const { return GetParam(); }
  bool supported(const Capabilities& c) const { return float64() ? c.float64 : c.int64; }
};

TEST_P(WideTypeTest, KernelRunsWhenTheDeviceHasTheType) {
  if (!supported(list_devices()[default_device_index()])) GTEST_SKIP() << "the device lacks this type";
  auto dev = open_device();
  const uint32_t n = 1000;
  auto out = poisoned(*dev, n * 8ull);
  BufferView views[] = {{out}};
  dev->dispatch({float64() ? "store_f64" : "store_i64", wide_kernel(float64()), 1}, views, push_of(n),
                {groups_for(n, 64)});
  if (float64()) {
    auto got = read_all<double>(*dev, *out, n);
    for (uint32_t i = 0; i < n; ++i) {
      volatile double x = double(i) * 0.1;
      double want = x + 0.25;
      ASSERT_EQ(got[i], want) << i;
    }
  } else {
    auto got = read_all<uint64_t>(*dev, *out, n);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(got[i], uint64_t(i) * 4294967311ull + 7) << i;
  }
}

TEST_P(WideTypeTest, MaskedTypeIsRefusedOrCaughtByValidation) {
  auto dev = open_device(DeviceOptions{.disable = {float64() ? "f64" : "int64"}});
  EXPECT_FALSE(supported(dev->caps()));
  const uint32_t n = 64;
  bool refused = false;
  {
    auto out = poisoned(*dev, n * 8ull);
    BufferView views[] = {{out}};
    try {
      dev->dispatch({float64() ? "masked_f64" : "masked_i64", wide_kernel(float64()), 1}, views, push_of(n), {1});
      dev->sync();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
      EXPECT_NE(std::string(e.what()).find(float64() ? "f64" : "int64"), std::string::npos) << e.what();
      refused = true;
    }
  }
  const uint64_t messages = accept_validation_messages();
  EXPECT_TRUE(refused || messages > 0)
      << "a kernel using a masked type was neither refused nor reported by the validation layer";
}

INSTANTIATE_TEST_SUITE_P(Types, WideTypeTest, ::testing::Values(true, false),
                         [](const auto& info) { return std::string(info.param ? "F64" : "Int64"); });

}  // namespace
}  // namespace nxvk::test
