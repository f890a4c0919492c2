// The batched executor: submissions per NX_VULKAN_BATCH_MAX / DeviceOptions::batch_max, command
// ordering inside and across batches, dispatch parameter blocks, descriptor sets when push
// descriptors are masked off, and the selftest.
#include <thread>

#include "nxvk/selftest.hpp"
#include "nxvk_test.hpp"
#include "runtime/internal.hpp"

namespace nxvk::test {
namespace {

class ExecutorTest : public DeviceTest {
 protected:
  // Records `count` fills (one command each) and syncs; returns the submissions they took.
  uint64_t submissions_for(Device& dev, int count) {
    auto b = dev.allocate(4096);
    dev.sync();
    const uint64_t before = dev.submissions();
    for (int i = 0; i < count; ++i) dev.fill(*b, 0, 4096, static_cast<uint32_t>(i));
    dev.sync();
    const uint64_t taken = dev.submissions() - before;  // before the read: through staging it submits a copy
    uint32_t last = 0;
    dev.read(*b, 4092, &last, 4);
    EXPECT_EQ(last, static_cast<uint32_t>(count - 1));
    return taken;
  }
};

TEST_F(ExecutorTest, BatchMaxZeroSubmitsEveryCommand) {
  auto dev = open_device(DeviceOptions{.batch_max = 0});
  EXPECT_EQ(submissions_for(*dev, 100), 100u);
}

TEST_F(ExecutorTest, BatchMax64GroupsCommands) {
  auto dev = open_device(DeviceOptions{.batch_max = 64});
  EXPECT_EQ(submissions_for(*dev, 100), 2u);  // one full batch of 64, then 36 at sync
  EXPECT_EQ(submissions_for(*dev, 128), 2u);
  EXPECT_EQ(submissions_for(*dev, 10), 1u);
}

TEST_F(ExecutorTest, DefaultBatchIs64) {
  ScopedEnv a("NX_VULKAN_BATCH_MAX", std::nullopt);
  ScopedEnv b("NXV_BATCH_MAX", std::nullopt);
  auto dev = open_device();
  EXPECT_EQ(submissions_for(*dev, 130), 3u);
}

TEST_F(ExecutorTest, BatchMaxFromEnvironment) {
  {
    ScopedEnv env("NX_VULKAN_BATCH_MAX", "0");
    EXPECT_EQ(submissions_for(*open_device(), 20), 20u);
  }
  {
    ScopedEnv env("NX_VULKAN_BATCH_MAX", std::nullopt);
    ScopedEnv legacy("NXV_BATCH_MAX", "5");
    EXPECT_EQ(submissions_for(*open_device(), 20), 4u);
  }
  {
    ScopedEnv env("NX_VULKAN_BATCH_MAX", "10");
    ScopedEnv legacy("NXV_BATCH_MAX", "5");  // NX_VULKAN_BATCH_MAX wins
    EXPECT_EQ(submissions_for(*open_device(), 20), 2u);
  }
  ScopedEnv env("NX_VULKAN_BATCH_MAX", "0");
  EXPECT_EQ(submissions_for(*open_device(DeviceOptions{.batch_max = 64}), 20), 1u);  // the option wins
}

TEST_F(ExecutorTest, FlushAndSync) {
  auto dev = open_device(DeviceOptions{.batch_max = 64});
  const uint64_t s0 = dev->submissions();
  dev->flush();  // nothing recorded: nothing submitted
  dev->sync();
  EXPECT_EQ(dev->submissions(), s0);
  auto b = dev->allocate(64);
  dev->fill(*b, 0, 64, 1);
  const uint64_t v1 = dev->flush();
  dev->fill(*b, 0, 64, 2);
  const uint64_t v2 = dev->flush();
  EXPECT_GT(v2, v1);
  EXPECT_EQ(dev->submissions(), s0 + 2);
  dev->sync();
  uint32_t word = 0;
  dev->read(*b, 60, &word, 4);
  EXPECT_EQ(word, 2u);
}

TEST_F(ExecutorTest, DependentDispatchesInOneBatchAreOrdered) {
  // x <- x + b, 200 times, alternating two buffers, all in one batch: every dispatch must see the
  // previous one's result (the barriers between commands).
  auto dev = open_device(DeviceOptions{.batch_max = 1000});
  const uint32_t n = 5000, steps = 200;
  std::vector<float> x = random_floats(n), b = random_floats(n, -0.01f, 0.01f);
  auto buf_b = dev->allocate(n * 4);
  auto ping = dev->allocate(n * 4), pong = poisoned(*dev, n * 4);
  dev->write(*ping, 0, x.data(), n * 4);
  dev->write(*buf_b, 0, b.data(), n * 4);
  const uint32_t spec[] = {kWorkgroup};
  const uint64_t before = dev->submissions();
  for (uint32_t s = 0; s < steps; ++s) {
    BufferView views[] = {{s % 2 ? pong : ping}, {buf_b}, {s % 2 ? ping : pong}};
    dev->dispatch({"add_f32", "", 3}, views, push_of(n), {groups_for(n)}, spec);
  }
  for (uint32_t s = 0; s < steps; ++s)
    for (uint32_t i = 0; i < n; ++i) x[i] = x[i] + b[i];
  EXPECT_EQ(first_mismatch(read_all<float>(*dev, *(steps % 2 ? pong : ping), n), x), -1);
  EXPECT_EQ(dev->submissions() - before, 1u);
}

TEST_F(ExecutorTest, LargeDispatchOnAnIdleGpuIsSubmittedAtOnce) {
  // A batch with enough work for the GPU is submitted as soon as the GPU has nothing else to do,
  // however far it is from batch_max; small dispatches keep batching.
  auto dev = open_device(DeviceOptions{.batch_max = 1000});
  const uint32_t small = 16 * kWorkgroup;
  const uint32_t large = static_cast<uint32_t>(Executor::kEarlySubmitWorkgroups) * kWorkgroup;
  ASSERT_GE(groups_for(large), Executor::kEarlySubmitWorkgroups);
  std::vector<float> x = random_floats(large), b = random_floats(large);
  auto buf_x = dev->allocate(large * 4), buf_b = dev->allocate(large * 4);
  auto out_small = poisoned(*dev, small * 4), out_large = poisoned(*dev, large * 4);
  dev->write(*buf_x, 0, x.data(), large * 4);
  dev->write(*buf_b, 0, b.data(), large * 4);
  dev->sync();
  const uint32_t spec[] = {kWorkgroup};
  const uint64_t before = dev->submissions();
  BufferView small_views[] = {{buf_x}, {buf_b}, {out_small}};
  dev->dispatch({"add_f32", "", 3}, small_views, push_of(small), {groups_for(small)}, spec);
  EXPECT_EQ(dev->submissions(), before) << "a small dispatch waits for more work";
  BufferView large_views[] = {{buf_x}, {buf_b}, {out_large}};
  dev->dispatch({"add_f32", "", 3}, large_views, push_of(large), {groups_for(large)}, spec);
  EXPECT_EQ(dev->submissions(), before + 1) << "the idle GPU gets the batch at once";
  for (uint32_t i = 0; i < large; ++i) x[i] += b[i];
  EXPECT_EQ(first_mismatch(read_all<float>(*dev, *out_large, large), x), -1);
  EXPECT_EQ(first_mismatch(read_all<float>(*dev, *out_small, small), std::vector<float>(x.begin(), x.begin() + small)), -1);
}

TEST_F(ExecutorTest, FinishedBatchesGiveTheirBuffersBackBeforeAMissAllocates) {
  // Batches retire at submissions and waits. A buffer freed by the host while its batch ran is
  // reused by the next allocation once the GPU is done, even when nothing retired it yet.
  auto dev = open_device(DeviceOptions{.batch_max = 1000});
  constexpr uint64_t kBytes = 3 << 20;  // a size class no earlier buffer of this device has
  {
    auto x = dev->allocate(kBytes);
    dev->fill(*x, 0, kBytes, 7);
  }
  const uint64_t value = dev->flush();
  while (dev->state().executor->completed() < value) std::this_thread::yield();
  const MemoryStats before = dev->memory_stats();
  auto y = dev->allocate(kBytes);
  const MemoryStats after = dev->memory_stats();
  EXPECT_EQ(after.allocations, before.allocations) << "the finished batch's buffer was not reused";
  EXPECT_EQ(after.cache_hits, before.cache_hits + 1);
}

TEST_F(ExecutorTest, ParameterBlocksBeyondOneArena) {
  // 80 dispatches x 4 KiB of parameters in one batch: more than the 64 KiB parameter arena holds,
  // so several arenas are in use at once and none may be recycled before the batch completes.
  auto dev = open_device(DeviceOptions{.batch_max = 1000});
  const std::string glsl =
      "#version 450\n"
      "layout(local_size_x = 64) in;\n"
      "layout(std430, binding = 0) readonly buffer P { uint data[]; } params;\n"
      "layout(std430, binding = 1) writeonly buffer Out { uint data[]; } dst;\n"
      "layout(push_constant) uniform Push { uint n; } pc;\n"
      "void main() {\n"
      "  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += 64 * gl_NumWorkGroups.x)\n"
      "    dst.data[i] = params.data[i] ^ 0x5a5a5a5au;\n"
      "}\n";
  const uint32_t words = 1024, count = 80;
  std::vector<std::vector<uint32_t>> blocks(count, std::vector<uint32_t>(words));
  std::vector<std::shared_ptr<Buffer>> outs;
  for (uint32_t k = 0; k < count; ++k) {
    for (auto& w : blocks[k]) w = static_cast<uint32_t>(rng()());
    outs.push_back(poisoned(*dev, words * 4));
    BufferView p = dev->params(blocks[k].data(), words * 4);
    EXPECT_EQ(p.bytes, words * 4u);
    BufferView views[] = {p, {outs[k]}};
    dev->dispatch({"params_xor", glsl, 2}, views, push_of(words), {4});
  }
  dev->sync();
  for (uint32_t k = 0; k < count; ++k) {
    auto got = read_all<uint32_t>(*dev, *outs[k], words);
    for (uint32_t i = 0; i < words; ++i) ASSERT_EQ(got[i], blocks[k][i] ^ 0x5a5a5a5au) << "block " << k << " word " << i;
  }
}

TEST_F(ExecutorTest, DescriptorSetsWithoutPushDescriptors) {
  // With push descriptors masked off, descriptor sets come from pools: 600 dispatches in one batch
  // need more than one pool (256 sets each).
  auto dev = open_device(DeviceOptions{.batch_max = 1000, .disable = {"push_descriptor"}});
  EXPECT_FALSE(dev->caps().push_descriptor);
  const uint32_t n = 256, count = 600;
  std::vector<float> data = random_floats(n);
  std::vector<std::shared_ptr<Buffer>> chain{dev->allocate(n * 4)};
  dev->write(*chain[0], 0, data.data(), n * 4);
  const uint32_t spec[] = {64};
  for (uint32_t k = 0; k < count; ++k) {
    chain.push_back(k % 100 == 99 ? poisoned(*dev, n * 4) : dev->allocate(n * 4));
    BufferView views[] = {{chain[k]}, {chain[k + 1]}};
    dev->dispatch({"copy", "", 2}, views, push_of(n), {4}, spec);
  }
  EXPECT_EQ(first_mismatch(read_all<float>(*dev, *chain.back(), n), data), -1);
  // The pools are reused by later batches.
  for (int round = 0; round < 3; ++round) {
    for (uint32_t k = 0; k < count; ++k) {
      BufferView views[] = {{chain[k]}, {chain[k + 1]}};
      dev->dispatch({"copy", "", 2}, views, push_of(n), {4}, spec);
    }
    dev->sync();
  }
  EXPECT_EQ(first_mismatch(read_all<float>(*dev, *chain.back(), n), data), -1);
}

TEST_F(ExecutorTest, SelftestPassesOnTheSharedDevice) {
  auto results = run_selftest(device());
  ASSERT_EQ(results.size(), 4u);
  for (const auto& r : results) EXPECT_TRUE(r.passed) << r.name << ": " << r.detail;
}

TEST_F(ExecutorTest, SelftestPassesWithStagingAndWithoutBatching) {
  auto dev = open_device(DeviceOptions{.force_staging = true, .batch_max = 0});
  for (const auto& r : run_selftest(*dev)) EXPECT_TRUE(r.passed) << r.name << ": " << r.detail;
}

}  // namespace
}  // namespace nxvk::test
