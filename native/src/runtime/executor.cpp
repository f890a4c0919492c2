// Batched submission: commands are recorded into the open batch under one lock; a batch is
// submitted when full, when it holds enough work for an idle GPU, or when the host needs its
// results, signalling the next value of a timeline semaphore. Buffers used by a batch stay
// referenced until that value has completed, so nothing is reused while the GPU may still touch
// it.
#include <algorithm>
#include <cstring>

#include "runtime/internal.hpp"

namespace nxvk {
namespace {
constexpr uint64_t kParamsArenaBytes = 64 << 10;
constexpr uint32_t kSetsPerDescriptorPool = 256;
constexpr uint32_t kDescriptorsPerSet = 16;
constexpr uint64_t kWaitSliceNs = 1'000'000'000;  // re-check for device loss every second
}  // namespace

Executor::Executor(DeviceState& device, uint32_t batch_max) : device_(device), batch_max_(batch_max) {
  VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type.initialValue = 0;
  VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type};
  device_.check(vkCreateSemaphore(device_.device, &info, nullptr, &timeline_),
                "executor: vkCreateSemaphore(timeline)");
}

Executor::~Executor() {
  std::vector<std::shared_ptr<Buffer>> released;
  {
    std::lock_guard lock(mutex_);
    if (open_) destroy_batch(*open_);
    for (auto& b : in_flight_) destroy_batch(*b);
    for (auto& b : spare_) destroy_batch(*b);
  }
  vkDestroySemaphore(device_.device, timeline_, nullptr);
}

std::unique_ptr<Batch> Executor::new_batch() {
  auto batch = std::make_unique<Batch>();
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  pool_info.queueFamilyIndex = device_.queue_family;
  device_.check(vkCreateCommandPool(device_.device, &pool_info, nullptr, &batch->pool),
                "executor: vkCreateCommandPool");
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = batch->pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkResult result = vkAllocateCommandBuffers(device_.device, &alloc, &batch->cmd);
  if (result != VK_SUCCESS) {
    vkDestroyCommandPool(device_.device, batch->pool, nullptr);
    device_.check(result, "executor: vkAllocateCommandBuffers");
  }
  return batch;
}

void Executor::destroy_batch(Batch& batch) {
  for (VkDescriptorPool pool : batch.descriptor_pools) vkDestroyDescriptorPool(device_.device, pool, nullptr);
  batch.descriptor_pools.clear();
  if (batch.pool != VK_NULL_HANDLE) vkDestroyCommandPool(device_.device, batch.pool, nullptr);
  batch.pool = VK_NULL_HANDLE;
  batch.refs.clear();
  batch.params.reset();
}

Batch* Executor::open_batch() {
  if (open_) return open_.get();
  std::unique_ptr<Batch> batch;
  if (!spare_.empty()) {
    batch = std::move(spare_.back());
    spare_.pop_back();
  } else {
    batch = new_batch();
  }
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VkResult result = vkBeginCommandBuffer(batch->cmd, &begin);
  if (result != VK_SUCCESS) {
    destroy_batch(*batch);
    device_.check(result, "executor: vkBeginCommandBuffer");
  }
  batch->value = ++next_value_;
  batch->commands = 0;
  open_ = std::move(batch);
  return open_.get();
}

Executor::Recording::Recording(Executor& executor)
    : executor_(executor), lock_(executor.mutex_), batch_(nullptr) {
  if (executor_.device_.lost)
    fail(ErrorKind::DeviceLost, "executor: the device was lost; no more work can be submitted");
  batch_ = executor_.open_batch();
}

VkCommandBuffer Executor::Recording::cmd() {
  // A full memory barrier between consecutive commands (also across batches: a barrier's first
  // scope covers everything submitted earlier to the queue). Simple and always correct; hazard
  // tracking that skips independent commands is a later optimisation.
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                          VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  vkCmdPipelineBarrier(batch_->cmd, stages, stages, 0, 1, &barrier, 0, nullptr, 0, nullptr);
  batch_->commands += 1;
  return batch_->cmd;
}

