// The on-disk pipeline cache under NX_VULKAN_CACHE_DIR: persisted, reloaded, and harmless when
// the directory is missing, unwritable, or holds a corrupt or truncated file.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "nxvk/selftest.hpp"
#include "nxvk_test.hpp"
#include "runtime/hash.hpp"

namespace nxvk::test {
namespace {

namespace fs = std::filesystem;

constexpr size_t kHeaderBytes = 64;  // our header in front of the driver's data (pipeline.cpp)

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}


class PipelineCacheTest : public DeviceTest {
 protected:
  // Opens a separate device (reading NX_VULKAN_CACHE_DIR now), runs the selftest on it, closes it
  // (which saves the cache) and returns the cache path it used.
  std::string run_and_close(const DeviceOptions& options = {}) {
    auto dev = Device::open_index(default_device_index(), options);
    for (const auto& r : run_selftest(*dev)) EXPECT_TRUE(r.passed) << r.name << ": " << r.detail;
    EXPECT_GT(dev->pipelines_created(), 0u);
    expect_idle(*dev);
    std::string path = dev->pipeline_cache_path();
    dev.reset();
    return path;
  }
  // Writes `bytes` as the cache file, then a fresh device must work and rewrite a valid file.
  void expect_recovers_from(const std::string& path, const std::string& bytes) {
    spit(path, bytes);
    std::string again = run_and_close(DeviceOptions{.batch_max = 16});
    EXPECT_EQ(again, path);
    std::string rewritten = slurp(path);
    EXPECT_GT(rewritten.size(), kHeaderBytes);
    EXPECT_EQ(rewritten.substr(0, 8), "NXVKPC02");
  }
};

// The checksum and the kernel keys are XXH64: its published test values (as `xxhsum -H1`
// prints them) cover the empty input, the byte and 4-byte tails and the 32-byte stripes.
TEST(Hash64, MatchesXxh64ReferenceValues) {
  EXPECT_EQ(hash64(""), 0xef46db3751d8e999ull);
  EXPECT_EQ(hash64("a"), 0xd24ec4f1a98c6e5bull);
  EXPECT_EQ(hash64("abc"), 0x44bc2cf5ad770999ull);
  EXPECT_EQ(hash64("The quick brown fox jumps over the lazy dog"), 0x0b242d361fda71bcull);
  std::string long_input;
  for (int i = 0; i < 1000; ++i) long_input += static_cast<char>(48 + i % 75);
  EXPECT_EQ(hash64(long_input), 0x08d7dc6b5f7e4d50ull);
}

TEST_F(PipelineCacheTest, PersistedUnderTheCacheDirectory) {
  std::string dir = fresh_dir("cache");
  ScopedEnv env("NX_VULKAN_CACHE_DIR", dir);
  EXPECT_EQ(cache_directory(), dir);
  std::string path = run_and_close();
  EXPECT_EQ(fs::path(path).parent_path(), fs::path(dir));
  ASSERT_TRUE(fs::exists(path)) << path;
  std::string first = slurp(path);
  EXPECT_GT(first.size(), kHeaderBytes);
  EXPECT_EQ(first.substr(0, 8), "NXVKPC02");
  // A second device loads it and works; no temporary files are left behind.
  run_and_close();
  for (const auto& entry : fs::directory_iterator(dir))
    EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << entry.path();
}

TEST_F(PipelineCacheTest, SaveOnDemand) {
  std::string dir = fresh_dir("cache");
  ScopedEnv env("NX_VULKAN_CACHE_DIR", dir);
  auto dev = open_device();
  for (const auto& r : run_selftest(*dev)) EXPECT_TRUE(r.passed) << r.name;
  EXPECT_FALSE(fs::exists(dev->pipeline_cache_path()));
  dev->save_pipeline_cache();
  EXPECT_TRUE(fs::exists(dev->pipeline_cache_path()));
}

TEST_F(PipelineCacheTest, MissingDirectoryIsCreated) {
  std::string dir = fresh_dir("cache") + "/does/not/exist/yet";
  ScopedEnv env("NX_VULKAN_CACHE_DIR", dir);
  std::string path = run_and_close();
  EXPECT_TRUE(fs::exists(path)) << path;
}

TEST_F(PipelineCacheTest, UnwritableDirectoryIsHarmless) {
  // A path under a regular file can never be created, even by root.
  std::string file = fresh_dir("cache") + "/a-file";
  spit(file, "not a directory");
  {
    ScopedEnv env("NX_VULKAN_CACHE_DIR", file + "/sub");
    run_and_close();
    EXPECT_EQ(slurp(file), "not a directory");
  }
  // A read-only directory (only meaningful when not root: root ignores permissions).
  if (geteuid() != 0) {
    std::string dir = fresh_dir("readonly");
    fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
    ScopedEnv env("NX_VULKAN_CACHE_DIR", dir);
    run_and_close();
    EXPECT_TRUE(fs::is_empty(dir));
    fs::permissions(dir, fs::perms::owner_all);
  }
}

TEST_F(PipelineCacheTest, GarbageFileIsIgnored) {
  std::string dir = fresh_dir("cache");
  ScopedEnv env("NX_VULKAN_CACHE_DIR", dir);
  std::string path = run_and_close();
  std::vector<uint8_t> junk = random_bytes(10000);
  expect_recovers_from(path, std::string(junk.begin(), junk.end()));
}

TEST_F(PipelineCacheTest, EmptyAndHeaderOnlyFilesAreIgnored) {
  std::string dir = fresh_dir("cache");
  ScopedEnv env("NX_VULKAN_CACHE_DIR", dir);
  std::string path = run_and_close();
  std::string valid = slurp(path);
  expect_recovers_from(path, "");
  expect_recovers_from(path, valid.substr(0, 5));
  expect_recovers_from(path, valid.substr(0, kHeaderBytes));
}

TEST_F(PipelineCacheTest, TruncatedFileIsIgnored) {
  std::string dir = fresh_dir("cache");
  ScopedEnv env("NX_VULKAN_CACHE_DIR", dir);
  std::string path = run_and_close();
  std::string valid = slurp(path);
  ASSERT_GT(valid.size(), kHeaderBytes + 2);
  expect_recovers_from(path, valid.substr(0, kHeaderBytes + (valid.size() - kHeaderBytes) / 2));
  expect_recovers_from(path, valid.substr(0, valid.size() - 1));
}

TEST_F(PipelineCacheTest, FlippedByteFailsTheChecksum) {
  std::string dir = fresh_dir("cache");
  ScopedEnv env("NX_VULKAN_CACHE_DIR", dir);
  std::string path = run_and_close();
  std::string bad = slurp(path);
  ASSERT_GT(bad.size(), kHeaderBytes);
  bad.back() = static_cast<char>(bad.back() ^ 0x5a);
  expect_recovers_from(path, bad);
}

TEST_F(PipelineCacheTest, GarbageBehindAValidHeaderReachesTheDriverHarmlessly) {
  // Our header and checksum are right, the driver's data is garbage: the driver must reject or
  // ignore it, and the runtime falls back to an empty cache.
  std::string dir = fresh_dir("cache");
  ScopedEnv env("NX_VULKAN_CACHE_DIR", dir);
  std::string path = run_and_close();
  std::string file = slurp(path);
  ASSERT_GT(file.size(), kHeaderBytes);
  std::vector<uint8_t> junk = random_bytes(file.size() - kHeaderBytes);
  std::string data(junk.begin(), junk.end());
  uint64_t checksum = hash64(data.data(), data.size());
  std::string forged = file.substr(0, kHeaderBytes - 8) + std::string(reinterpret_cast<char*>(&checksum), 8) + data;
  expect_recovers_from(path, forged);
  // The same with a driver blob whose own header claims a different device.
  std::string driver = file.substr(kHeaderBytes);
  if (driver.size() >= 32) {
    for (size_t i = 16; i < 32; ++i) driver[i] = static_cast<char>(~driver[i]);  // pipelineCacheUUID
    uint64_t sum = hash64(driver.data(), driver.size());
    expect_recovers_from(path, file.substr(0, kHeaderBytes - 8) + std::string(reinterpret_cast<char*>(&sum), 8) + driver);
  }
}

TEST_F(PipelineCacheTest, CacheDirectoryFallsBackToXdgAndHome) {
  {
    ScopedEnv dir("NX_VULKAN_CACHE_DIR", std::nullopt);
    ScopedEnv xdg("XDG_CACHE_HOME", "/some/xdg");
    EXPECT_EQ(cache_directory(), "/some/xdg/nx_vulkan");
  }
  ScopedEnv dir("NX_VULKAN_CACHE_DIR", std::nullopt);
  ScopedEnv xdg("XDG_CACHE_HOME", std::nullopt);
  ScopedEnv home("HOME", "/some/home");
  EXPECT_EQ(cache_directory(), "/some/home/.cache/nx_vulkan");
}

}  // namespace
}  // namespace nxvk::test
