// Host <-> device transfers and device copies on both memory paths: zero-copy (tensor memory is
// host-visible) and forced staging. Sizes 0, 1, 3, 4096 and 1,000,001 bytes, at odd offsets,
// into poisoned buffers so that bytes written outside the range are caught.
#include "nxvk_test.hpp"

namespace nxvk::test {
namespace {

enum class Path { ZeroCopy, Staging };

std::string path_name(Path p) { return p == Path::ZeroCopy ? "ZeroCopy" : "Staging"; }

class TransferTest : public DeviceTest, public ::testing::WithParamInterface<std::tuple<Path, uint64_t>> {
 protected:
  std::shared_ptr<Device> open_path() {
    Path path = std::get<0>(GetParam());
    auto dev = open_device(DeviceOptions{.force_staging = path == Path::Staging});
    if (path == Path::Staging) EXPECT_FALSE(dev->zero_copy());
    else EXPECT_EQ(dev->zero_copy(), dev->caps().unified_memory);
    return dev;
  }
  uint64_t bytes() const { return std::get<1>(GetParam()); }
};

// The poison pattern's byte at position i of a poisoned buffer.
uint8_t poison_byte(uint64_t i) { return static_cast<uint8_t>(kPoison >> (8 * (i % 4))); }

void expect_poison_outside(const std::vector<uint8_t>& all, uint64_t offset, uint64_t bytes) {
  for (uint64_t i = 0; i < all.size(); ++i) {
    if (i >= offset && i < offset + bytes) continue;
    ASSERT_EQ(all[i], poison_byte(i)) << "byte " << i << " outside [" << offset << ", "
                                      << offset + bytes << ") was overwritten";
  }
}

TEST_P(TransferTest, WriteThenReadWholeBuffer) {
  auto dev = open_path();
  const uint64_t n = bytes();
  std::vector<uint8_t> data = random_bytes(n);
  auto b = poisoned(*dev, n);
  dev->write(*b, 0, data.data(), n);
  EXPECT_TRUE(read_bytes(*dev, *b, 0, n) == data);
}

TEST_P(TransferTest, WriteAtOddOffsetLeavesTheRestPoisoned) {
  auto dev = open_path();
  const uint64_t n = bytes(), offset = 7, total = n + 13;
  std::vector<uint8_t> data = random_bytes(n);
  auto b = poisoned(*dev, total);
  dev->write(*b, offset, data.data(), n);
  std::vector<uint8_t> all = read_bytes(*dev, *b, 0, total);
  expect_poison_outside(all, offset, n);
  EXPECT_TRUE(std::equal(data.begin(), data.end(), all.begin() + offset));
}

TEST_P(TransferTest, ReadAtOddOffset) {
  auto dev = open_path();
  const uint64_t n = bytes(), offset = 5, total = n + 11;
  std::vector<uint8_t> data = random_bytes(total);
  auto b = dev->allocate(total);
  dev->write(*b, 0, data.data(), total);
  // The host destination is poisoned too: read must write exactly n bytes.
  std::vector<uint8_t> got(n + 8, 0xa5);
  dev->read(*b, offset, got.data() + 4, n);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(got[i], 0xa5);
    EXPECT_EQ(got[n + 4 + i], 0xa5);
  }
  EXPECT_TRUE(std::equal(got.begin() + 4, got.begin() + 4 + n, data.begin() + offset));
}

TEST_P(TransferTest, DeviceCopyBetweenBuffers) {
  auto dev = open_path();
  const uint64_t n = bytes(), src_offset = 3, dst_offset = 9, total = n + 16;
  std::vector<uint8_t> data = random_bytes(total);
  auto src = dev->allocate(total);
  dev->write(*src, 0, data.data(), total);
  auto dst = poisoned(*dev, total);
  dev->copy(*src, src_offset, *dst, dst_offset, n);
  std::vector<uint8_t> all = read_bytes(*dev, *dst, 0, total);
  expect_poison_outside(all, dst_offset, n);
  EXPECT_TRUE(std::equal(all.begin() + dst_offset, all.begin() + dst_offset + n, data.begin() + src_offset));
}

TEST_P(TransferTest, FillWords) {
  auto dev = open_path();
  const uint64_t words = bytes() / 4 * 4;
  auto b = poisoned(*dev, words + 8);
  dev->fill(*b, 4, words, 0x01020304u);
  auto got = read_all<uint32_t>(*dev, *b, (words + 8) / 4);
  EXPECT_EQ(got.front(), kPoison);
  EXPECT_EQ(got.back(), kPoison);
  for (uint64_t i = 1; i + 1 < got.size(); ++i) ASSERT_EQ(got[i], 0x01020304u) << i;
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, TransferTest,
    ::testing::Combine(::testing::Values(Path::ZeroCopy, Path::Staging),
                       ::testing::Values<uint64_t>(0, 1, 3, 4096, 1'000'001)),
    [](const auto& info) {
      return path_name(std::get<0>(info.param)) + "_" + std::to_string(std::get<1>(info.param)) + "B";
    });

class TransferOrderTest : public DeviceTest, public ::testing::WithParamInterface<Path> {};

TEST_P(TransferOrderTest, HostWriteWaitsForRecordedReaders) {
  // A host write to a buffer that a recorded copy still reads must not change what it copies.
  auto dev = open_device(DeviceOptions{.force_staging = GetParam() == Path::Staging, .batch_max = 1000});
  const uint32_t n = 65536;
  std::vector<float> first = random_floats(n), second = random_floats(n);
  auto a = dev->allocate(n * 4);
  auto b = poisoned(*dev, n * 4);
  dev->write(*a, 0, first.data(), n * 4);
  dev->copy(*a, 0, *b, 0, n * 4);
  dev->write(*a, 0, second.data(), n * 4);
  EXPECT_EQ(first_mismatch(read_all<float>(*dev, *b, n), first), -1);
  EXPECT_EQ(first_mismatch(read_all<float>(*dev, *a, n), second), -1);
}

TEST_P(TransferOrderTest, ChainOfCopies) {
  auto dev = open_device(DeviceOptions{.force_staging = GetParam() == Path::Staging});
  const uint32_t n = 10007;
  std::vector<float> data = random_floats(n);
  std::vector<std::shared_ptr<Buffer>> chain;
  chain.push_back(dev->allocate(n * 4));
  dev->write(*chain[0], 0, data.data(), n * 4);
  for (int i = 1; i < 20; ++i) {
    chain.push_back(poisoned(*dev, n * 4));
    dev->copy(*chain[i - 1], 0, *chain[i], 0, n * 4);
  }
  EXPECT_EQ(first_mismatch(read_all<float>(*dev, *chain.back(), n), data), -1);
}

TEST_P(TransferOrderTest, LargerThanOneStagingChunk) {
  // Staged transfers go in 64 MiB chunks; 64 MiB + 5 bytes needs two.
  auto dev = open_device(DeviceOptions{.force_staging = GetParam() == Path::Staging});
  const uint64_t n = (64ull << 20) + 5;
  std::vector<uint8_t> data = random_bytes(n);
  auto b = dev->allocate(n);
  dev->write(*b, 0, data.data(), n);
  EXPECT_TRUE(read_bytes(*dev, *b, 0, n) == data);
  b.reset();
  dev->release_cached_memory();
}

INSTANTIATE_TEST_SUITE_P(Paths, TransferOrderTest, ::testing::Values(Path::ZeroCopy, Path::Staging),
                         [](const auto& info) { return path_name(info.param); });

class TransferEnvTest : public DeviceTest {};

TEST_F(TransferEnvTest, ForceStagingFromEnvironment) {
  {
    ScopedEnv staging("NX_VULKAN_FORCE_STAGING", "1");
    EXPECT_FALSE(open_device()->zero_copy());
  }
  {
    ScopedEnv staging("NX_VULKAN_FORCE_STAGING", std::nullopt);
    auto dev = open_device();
    EXPECT_EQ(dev->zero_copy(), dev->caps().unified_memory);
  }
  // The option wins over the environment.
  ScopedEnv staging("NX_VULKAN_FORCE_STAGING", "1");
  auto dev = open_device(DeviceOptions{.force_staging = false});
  EXPECT_EQ(dev->zero_copy(), dev->caps().unified_memory);
}

TEST_F(TransferEnvTest, MappedPointerOnlyOnZeroCopy) {
  auto zero = open_device(DeviceOptions{.force_staging = false});
  auto staged = open_device(DeviceOptions{.force_staging = true});
  auto a = zero->allocate(64), b = staged->allocate(64);
  EXPECT_EQ(a->mapped() != nullptr, zero->zero_copy());
  EXPECT_EQ(b->mapped(), nullptr);
}

}  // namespace
}  // namespace nxvk::test
