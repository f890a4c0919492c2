// Internal runtime objects shared by the runtime's translation units. Not a public header.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "nxvk/runtime.hpp"
#include "runtime/vk_check.hpp"

namespace nxvk {

// VK_KHR_cooperative_matrix is newer than the Vulkan headers Debian 12 ships; its feature struct
// is declared here so the capability can still be read from newer drivers.
#ifndef VK_KHR_cooperative_matrix
struct NxvkCooperativeMatrixFeaturesKHR {
  VkStructureType sType;
  void* pNext;
  VkBool32 cooperativeMatrix;
  VkBool32 cooperativeMatrixRobustBufferAccess;
};
constexpr auto kStructureTypeCooperativeMatrixFeaturesKHR = static_cast<VkStructureType>(1000506000);
#endif
constexpr const char* kCooperativeMatrixKHRExtension = "VK_KHR_cooperative_matrix";

// The usage of every tensor buffer (and of buffers made from external memory, which must match).
constexpr VkBufferUsageFlags kTensorBufferUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

// The process-wide Vulkan instance with every usable physical device.
class Instance {
 public:
  static Instance& get();
  ~Instance();
  VkInstance handle() const { return instance_; }
  const std::vector<Capabilities>& devices() const { return caps_; }
  VkPhysicalDevice physical(uint32_t index) const { return physical_.at(index); }
  uint32_t compute_queue_family(uint32_t index) const { return queue_family_.at(index); }
  const std::vector<std::string>& skipped() const { return skipped_; }
  ValidationReport validation() const;
  void record_validation_message(const char* message);

  // Devices opened with default options, shared by Device::open(selector).
  std::mutex registry_mutex;
  std::map<uint32_t, std::shared_ptr<Device>> registry;

 private:
  Instance();
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  std::vector<VkPhysicalDevice> physical_;
  std::vector<uint32_t> queue_family_;
  std::vector<Capabilities> caps_;
  std::vector<std::string> skipped_;
  bool validation_enabled_ = false;
  mutable std::mutex validation_mutex_;
  uint64_t validation_messages_ = 0;
  std::string last_validation_message_;
};

// Reads the capabilities of one physical device (before any mask).
Capabilities read_capabilities(VkInstance instance, VkPhysicalDevice physical, uint32_t index);
bool has_device_extension(VkPhysicalDevice physical, const char* name);

enum class MemoryPool : uint8_t { Tensor = 0, Staging = 1 };

// One VkBuffer with its own VkDeviceMemory, sized to a size class so it can be reused.
struct BufferBlock {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint64_t capacity = 0;
  void* mapped = nullptr;
  MemoryPool pool = MemoryPool::Tensor;
  // Where the memory came from. Only ordinary blocks are cached and reused: memory that was
  // exported or imported is shared with someone else, so it is destroyed when freed.
  ExternalMemory external = ExternalMemory::None;
  int export_fd = -1;               // ExportedFd: the fd vkGetMemoryFdKHR gave us, closed with the block
  uint64_t allocation_size = 0;     // VkMemoryAllocateInfo::allocationSize
  uint32_t memory_type = 0;
  bool dedicated = false;           // allocated with VkMemoryDedicatedAllocateInfo
  // Set when the host was handed the mapped address (to_pointer :local): never reused, so a stale
  // address can at worst reach unmapped memory, never another tensor's bytes.
  std::atomic<bool> no_reuse{false};
  // A table the device keeps until it closes (Device::constant): counted apart from live buffers
  // and destroyed, not cached, when freed.
  bool constant = false;
  // Timeline value of the last batch that recorded a command touching this buffer.
  std::atomic<uint64_t> last_use{0};
};

struct DeviceState;

std::shared_ptr<Buffer> make_buffer(std::shared_ptr<Device> device, std::unique_ptr<BufferBlock> block,
                                    uint64_t size);

// A caching allocator: freed blocks are kept by size class and reused; statistics as it goes.
class Allocator {
 public:
  explicit Allocator(DeviceState& device) : device_(device) {}
  ~Allocator();
  std::unique_ptr<BufferBlock> take(uint64_t bytes, MemoryPool pool, const char* op);
  // Whether take(bytes, pool) would be served from the cache now.
  bool cached(uint64_t bytes, MemoryPool pool);
  void give(std::unique_ptr<BufferBlock> block, uint64_t requested);
  // Counts a live block as a constant table from now on (BufferBlock::constant).
  void make_constant(BufferBlock& block, uint64_t requested);
  // External memory (external_memory.cpp): a dedicated block whose memory is exported as an
  // opaque fd; a block over memory imported from an opaque fd (takes `fd`: owned by the memory
  // on success, closed on failure); a block over a host allocation.
  std::unique_ptr<BufferBlock> take_exportable(uint64_t bytes, const char* op);
  std::unique_ptr<BufferBlock> import_fd(int fd, const ExportedFd& layout, uint64_t bytes, const char* op);
  std::unique_ptr<BufferBlock> import_host(void* host, uint64_t bytes, const char* op);
  void release_cache();
  // Destroys the blocks whose destruction waited for the GPU and that it has finished with.
  void reap();
  MemoryStats stats() const;
  // Zeroes the statistics of an allocator that holds nothing (after the device's own probes at
  // open, which users never see); Internal error otherwise.
  void reset_statistics();
  static uint64_t size_class(uint64_t bytes);

