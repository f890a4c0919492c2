// The test main and the shared fixture (see nxvk_test.hpp).
#include "nxvk_test.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace nxvk::test {
namespace {

std::string g_temp_root;

void remove_temp_root() {
  // Registered with atexit before the Vulkan instance (a function-local static) exists, so this
  // runs after the instance and its devices (which save their pipeline caches) are destroyed.
  if (g_temp_root.empty() || std::getenv("NXVK_TEST_KEEP_TEMP") != nullptr) return;
  std::error_code ec;
  std::filesystem::remove_all(g_temp_root, ec);
}

class ValidationEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    ValidationReport report = validation_report();
    ASSERT_TRUE(report.enabled) << "the validation layer is not enabled; install vulkan-validationlayers";
  }
};

}  // namespace

const std::string& temp_root() { return g_temp_root; }

std::string fresh_dir(const std::string& name) {
  static int counter = 0;
  std::filesystem::path dir =
      std::filesystem::path(g_temp_root) / (name + "-" + std::to_string(++counter));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

ScopedEnv::ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
  if (const char* old = std::getenv(name)) old_ = old;
  if (value) setenv(name, value->c_str(), 1);
  else unsetenv(name);
}

ScopedEnv::~ScopedEnv() {
  if (old_) setenv(name_.c_str(), old_->c_str(), 1);
  else unsetenv(name_.c_str());
}

void DeviceTest::SetUp() {
  validation_baseline_ = validation_report().messages;
  if (const char* s = std::getenv("NXVK_TEST_SEED")) seed_ = static_cast<uint32_t>(std::strtoul(s, nullptr, 10));
  else seed_ = std::random_device{}();
  rng_.seed(seed_);
  RecordProperty("seed", std::to_string(seed_));
}

void DeviceTest::TearDown() {
  if (shared_) expect_idle(*shared_);
  for (auto& d : devices_) expect_idle(*d);
  devices_.clear();  // closes them: pipeline caches are saved, Vulkan objects destroyed
  shared_.reset();
  ValidationReport report = validation_report();
  EXPECT_EQ(report.messages, validation_baseline_)
      << "validation layer messages during the test; the last one: " << report.last_message;
  if (HasFailure())
    std::fprintf(stderr, "[nxvk test] random seed was %u (rerun with NXVK_TEST_SEED=%u)\n", seed_, seed_);
}

Device& DeviceTest::device() {
  if (!shared_) shared_ = Device::open("");
  return *shared_;
}

std::shared_ptr<Device> DeviceTest::open_device(const DeviceOptions& options) {
  auto d = Device::open_index(default_device_index(), options);
  devices_.push_back(d);
  return d;
}

uint64_t DeviceTest::accept_validation_messages() {
  uint64_t now = validation_report().messages;
  uint64_t seen = now - validation_baseline_;
  validation_baseline_ = now;
  return seen;
}

void DeviceTest::expect_idle(Device& device) {
  device.sync();
  MemoryStats stats = device.memory_stats();
  EXPECT_EQ(stats.live_buffers, 0u) << "buffers still live on " << device.caps().name << " after sync";
  EXPECT_EQ(stats.bytes_in_use, 0u);
  EXPECT_EQ(stats.bytes_requested, 0u);
}

std::vector<float> DeviceTest::random_floats(size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> out(n);
  for (auto& x : out) x = dist(rng_);
  return out;
}

std::vector<uint8_t> DeviceTest::random_bytes(size_t n) {
  std::uniform_int_distribution<int> dist(0, 255);
  std::vector<uint8_t> out(n);
  for (auto& x : out) x = static_cast<uint8_t>(dist(rng_));
  return out;
}

std::shared_ptr<Buffer> poisoned(Device& device, uint64_t bytes) {
  auto buffer = device.allocate(bytes);
  uint64_t words = bytes / 4 * 4;
  if (words) device.fill(*buffer, 0, words, kPoison);
  // A tail of 1..3 bytes cannot be filled by vkCmdFillBuffer: write the poison pattern's bytes.
  if (bytes % 4) {
    const uint32_t p = kPoison;
    device.write(*buffer, words, &p, bytes % 4);
  }
  return buffer;
}

std::vector<uint8_t> read_bytes(Device& device, const Buffer& buffer, uint64_t offset, uint64_t bytes) {
  std::vector<uint8_t> out(bytes);
  device.read(buffer, offset, out.data(), bytes);
  return out;
}

}  // namespace nxvk::test

int main(int argc, char** argv) {
  // Before the first Vulkan instance is created: every test runs under the validation layer.
  setenv("NX_VULKAN_VALIDATION", "1", 1);
  // Never touch the user's cache: pipelines and SPIR-V go to a private temporary directory.
  std::string base = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
  std::string pattern = base + "/nxvk-test-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    std::perror("mkdtemp");
    return 2;
  }
  nxvk::test::g_temp_root = buf.data();
  std::atexit(nxvk::test::remove_temp_root);
  setenv("NX_VULKAN_CACHE_DIR", (nxvk::test::g_temp_root + "/cache").c_str(), 1);
  // Compiled kernels are shared across runs (thousands of op variants take minutes to compile);
  // the pipeline cache and everything the cache tests check stay in the private directory.
  if (const char* home = std::getenv("HOME"); home != nullptr && std::getenv("NX_VULKAN_SPIRV_CACHE_DIR") == nullptr)
    setenv("NX_VULKAN_SPIRV_CACHE_DIR", (std::string(home) + "/.cache/nx_vulkan/spirv").c_str(), 1);

  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new nxvk::test::ValidationEnvironment);
  return RUN_ALL_TESTS();
}
