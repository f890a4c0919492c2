// Concurrency: 8 threads x 1,000 submissions on one device, each checked against the host; and
// concurrent opening of the shared device.
#include <atomic>
#include <thread>

#include "nxvk_test.hpp"

namespace nxvk::test {
namespace {

class ThreadTest : public DeviceTest, public ::testing::WithParamInterface<bool> {};

constexpr int kThreads = 8;
constexpr int kIterations = 1000;

TEST_P(ThreadTest, EightThreadsThousandSubmissionsEach) {
  auto dev = open_device(DeviceOptions{.force_staging = GetParam()});
  const uint64_t before = dev->submissions();
  const uint32_t spec[] = {64};
  std::atomic<int> failures{0};
  std::vector<std::string> errors(kThreads);
  std::vector<std::vector<float>> inputs(kThreads);
  std::vector<uint32_t> seeds(kThreads);
  for (int t = 0; t < kThreads; ++t) seeds[t] = static_cast<uint32_t>(rng()());

  auto worker = [&](int t) {
    try {
      std::mt19937 local(seeds[t]);
      std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
      std::uniform_int_distribution<uint32_t> length(1, 300);
      const uint32_t max_n = 300;
      std::vector<float> b(max_n);
      for (auto& x : b) x = dist(local);
      auto bb = dev->allocate(max_n * 4);
      dev->write(*bb, 0, b.data(), max_n * 4);
      std::vector<float> a(max_n), got(max_n);
      for (int i = 0; i < kIterations; ++i) {
        const uint32_t n = length(local);
        for (uint32_t k = 0; k < n; ++k) a[k] = dist(local);
        // A fresh (often reused) output buffer every iteration, poisoned first.
        auto ba = dev->allocate(n * 4);
        auto out = poisoned(*dev, n * 4);
        dev->write(*ba, 0, a.data(), n * 4);
        BufferView views[] = {{ba}, {bb, 0, n * 4ull}, {out}};
        if (i % 2 == 0) {
          dev->dispatch({"add_f32", "", 3}, views, push_of(n), {groups_for(n, 64)}, spec);
        } else {
          // Alternate kernels so that pipelines are shared between threads.
          BufferView copy_views[] = {{ba}, {out}};
          dev->dispatch({"copy", "", 2}, copy_views, push_of(n), {groups_for(n, 64)}, spec);
        }
        dev->read(*out, 0, got.data(), n * 4);  // waits: one submission per iteration
        for (uint32_t k = 0; k < n; ++k) {
          float want = i % 2 == 0 ? a[k] + b[k] : a[k];
          if (std::memcmp(&got[k], &want, 4) != 0) {
            errors[t] = "thread " + std::to_string(t) + " iteration " + std::to_string(i) + " element " +
                        std::to_string(k) + ": got " + std::to_string(got[k]) + ", want " + std::to_string(want);
            failures++;
            return;
          }
        }
      }
    } catch (const std::exception& e) {
      errors[t] = "thread " + std::to_string(t) + ": " + e.what();
      failures++;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (auto& th : threads) th.join();
  for (const auto& e : errors)
    if (!e.empty()) ADD_FAILURE() << e;
  EXPECT_EQ(failures.load(), 0);
  // Every iteration's read waits for its own dispatch, so each needs its own submission (some
  // may share one when threads overlap, but never fewer than one per thread iteration at a time).
  const uint64_t submitted = dev->submissions() - before;
  EXPECT_GE(submitted, static_cast<uint64_t>(kIterations));
  EXPECT_LE(submitted, static_cast<uint64_t>(kThreads * kIterations * 4));
  RecordProperty("submissions", std::to_string(submitted));
  std::printf("[nxvk test] %llu submissions for %d x %d checked dispatches\n",
              static_cast<unsigned long long>(submitted), kThreads, kIterations);
}

INSTANTIATE_TEST_SUITE_P(Paths, ThreadTest, ::testing::Values(false, true),
                         [](const auto& info) { return std::string(info.param ? "Staging" : "ZeroCopy"); });

class SharedDeviceThreadTest : public DeviceTest {};

TEST_F(SharedDeviceThreadTest, ConcurrentOpenReturnsOneDevice) {
  std::vector<std::shared_ptr<Device>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back([&, t] { got[t] = Device::open(""); });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(got[t].get(), &device());
}

TEST_F(SharedDeviceThreadTest, ConcurrentAllocateAndFree) {
  Device& dev = device();
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        auto b = dev.allocate(256u * static_cast<uint32_t>(1 + (i + t) % 7));
        uint32_t word = static_cast<uint32_t>(t * 1000 + i);
        dev.write(*b, 0, &word, 4);
        uint32_t back = 0;
        dev.read(*b, 0, &back, 4);
        if (back != word) bad++;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(dev.memory_stats().cache_hits, 0u);
}

}  // namespace
}  // namespace nxvk::test