 private:
  uint64_t capacity_for(uint64_t bytes) const;  // size class within the device's limits
  // The cached block take() would reuse, or end(); with the lock held.
  std::multimap<uint64_t, std::unique_ptr<BufferBlock>>::iterator find_cached(uint64_t capacity, MemoryPool pool);
  std::unique_ptr<BufferBlock> create(uint64_t capacity, MemoryPool pool, const char* op);
  void destroy(BufferBlock& block);
  // Destroys the block once the GPU is done with it (last_use completed): now, or at a later
  // reap(). Without the lock held.
  void destroy_when_done(std::unique_ptr<BufferBlock> block);
  uint64_t completed() const;  // the executor's completed timeline value (all, without one)
  void count_new(const BufferBlock& block, uint64_t requested);
  bool should_map(uint32_t memory_type) const;
  VkBuffer create_buffer(uint64_t size, VkExternalMemoryHandleTypeFlags handle_types, const std::string& what);
  void bind_and_map(BufferBlock& block, const std::string& what);
  DeviceState& device_;
  mutable std::mutex mutex_;
  std::multimap<uint64_t, std::unique_ptr<BufferBlock>> cache_[2];
  std::vector<std::unique_ptr<BufferBlock>> doomed_;  // destroyed once their last_use completes
  MemoryStats stats_;
  uint64_t cache_limit_ = 0;
};

struct Pipeline {
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  uint32_t bindings = 0;
};

// In-memory pipeline table over a VkPipelineCache persisted on disk.
class PipelineStore {
 public:
  explicit PipelineStore(DeviceState& device);
  ~PipelineStore();
  const Pipeline& get(const Kernel& kernel, std::span<const uint32_t> spec);
  void save() noexcept;
  std::string path() const { return path_; }
  uint64_t created() const { return created_; }

 private:
  DeviceState& device_;
  std::mutex mutex_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::unordered_map<std::string, std::unique_ptr<Pipeline>> pipelines_;
  std::string path_;
  uint64_t created_ = 0;
};

// One command buffer being recorded or in flight, with everything it must keep alive.
struct Batch {
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  std::vector<VkDescriptorPool> descriptor_pools;  // only without push descriptors
  uint32_t descriptor_sets_left = 0;
  uint64_t value = 0;  // timeline value signalled when it completes
  uint32_t commands = 0;
  uint64_t workgroups = 0;  // of the dispatches recorded in it
  std::vector<std::shared_ptr<Buffer>> refs;
  std::shared_ptr<Buffer> params;  // host-visible arena for dispatch parameters
  uint64_t params_used = 0;
};

// Records commands into batches and submits them on one compute queue with a timeline semaphore.
class Executor {
 public:
  Executor(DeviceState& device, uint32_t batch_max);
  ~Executor();

