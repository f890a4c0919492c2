// The caching allocator: one VkBuffer + VkDeviceMemory per block, sized to a size class (at most
// 25% above the request), kept in a cache when freed and reused by the next request that fits.
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>

#include "runtime/env.hpp"
#include "runtime/internal.hpp"

namespace nxvk {

namespace {
// NX_VULKAN_TRACE_ALLOC=1: one stderr line per memory created or destroyed (size, pool, op, and
// how long vkAllocateMemory and the rest took), to see what a workload allocates.
bool trace_alloc() {
  static const bool on = env::flag("NX_VULKAN_TRACE_ALLOC");
  return on;
}
}  // namespace

uint64_t Allocator::size_class(uint64_t bytes) {
  constexpr uint64_t kMin = 256;
  if (bytes <= kMin) return kMin;
  // Four classes per power of two: 1, 1.25, 1.5, 1.75 times it.
  uint64_t top = std::bit_floor(bytes);
  uint64_t step = top / 4;
  return (bytes + step - 1) / step * step;
}

Allocator::~Allocator() {
  release_cache();
  for (auto& block : doomed_) destroy(*block);  // the device is idle (or lost) by now
}

uint64_t Allocator::completed() const {
  // Without an executor (the device is being built or torn down) nothing is in flight; a lost
  // device runs nothing more. Never throws: buffers are freed in destructors.
  if (!device_.executor || device_.lost) return UINT64_MAX;
  try {
    return device_.executor->completed();
  } catch (...) {
    return UINT64_MAX;
  }
}

void Allocator::destroy_when_done(std::unique_ptr<BufferBlock> block) {
  if (block->last_use.load(std::memory_order_acquire) <= completed()) {
    destroy(*block);
    return;
  }
  std::lock_guard lock(mutex_);
  doomed_.push_back(std::move(block));
}

void Allocator::reap() {
  std::vector<std::unique_ptr<BufferBlock>> done;
  {
    std::lock_guard lock(mutex_);
    if (doomed_.empty()) return;
    const uint64_t value = completed();
    auto keep = std::partition(doomed_.begin(), doomed_.end(), [&](const std::unique_ptr<BufferBlock>& b) {
      return b->last_use.load(std::memory_order_acquire) > value;
    });
    for (auto it = keep; it != doomed_.end(); ++it) done.push_back(std::move(*it));
    doomed_.erase(keep, doomed_.end());
  }
  for (auto& block : done) destroy(*block);
}

uint64_t Allocator::capacity_for(uint64_t bytes) const {
  const Capabilities& caps = device_.caps;
  // Rounding must never push a legal request over a limit.
  uint64_t capacity = std::min({size_class(bytes), caps.max_memory_allocation_size, caps.max_buffer_size});
  return std::max<uint64_t>(capacity, std::max<uint64_t>(bytes, 4));
}

std::multimap<uint64_t, std::unique_ptr<BufferBlock>>::iterator Allocator::find_cached(uint64_t capacity,
                                                                                      MemoryPool pool) {
  auto& cache = cache_[static_cast<int>(pool)];
  auto it = cache.lower_bound(capacity);
  // A cached block of this class, or of a larger one if it is not more than 2x the need.
  return it != cache.end() && it->first <= capacity * 2 ? it : cache.end();
}

bool Allocator::cached(uint64_t bytes, MemoryPool pool) {
  std::lock_guard lock(mutex_);
  return find_cached(capacity_for(bytes), pool) != cache_[static_cast<int>(pool)].end();
}

std::unique_ptr<BufferBlock> Allocator::take(uint64_t bytes, MemoryPool pool, const char* op) {
  const Capabilities& caps = device_.caps;
  auto too_large = [&](const char* limit, uint64_t value) {
    fail(ErrorKind::Unsupported, std::string(op) + ": " + std::to_string(bytes) +
                                     " bytes exceeds the device's " + limit + " (" +
                                     std::to_string(value) + " bytes)");
  };
  if (bytes > caps.max_memory_allocation_size) too_large("maxMemoryAllocationSize", caps.max_memory_allocation_size);
  if (bytes > caps.max_buffer_size) too_large("maxBufferSize", caps.max_buffer_size);
  if (caps.device_local_heap_size != 0 && bytes > caps.device_local_heap_size)
    fail(ErrorKind::OutOfDeviceMemory, std::string(op) + ": " + std::to_string(bytes) +
                                           " bytes exceeds the device-local heap (" +
                                           std::to_string(caps.device_local_heap_size) + " bytes)");
  const uint64_t capacity = capacity_for(bytes);
  {
    std::lock_guard lock(mutex_);
    auto it = find_cached(capacity, pool);
    if (it != cache_[static_cast<int>(pool)].end()) {
      auto block = std::move(it->second);
      cache_[static_cast<int>(pool)].erase(it);
      stats_.bytes_cached -= block->capacity;
      stats_.cached_buffers -= 1;
      stats_.cache_hits += 1;
      stats_.live_buffers += 1;
      stats_.bytes_in_use += block->capacity;
      stats_.bytes_requested += bytes;
      stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
      return block;
    }
  }
  std::unique_ptr<BufferBlock> block;
  const auto start = std::chrono::steady_clock::now();
  try {
    block = create(capacity, pool, op);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::OutOfDeviceMemory) throw;
    // Memory is full: give the cache back to the driver and try once more; tensor blocks the GPU
    // may still be using are destroyed only after it finishes, so wait for it first (not for
    // staging: parameter blocks are taken with the executor's lock held).
    if (pool == MemoryPool::Tensor && device_.executor) device_.executor->wait(device_.executor->flush());
    release_cache();
    reap();
    block = create(capacity, pool, op);
  }
  if (trace_alloc()) {
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "nx_vulkan alloc: create %llu bytes (%s, %s) in %.3f ms; cached %llu bytes in %llu buffers\n",
                 static_cast<unsigned long long>(capacity), pool == MemoryPool::Tensor ? "tensor" : "staging", op, ms,
                 static_cast<unsigned long long>(stats().bytes_cached),
                 static_cast<unsigned long long>(stats().cached_buffers));
  }
  count_new(*block, bytes);
  return block;
}