void Executor::Recording::use(const Buffer& buffer) {
  BufferBlock& block = buffer.block();
  // An ordinary tensor block may go back to the cache, and to its next owner, while the GPU still
  // uses it: every later use is recorded later on this one queue, after a full barrier, and the
  // host touches its memory only after waiting for last_use (Device::write, read). The allocator
  // defers destroying it until last_use completes. Other buffers (staging, parameters, shared
  // memory) are held until their batch completes.
  if (!(block.pool == MemoryPool::Tensor && block.external == ExternalMemory::None))
    batch_->refs.push_back(std::const_pointer_cast<Buffer>(buffer.shared_from_this()));
  block.last_use.store(batch_->value, std::memory_order_release);
}

BufferView Executor::Recording::params(const void* data, uint64_t bytes) {
  const uint64_t align = std::max<uint64_t>(executor_.device_.caps.min_storage_buffer_offset_alignment, 16);
  uint64_t offset = (batch_->params_used + align - 1) / align * align;
  if (!batch_->params || offset + bytes > batch_->params->size()) {
    uint64_t size = std::max(kParamsArenaBytes, bytes);
    auto block = executor_.device_.allocator->take(size, MemoryPool::Staging, "dispatch parameters");
    batch_->params = make_buffer(executor_.device_.self->shared_from_this(), std::move(block), size);
    offset = 0;
  }
  std::memcpy(static_cast<char*>(batch_->params->mapped()) + offset, data, bytes);
  batch_->params_used = offset + bytes;
  return BufferView{batch_->params, offset, std::max<uint64_t>(bytes, 4)};
}

VkDescriptorSet Executor::Recording::descriptor_set(VkDescriptorSetLayout layout) {
  Batch& b = *batch_;
  if (b.descriptor_sets_left == 0) {
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerDescriptorPool * kDescriptorsPerSet};
    VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    info.maxSets = kSetsPerDescriptorPool;
    info.poolSizeCount = 1;
    info.pPoolSizes = &size;
    VkDescriptorPool pool;
    executor_.device_.check(vkCreateDescriptorPool(executor_.device_.device, &info, nullptr, &pool),
                            "dispatch: vkCreateDescriptorPool");
    b.descriptor_pools.push_back(pool);
    b.descriptor_sets_left = kSetsPerDescriptorPool;
  }
  VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  alloc.descriptorPool = b.descriptor_pools.back();
  alloc.descriptorSetCount = 1;
  alloc.pSetLayouts = &layout;
  VkDescriptorSet set;
  executor_.device_.check(vkAllocateDescriptorSets(executor_.device_.device, &alloc, &set),
                          "dispatch: vkAllocateDescriptorSets");
  b.descriptor_sets_left -= 1;
  return set;
}