  // Holds the recording lock for one command. Commands are ordered by a full memory barrier.
  class Recording {
   public:
    explicit Recording(Executor& executor);
    ~Recording() = default;
    // The command buffer for one more command, after a barrier that orders it after the last.
    VkCommandBuffer cmd();
    void use(const Buffer& buffer);
    BufferView params(const void* data, uint64_t bytes);
    VkDescriptorSet descriptor_set(VkDescriptorSetLayout layout);
    uint64_t value() const { return batch_->value; }

   private:
    Executor& executor_;
    std::unique_lock<std::mutex> lock_;
    Batch* batch_;
  };

  // Submits the open batch when it holds batch_max commands (or at every command when 0), or
  // when it holds at least kEarlySubmitWorkgroups of dispatched work and the GPU has finished
  // everything submitted before: then the GPU starts on it while the host records the next
  // commands, instead of idling until the batch fills or the host syncs. `workgroups` is the
  // size of the command just recorded (0 for copies and fills).
  static constexpr uint64_t kEarlySubmitWorkgroups = 4096;
  void submit_if_due(uint64_t workgroups = 0);
  uint64_t flush();                 // submits the open batch; returns the last value submitted
  void wait(uint64_t value);        // waits until `value` has completed, then retires batches
  void wait_for(const Buffer& buffer);  // flushes if needed and waits for the buffer's last use
  uint64_t completed();
  // Gives back the buffers of every batch the GPU has finished, without waiting.
  void retire_completed();
  uint64_t submissions() const { return submissions_; }

 private:
  Batch* open_batch();              // with the lock held
  void submit_locked(std::vector<std::shared_ptr<Buffer>>& released);
  void retire_locked(uint64_t completed, std::vector<std::shared_ptr<Buffer>>& released);
  std::unique_ptr<Batch> new_batch();
  void destroy_batch(Batch& batch);

  DeviceState& device_;
  uint32_t batch_max_;
  std::mutex mutex_;
  std::unique_ptr<Batch> open_;
  std::deque<std::unique_ptr<Batch>> in_flight_;
  std::vector<std::unique_ptr<Batch>> spare_;
  VkSemaphore timeline_ = VK_NULL_HANDLE;
  uint64_t next_value_ = 0;
  uint64_t submitted_value_ = 0;
  std::atomic<uint64_t> submissions_{0};
};

struct DeviceState {
  Device* self = nullptr;
  Capabilities caps;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  uint32_t tensor_memory_type = 0;
  uint32_t staging_memory_type = 0;
  bool tensors_mapped = false;  // zero-copy: tensor memory is host-visible and mapped
  PFN_vkCmdPushDescriptorSetKHR push_descriptor_set = nullptr;
  PFN_vkGetPipelineExecutableStatisticsKHR pipeline_statistics = nullptr;  // NX_VULKAN_PIPELINE_STATS
  PFN_vkGetMemoryFdKHR get_memory_fd = nullptr;                                // external_memory_fd
  PFN_vkGetMemoryHostPointerPropertiesEXT get_memory_host_pointer_properties = nullptr;  // external_memory_host
  VkPhysicalDeviceMemoryProperties memory_properties{};
  std::atomic<bool> lost{false};

  std::unique_ptr<Allocator> allocator;
  std::unique_ptr<PipelineStore> pipelines;
  std::unique_ptr<Executor> executor;
  // Device::constant's tables by their bytes. Their buffers reference the device without owning
  // it (no cycle); ~Device frees them while the allocator still exists.
  std::mutex constants_mutex;
  std::unordered_map<std::string, std::shared_ptr<Buffer>> constants;

  // Checks a VkResult; marks the device lost when the driver says so.
  void check(VkResult result, const char* what);
};

}  // namespace nxvk
