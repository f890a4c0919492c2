// The caching allocator: size classes, reuse, statistics, the release call, the cache limit, and
// buffers that outlive their last handle while a submission still uses them.
#include "nxvk_test.hpp"

namespace nxvk::test {
namespace {

class AllocatorTest : public DeviceTest {};

TEST_F(AllocatorTest, StatisticsTrackLiveAndRequestedBytes) {
  auto dev = open_device();
  MemoryStats before = dev->memory_stats();
  EXPECT_EQ(before.live_buffers, 0u);
  EXPECT_EQ(before.allocations, 0u);
  {
    auto a = dev->allocate(1000);
    auto b = dev->allocate(5000);
    MemoryStats s = dev->memory_stats();
    EXPECT_EQ(s.live_buffers, 2u);
    EXPECT_EQ(s.bytes_requested, 6000u);
    // Size classes round up by at most 25% (and to at least 256 bytes).
    EXPECT_GE(s.bytes_in_use, 6000u);
    EXPECT_LE(s.bytes_in_use, 6000u * 5 / 4 + 256);
    EXPECT_EQ(s.allocations, 2u);
    EXPECT_EQ(s.cache_hits, 0u);
    EXPECT_GE(s.peak_bytes_in_use, s.bytes_in_use);
    EXPECT_EQ(a->size(), 1000u);
    EXPECT_EQ(b->size(), 5000u);
  }
  MemoryStats after = dev->memory_stats();
  EXPECT_EQ(after.live_buffers, 0u);
  EXPECT_EQ(after.bytes_in_use, 0u);
  EXPECT_EQ(after.bytes_requested, 0u);
  EXPECT_EQ(after.cached_buffers, 2u);
  EXPECT_GE(after.bytes_cached, 6000u);
  EXPECT_GE(after.peak_bytes_in_use, 6000u);
}

TEST_F(AllocatorTest, FreedBuffersAreReused) {
  auto dev = open_device();
  { auto a = dev->allocate(4096); }
  MemoryStats s1 = dev->memory_stats();
  ASSERT_EQ(s1.cached_buffers, 1u);
  {
    auto again = dev->allocate(4096);  // same size class: served from the cache
    MemoryStats s2 = dev->memory_stats();
    EXPECT_EQ(s2.allocations, s1.allocations);
    EXPECT_EQ(s2.cache_hits, s1.cache_hits + 1);
    EXPECT_EQ(s2.cached_buffers, 0u);
    EXPECT_EQ(s2.live_buffers, 1u);
  }
  {
    auto smaller = dev->allocate(3000);  // a cached block up to twice the need is reused
    EXPECT_EQ(dev->memory_stats().cache_hits, s1.cache_hits + 2);
    EXPECT_EQ(smaller->size(), 3000u);
  }
  {
    auto larger = dev->allocate(100000);  // nothing cached fits: a new allocation
    EXPECT_EQ(dev->memory_stats().allocations, s1.allocations + 1);
  }
  {
    auto tiny = dev->allocate(16);  // the 4 KiB block is more than twice 256 bytes: not reused
    EXPECT_EQ(dev->memory_stats().allocations, s1.allocations + 2);
  }
}

TEST_F(AllocatorTest, ReusedBufferHoldsTheNewData) {
  auto dev = open_device();
  const uint32_t n = 10000;
  std::vector<float> first = random_floats(n), second = random_floats(n);
  {
    auto a = dev->allocate(n * 4);
    dev->write(*a, 0, first.data(), n * 4);
  }
  dev->sync();  // through staging the write is a pending copy, which holds `a` until it completes
  auto b = poisoned(*dev, n * 4);
  EXPECT_GE(dev->memory_stats().cache_hits, 1u);
  auto poison = read_all<uint32_t>(*dev, *b, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(poison[i], kPoison) << i;
  dev->write(*b, 0, second.data(), n * 4);
  EXPECT_EQ(first_mismatch(read_all<float>(*dev, *b, n), second), -1);
}

TEST_F(AllocatorTest, ReleaseCachedMemoryEmptiesTheCache) {
  auto dev = open_device();
  {
    std::vector<std::shared_ptr<Buffer>> buffers;
    for (int i = 0; i < 10; ++i) buffers.push_back(dev->allocate(1024 * (i + 1)));
  }
  MemoryStats s = dev->memory_stats();
  EXPECT_EQ(s.cached_buffers, 10u);
  EXPECT_GT(s.bytes_cached, 0u);
  dev->release_cached_memory();
  s = dev->memory_stats();
  EXPECT_EQ(s.cached_buffers, 0u);
  EXPECT_EQ(s.bytes_cached, 0u);
  uint64_t allocations = s.allocations;
  auto again = dev->allocate(1024);
  EXPECT_EQ(dev->memory_stats().allocations, allocations + 1);
}

TEST_F(AllocatorTest, CacheLimitFromEnvironment) {
  // NX_VULKAN_CACHE_MAX bounds the bytes kept for reuse; beyond it freed blocks go to the driver.
  ScopedEnv limit("NX_VULKAN_CACHE_MAX", "8192");
  auto dev = open_device();
  {
    auto a = dev->allocate(4096);
    auto b = dev->allocate(4096);
    auto c = dev->allocate(4096);
  }
  MemoryStats s = dev->memory_stats();
  EXPECT_EQ(s.cached_buffers, 2u);
  EXPECT_LE(s.bytes_cached, 8192u);
}

// A tensor the host drops while the GPU still uses it goes back to the cache at once, and its next
// owner's commands are ordered after those uses (one queue, a barrier between commands; a host
// write to mapped memory waits for them): the pending copy still reads the old data.
TEST_F(AllocatorTest, FreedTensorBlockIsReusedAfterItsPendingUses) {
  for (bool staging : {false, true}) {
    SCOPED_TRACE(staging ? "through staging" : "default transfers");
    auto dev = open_device(DeviceOptions{.force_staging = staging, .batch_max = 1000});
    const uint32_t n = 4096;
    std::vector<float> data = random_floats(n), other_data = random_floats(n);
    auto out = poisoned(*dev, n * 4);
    dev->sync();
    const uint64_t hits = dev->memory_stats().cache_hits, submissions = dev->submissions();
    {
      auto in = dev->allocate(n * 4);
      dev->write(*in, 0, data.data(), n * 4);
      const uint32_t spec[] = {kWorkgroup};
      BufferView views[] = {{in}, {out}};
      dev->dispatch({"copy", "", 2}, views, push_of(n), {groups_for(n)}, spec);
      // `in` is dropped here; the recorded (not yet submitted) copy still reads it.
    }
    EXPECT_EQ(dev->submissions(), submissions) << "the copy was submitted: the test would not see a pending use";
    auto other = dev->allocate(n * 4);  // `in`'s block
    EXPECT_EQ(dev->memory_stats().cache_hits, hits + 1);
    dev->write(*other, 0, other_data.data(), n * 4);
    dev->fill(*other, 0, n * 4, kPoison);
    dev->sync();
    EXPECT_EQ(first_mismatch(read_all<float>(*dev, *out, n), data), -1);
    auto words = read_all<uint32_t>(*dev, *other, n);
    EXPECT_EQ(words[0], kPoison);
    EXPECT_EQ(words[n - 1], kPoison);
  }
}

// Memory whose destruction has to wait for the GPU (beyond the cache's limit, here zero) is
// destroyed after the GPU is done with it, and nothing leaks.
TEST_F(AllocatorTest, DestructionWaitsForPendingUses) {
  ScopedEnv limit("NX_VULKAN_CACHE_MAX", "1");
  auto dev = open_device(DeviceOptions{.batch_max = 1000});
  const uint32_t n = 4096;
  std::vector<float> data = random_floats(n);
  auto out = poisoned(*dev, n * 4);
  {
    auto in = dev->allocate(n * 4);
    dev->write(*in, 0, data.data(), n * 4);
    const uint32_t spec[] = {kWorkgroup};
    BufferView views[] = {{in}, {out}};
    dev->dispatch({"copy", "", 2}, views, push_of(n), {groups_for(n)}, spec);
  }
  EXPECT_EQ(dev->memory_stats().cached_buffers, 0u);
  dev->sync();
  EXPECT_EQ(first_mismatch(read_all<float>(*dev, *out, n), data), -1);
  EXPECT_EQ(dev->memory_stats().live_buffers, 1u);
}

TEST_F(AllocatorTest, ZeroByteAllocation) {
  auto dev = open_device();
  auto empty = dev->allocate(0);
  EXPECT_EQ(empty->size(), 0u);
  EXPECT_EQ(dev->memory_stats().live_buffers, 1u);
}

TEST_F(AllocatorTest, StagingBuffersAreCountedAndReturned) {
  auto dev = open_device(DeviceOptions{.force_staging = true});
  ASSERT_FALSE(dev->zero_copy());
  const uint32_t n = 100000;
  std::vector<float> data = random_floats(n);
  auto b = dev->allocate(n * 4);
  dev->write(*b, 0, data.data(), n * 4);
  EXPECT_EQ(first_mismatch(read_all<float>(*dev, *b, n), data), -1);
  dev->sync();
  // Only the tensor is live; the staging buffers went back to the cache.
  EXPECT_EQ(dev->memory_stats().live_buffers, 1u);
  EXPECT_GE(dev->memory_stats().cached_buffers, 1u);
}

// A large upload cycles through a few staging buffers (at most four chunks in flight), rather
// than creating one per 64 MiB chunk, and arrives whole.
TEST_F(AllocatorTest, LargeUploadReusesItsStagingBuffers) {
  auto dev = open_device(DeviceOptions{.force_staging = true});
  ASSERT_FALSE(dev->zero_copy());
  const uint64_t chunk = 64ull << 20, bytes = 9 * chunk + 12;
  if (dev->caps().max_buffer_size < bytes) GTEST_SKIP() << "maxBufferSize below " << bytes;
  std::vector<uint32_t> data(bytes / 4);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint32_t(i * 2654435761u);
  auto b = dev->allocate(bytes);
  const uint64_t before = dev->memory_stats().allocations;
  dev->write(*b, 0, data.data(), bytes);
  const uint64_t staging_created = dev->memory_stats().allocations - before;
  EXPECT_LE(staging_created, 5u) << "staging buffers created for 10 chunks";
  std::vector<uint32_t> back(data.size());
  dev->read(*b, 0, back.data(), bytes);
  EXPECT_EQ(first_mismatch(back, data), -1);
}

TEST_F(AllocatorTest, SharedDeviceReturnsToZero) {
  Device& dev = device();
  for (int i = 0; i < 50; ++i) {
    auto b = poisoned(dev, 256 * (i + 1));
    auto words = read_all<uint32_t>(dev, *b, 64);
    ASSERT_EQ(words[63], kPoison);
  }
  // The fixture checks live_buffers == 0 after this test.
}

}  // namespace
}  // namespace nxvk::test