void Executor::submit_locked(std::vector<std::shared_ptr<Buffer>>& released) {
  if (!open_) return;
  std::unique_ptr<Batch> batch = std::move(open_);
  // Make every write of this batch visible to the host once the semaphore signals.
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(batch->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
  VkResult result = vkEndCommandBuffer(batch->cmd);
  if (result == VK_SUCCESS) {
    VkTimelineSemaphoreSubmitInfo timeline{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    timeline.signalSemaphoreValueCount = 1;
    timeline.pSignalSemaphoreValues = &batch->value;
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO, &timeline};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &batch->cmd;
    submit.signalSemaphoreCount = 1;
    submit.pSignalSemaphores = &timeline_;
    result = vkQueueSubmit(device_.queue, 1, &submit, VK_NULL_HANDLE);
  }
  if (result != VK_SUCCESS) {
    // The batch never reaches the GPU; its buffers can be released and its value is unusable.
    released.insert(released.end(), batch->refs.begin(), batch->refs.end());
    destroy_batch(*batch);
    device_.lost = true;
    device_.check(result, "executor: vkQueueSubmit");
  }
  submitted_value_ = batch->value;
  submissions_ += 1;
  in_flight_.push_back(std::move(batch));
  // Poll: batches that have already completed give their buffers back now.
  uint64_t done = 0;
  if (vkGetSemaphoreCounterValue(device_.device, timeline_, &done) == VK_SUCCESS)
    retire_locked(done, released);
}

void Executor::retire_locked(uint64_t completed, std::vector<std::shared_ptr<Buffer>>& released) {
  while (!in_flight_.empty() && in_flight_.front()->value <= completed) {
    std::unique_ptr<Batch> batch = std::move(in_flight_.front());
    in_flight_.pop_front();
    // Buffers are released outside the lock: a buffer may hold the last reference to its device.
    for (auto& ref : batch->refs) released.push_back(std::move(ref));
    batch->refs.clear();
    if (batch->params) released.push_back(std::move(batch->params));
    batch->params_used = 0;
    vkResetCommandPool(device_.device, batch->pool, 0);
    for (VkDescriptorPool pool : batch->descriptor_pools) vkResetDescriptorPool(device_.device, pool, 0);
    batch->descriptor_sets_left = batch->descriptor_pools.empty() ? 0 : kSetsPerDescriptorPool;
    // Keep only the newest descriptor pool's budget; older pools stay empty until destroyed.
    if (batch->descriptor_pools.size() > 1) {
      for (size_t i = 0; i + 1 < batch->descriptor_pools.size(); ++i)
        vkDestroyDescriptorPool(device_.device, batch->descriptor_pools[i], nullptr);
      batch->descriptor_pools.erase(batch->descriptor_pools.begin(), batch->descriptor_pools.end() - 1);
    }
    spare_.push_back(std::move(batch));
  }
}

void Executor::submit_if_due(uint64_t workgroups) {
  std::vector<std::shared_ptr<Buffer>> released;
  {
    std::lock_guard lock(mutex_);
    if (!open_ || open_->commands == 0) return;
    open_->workgroups += workgroups;
    const bool full = open_->commands >= std::max<uint32_t>(batch_max_, 1);
    // The semaphore is read only for batches big enough to be worth a submission of their own.
    const bool idle_gpu_waits = open_->workgroups >= kEarlySubmitWorkgroups && completed() >= submitted_value_;
    if (full || idle_gpu_waits) submit_locked(released);
  }
}

uint64_t Executor::flush() {
  std::vector<std::shared_ptr<Buffer>> released;
  std::lock_guard lock(mutex_);
  if (open_ && (open_->commands > 0 || !open_->refs.empty() || open_->params)) submit_locked(released);
  return submitted_value_;
}

void Executor::retire_completed() {
  std::vector<std::shared_ptr<Buffer>> released;
  std::lock_guard lock(mutex_);
  if (!in_flight_.empty()) retire_locked(completed(), released);
}

uint64_t Executor::completed() {
  uint64_t value = 0;
  device_.check(vkGetSemaphoreCounterValue(device_.device, timeline_, &value),
                "executor: vkGetSemaphoreCounterValue");
  return value;
}

void Executor::wait(uint64_t value) {
  if (value > 0) {
    VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    info.semaphoreCount = 1;
    info.pSemaphores = &timeline_;
    info.pValues = &value;
    for (;;) {
      VkResult result = vkWaitSemaphores(device_.device, &info, kWaitSliceNs);
      if (result == VK_SUCCESS) break;
      if (result != VK_TIMEOUT) device_.check(result, "executor: vkWaitSemaphores");
    }
  }
  std::vector<std::shared_ptr<Buffer>> released;
  uint64_t done = completed();
  std::lock_guard lock(mutex_);
  retire_locked(done, released);
}

void Executor::wait_for(const Buffer& buffer) {
  uint64_t value = buffer.block().last_use.load(std::memory_order_acquire);
  if (value == 0) return;
  {
    std::vector<std::shared_ptr<Buffer>> released;
    std::lock_guard lock(mutex_);
    if (open_ && value >= open_->value) submit_locked(released);
  }
  wait(value);
}

}  // namespace nxvk
