// Kernels generated at run time: GLSL compiled by shaderc (nxvk::compile_glsl), dispatched as
// Kernel{name, glsl, bindings} (with an optional prefix), cached by the hash of their source in
// memory and on disk.
#include <filesystem>
#include <fstream>
#include <functional>

#include "nxvk_test.hpp"
#include "runtime/hash.hpp"

namespace nxvk::test {
namespace {

namespace fs = std::filesystem;

// An elementwise kernel out[i] = EXPR(a[i], b[i]), as an op library would generate it.
std::string elementwise(const std::string& expr) {
  return "#version 450\n"
         "layout(local_size_x_id = 0) in;\n"
         "layout(std430, binding = 0) readonly buffer A { float data[]; } a;\n"
         "layout(std430, binding = 1) readonly buffer B { float data[]; } b;\n"
         "layout(std430, binding = 2) writeonly buffer Out { float data[]; } dst;\n"
         "layout(push_constant) uniform Push { uint n; } pc;\n"
         "void main() {\n"
         "  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {\n"
         "    float x = a.data[i], y = b.data[i];\n"
         "    precise float r = " + expr + ";\n"
         "    dst.data[i] = r;\n"
         "  }\n"
         "}\n";
}

struct Op {
  std::string name, expr;
  std::function<float(float, float)> host;
};

const std::vector<Op>& ops() {
  // Operations that IEEE-754 and Vulkan both require to be correctly rounded (or exact).
  static const std::vector<Op> list = {
      {"gen_add", "x + y", [](float x, float y) { return x + y; }},
      {"gen_sub_scaled", "x - 2.0 * y", [](float x, float y) { float t = 2.0f * y; return x - t; }},
      {"gen_mul_add", "x * y + 1.0", [](float x, float y) { float t = x * y; return t + 1.0f; }},
      {"gen_max_abs", "max(abs(x), y)", [](float x, float y) { return std::max(std::fabs(x), y); }},
      {"gen_select", "x > y ? x : -y", [](float x, float y) { return x > y ? x : -y; }},
  };
  return list;
}

class GeneratedKernelTest : public DeviceTest {
 protected:
  // Runs `glsl` on fresh random data and checks every element against `host`.
  void run_checked(Device& dev, const std::string& name, const std::string& glsl,
                   const std::function<float(float, float)>& host, uint32_t n, uint32_t workgroup = 128) {
    run_checked(dev, Kernel{name, glsl, 3}, host, n, workgroup);
  }
  void run_checked(Device& dev, const Kernel& kernel, const std::function<float(float, float)>& host, uint32_t n,
                   uint32_t workgroup = 128) {
    const std::string& name = kernel.name;
    std::vector<float> a = random_floats(n, -10, 10), b = random_floats(n, -10, 10);
    auto ba = dev.allocate(n * 4ull), bb = dev.allocate(n * 4ull);
    auto out = poisoned(dev, n * 4ull);
    dev.write(*ba, 0, a.data(), n * 4ull);
    dev.write(*bb, 0, b.data(), n * 4ull);
    BufferView views[] = {{ba}, {bb}, {out}};
    const uint32_t spec[] = {workgroup};
    dev.dispatch(kernel, views, push_of(n), {groups_for(n, workgroup)}, spec);
    auto got = read_all<float>(dev, *out, n);
    for (uint32_t i = 0; i < n; ++i) {
      float want = host(a[i], b[i]);
      ASSERT_EQ(std::memcmp(&got[i], &want, 4), 0)
          << name << " element " << i << " of " << n << ": got " << got[i] << ", want " << want;
    }
  }
};

TEST_F(GeneratedKernelTest, CompileGlslGivesSpirv) {
  std::vector<uint32_t> words = compile_glsl(elementwise("x + y"), "gen_add");
  ASSERT_GE(words.size(), 5u);
  EXPECT_EQ(words[0], 0x07230203u);  // the SPIR-V magic number
  EXPECT_EQ(compile_glsl(elementwise("x + y"), "another_label"), words);  // cached by source
}

TEST_F(GeneratedKernelTest, GeneratedKernelsGiveCheckedResults) {
  Device& dev = device();
  for (const auto& op : ops()) {
    SCOPED_TRACE(op.name);
    run_checked(dev, op.name, elementwise(op.expr), op.host, 100'003);
  }
}

TEST_F(GeneratedKernelTest, GeneratedKernelsOnTheStagingPath) {
  auto dev = open_device(DeviceOptions{.force_staging = true});
  for (const auto& op : ops()) run_checked(*dev, op.name, elementwise(op.expr), op.host, 4099, 64);
}

TEST_F(GeneratedKernelTest, PipelinesAreCachedBySourceAndSpecialization) {
  auto dev = open_device();
  const Op& op = ops()[0];
  const std::string glsl = elementwise(op.expr);
  run_checked(*dev, op.name, glsl, op.host, 1000);
  const uint64_t created = dev->pipelines_created();
  run_checked(*dev, op.name, glsl, op.host, 2000);
  run_checked(*dev, "same_source_new_label", glsl, op.host, 10);
  EXPECT_EQ(dev->pipelines_created(), created);
  run_checked(*dev, op.name, glsl, op.host, 1000, 32);  // another workgroup size: a new pipeline
  EXPECT_EQ(dev->pipelines_created(), created + 1);
  run_checked(*dev, ops()[1].name, elementwise(ops()[1].expr), ops()[1].host, 1000);
  EXPECT_EQ(dev->pipelines_created(), created + 2);
}

// A kernel's leading GLSL as Kernel::prefix: built only when the pipeline is created; the
// pipeline is found by prefix_key and the rest's hash, so another key is another pipeline.
TEST_F(GeneratedKernelTest, PrefixIsBuiltOnlyWhenThePipelineIsCreated) {
  auto dev = open_device();
  const Op& op = ops()[2];
  const std::string full = elementwise(op.expr);
  const size_t split = full.find("void main()");
  int built = 0;
  Kernel kernel{op.name, full.substr(split), 3};
  kernel.prefix_key = "test-prefix";
  kernel.prefix = [&] {
    ++built;
    return full.substr(0, split);
  };
  const uint64_t created = dev->pipelines_created();
  for (int i = 0; i < 3; ++i) run_checked(*dev, kernel, op.host, 1000 + i);
  EXPECT_EQ(built, 1);
  EXPECT_EQ(dev->pipelines_created(), created + 1);
  kernel.prefix_key = "another-prefix";  // the same text under another key: a pipeline of its own
  run_checked(*dev, kernel, op.host, 1000);
  EXPECT_EQ(built, 2);
  EXPECT_EQ(dev->pipelines_created(), created + 2);
  run_checked(*dev, op.name, full, op.host, 1000);  // the whole text as glsl: another key again
  EXPECT_EQ(built, 2);
  EXPECT_EQ(dev->pipelines_created(), created + 3);
}

TEST_F(GeneratedKernelTest, SyntaxErrorIsInvalidArgumentNamingTheKernel) {
  const std::string broken = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() { float x = ; }\n";
  EXPECT_NXVK_ERROR(compile_glsl(broken, "broken_kernel"), ErrorKind::InvalidArgument, "broken_kernel", "GLSL");
  Device& dev = device();
  auto out = dev.allocate(64);
  BufferView views[] = {{out}};
  EXPECT_NXVK_ERROR(dev.dispatch({"fused_broken_op", broken, 1}, views, {}, {1}), ErrorKind::InvalidArgument,
                    "fused_broken_op");
  // Undeclared identifiers are errors too, and the device still runs good kernels afterwards.
  EXPECT_NXVK_ERROR(dev.dispatch({"fused_undeclared", elementwise("x + nope"), 1}, views, {}, {1}),
                    ErrorKind::InvalidArgument, "fused_undeclared", "nope");
  run_checked(dev, ops()[0].name, elementwise(ops()[0].expr), ops()[0].host, 1000);
}

TEST_F(GeneratedKernelTest, SpirvIsCachedOnDisk) {
  std::string dir = fresh_dir("spirv-cache");
  ScopedEnv env("NX_VULKAN_CACHE_DIR", dir);
  ScopedEnv spirv_env("NX_VULKAN_SPIRV_CACHE_DIR", dir + "/spirv");
  // A source no other test compiles, so this process has not cached it in memory.
  const std::string glsl = elementwise("x * 3.0 + y") + "// disk " + std::to_string(seed()) + "\n";
  std::vector<uint32_t> words = compile_glsl(glsl, "disk_cached");
  const std::string base = dir + "/spirv/" + std::to_string(hash64(glsl));
  EXPECT_TRUE(fs::exists(base + ".spv")) << base;
  EXPECT_TRUE(fs::exists(base + ".glsl")) << base;
  EXPECT_EQ(fs::file_size(base + ".spv"), words.size() * 4);
}

TEST_F(GeneratedKernelTest, DiskCacheIsReadAndCorruptEntriesAreRecompiled) {
  std::string dir = fresh_dir("spirv-cache");
  ScopedEnv env("NX_VULKAN_CACHE_DIR", dir);
  ScopedEnv spirv_env("NX_VULKAN_SPIRV_CACHE_DIR", dir + "/spirv");
  fs::create_directories(dir + "/spirv");
  auto plant = [&](const std::string& source, const std::string& spv) {
    const std::string base = dir + "/spirv/" + std::to_string(hash64(source));
    std::ofstream(base + ".glsl", std::ios::binary) << source;
    std::ofstream(base + ".spv", std::ios::binary) << spv;
  };
  // A valid entry is used as is: plant the SPIR-V of another kernel under a new source's hash.
  std::vector<uint32_t> donor_words = compile_glsl(elementwise("x + y"), "donor");
  const std::string fresh = elementwise("x - y") + "// planted " + std::to_string(seed()) + "\n";
  plant(fresh, std::string(reinterpret_cast<const char*>(donor_words.data()), donor_words.size() * 4));
  EXPECT_EQ(compile_glsl(fresh, "planted"), donor_words) << "the disk cache was not read";

  // Corrupt entries (garbage, truncated, wrong magic) are ignored: the source is compiled again.
  int k = 0;
  for (const std::string& junk : {std::string("garbage that is not SPIR-V at all!!"), std::string("\x03\x02#\x07", 4),
                                  std::string(64, '\0')}) {
    const std::string source = elementwise("x * y") + "// corrupt " + std::to_string(seed()) + "-" +
                               std::to_string(++k) + "\n";
    plant(source, junk);
    std::vector<uint32_t> words = compile_glsl(source, "recompiled");
    ASSERT_GE(words.size(), 5u);
    EXPECT_EQ(words[0], 0x07230203u);
    // And the recompiled kernel runs.
    run_checked(device(), "recompiled", source, [](float x, float y) { return x * y; }, 777);
  }
}

}  // namespace
}  // namespace nxvk::test