std::unique_ptr<BufferBlock> Allocator::create(uint64_t capacity, MemoryPool pool, const char* op) {
  const std::string what = std::string(op) + ": allocating " + std::to_string(capacity) + " bytes";
  auto block = std::make_unique<BufferBlock>();
  block->capacity = capacity;
  block->pool = pool;
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = capacity;
  info.usage = kTensorBufferUsage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  device_.check(vkCreateBuffer(device_.device, &info, nullptr, &block->buffer),
                (what + ": vkCreateBuffer").c_str());
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_.device, block->buffer, &req);
  const uint32_t type = pool == MemoryPool::Tensor ? device_.tensor_memory_type : device_.staging_memory_type;
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = type;
  VkResult result = vkAllocateMemory(device_.device, &alloc, nullptr, &block->memory);
  if (result != VK_SUCCESS) {
    vkDestroyBuffer(device_.device, block->buffer, nullptr);
    device_.check(result, (what + ": vkAllocateMemory").c_str());
  }
  try {
    device_.check(vkBindBufferMemory(device_.device, block->buffer, block->memory, 0),
                  (what + ": vkBindBufferMemory").c_str());
    const bool map = pool == MemoryPool::Staging || device_.tensors_mapped;
    if (map)
      device_.check(vkMapMemory(device_.device, block->memory, 0, VK_WHOLE_SIZE, 0, &block->mapped),
                    (what + ": vkMapMemory").c_str());
  } catch (...) {
    destroy(*block);
    throw;
  }
  return block;
}

void Allocator::destroy(BufferBlock& block) {
  if (trace_alloc())
    std::fprintf(stderr, "nx_vulkan alloc: destroy %llu bytes\n", static_cast<unsigned long long>(block.capacity));
  if (block.mapped != nullptr) vkUnmapMemory(device_.device, block.memory);
  vkDestroyBuffer(device_.device, block.buffer, nullptr);
  vkFreeMemory(device_.device, block.memory, nullptr);
  if (block.export_fd >= 0) ::close(block.export_fd);
  block.buffer = VK_NULL_HANDLE;
  block.memory = VK_NULL_HANDLE;
  block.mapped = nullptr;
  block.export_fd = -1;
}

void Allocator::count_new(const BufferBlock& block, uint64_t requested) {
  std::lock_guard lock(mutex_);
  stats_.allocations += 1;
  stats_.live_buffers += 1;
  stats_.bytes_in_use += block.capacity;
  stats_.bytes_requested += requested;
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
}

void Allocator::make_constant(BufferBlock& block, uint64_t requested) {
  std::lock_guard lock(mutex_);
  block.constant = true;
  stats_.live_buffers -= 1;
  stats_.bytes_in_use -= block.capacity;
  stats_.bytes_requested -= requested;
  stats_.constant_buffers += 1;
  stats_.constant_bytes += block.capacity;
}

void Allocator::give(std::unique_ptr<BufferBlock> block, uint64_t requested) {
  if (!block) return;
  std::unique_lock lock(mutex_);
  if (block->constant) {
    stats_.constant_buffers -= 1;
    stats_.constant_bytes -= block->capacity;
    lock.unlock();
    destroy_when_done(std::move(block));
    return;
  }
  stats_.live_buffers -= 1;
  stats_.bytes_in_use -= block->capacity;
  stats_.bytes_requested -= requested;
  // Shared memory (exported, imported, or whose address the host was given) is never reused.
  if (block->external != ExternalMemory::None || block->no_reuse.load()) {
    lock.unlock();
    destroy_when_done(std::move(block));
    return;
  }
  if (cache_limit_ == 0) {
    // Cache up to NX_VULKAN_CACHE_MAX bytes, by default a quarter of the device-local heap.
    uint64_t heap = device_.caps.device_local_heap_size;
    cache_limit_ = env::number("NX_VULKAN_CACHE_MAX").value_or(heap ? heap / 4 : (1ull << 30));
    if (cache_limit_ == 0) cache_limit_ = 1;
  }
  if (stats_.bytes_cached + block->capacity <= cache_limit_) {
    stats_.bytes_cached += block->capacity;
    stats_.cached_buffers += 1;
    uint64_t capacity = block->capacity;
    cache_[static_cast<int>(block->pool)].emplace(capacity, std::move(block));
    return;
  }
  lock.unlock();
  destroy_when_done(std::move(block));
}

void Allocator::release_cache() {
  std::multimap<uint64_t, std::unique_ptr<BufferBlock>> released[2];
  {
    std::lock_guard lock(mutex_);
    for (int p = 0; p < 2; ++p) released[p].swap(cache_[p]);
    stats_.bytes_cached = 0;
    stats_.cached_buffers = 0;
  }
  for (auto& cache : released)
    for (auto& [size, block] : cache) destroy_when_done(std::move(block));
}

void Allocator::reset_statistics() {
  std::lock_guard lock(mutex_);
  if (stats_.live_buffers != 0 || stats_.cached_buffers != 0)
    fail(ErrorKind::Internal, "allocator: statistics reset while it holds buffers");
  const MemoryStats kept = stats_;
  stats_ = MemoryStats{};
  stats_.constant_buffers = kept.constant_buffers;
  stats_.constant_bytes = kept.constant_bytes;
}

MemoryStats Allocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace nxvk
