// The Vulkan runtime: instance, devices, buffers, transfers and kernel dispatch.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nxvk/capabilities.hpp"
#include "nxvk/error.hpp"

namespace nxvk {

class Device;
struct DeviceState;
struct BufferBlock;

// Lists every Vulkan device (enumerated with the portability extension) and their capabilities.
// Throws ErrorKind::NoDevice, with what to install, when there is no driver or no compute device.
const std::vector<Capabilities>& list_devices();

// The device index chosen by default: NX_VULKAN_DEVICE (index or case-insensitive name substring)
// when set, else the first discrete, integrated, virtual, then CPU device.
uint32_t default_device_index();

// Resolves a selector (decimal index or name substring) to a device index.
uint32_t select_device(const std::string& selector);

// Validation-layer messages (warnings and errors) seen since start; tests fail on any.
// The layer is enabled when NX_VULKAN_VALIDATION=1 at instance creation, or when
// request_validation_layer() was called before it (the NIF does for `config :nx_vulkan,
// validation: true`). Returns false when the instance exists already (then it has no effect).
bool request_validation_layer();
struct ValidationReport {
  bool enabled = false;
  uint64_t messages = 0;
  std::string last_message;
};
ValidationReport validation_report();

struct MemoryStats {
  uint64_t bytes_in_use = 0;    // bytes of live buffers (as allocated, with size-class rounding)
  uint64_t bytes_requested = 0; // bytes of live buffers as requested by callers
  uint64_t bytes_cached = 0;    // freed buffers kept for reuse
  uint64_t live_buffers = 0;
  uint64_t cached_buffers = 0;
  uint64_t peak_bytes_in_use = 0;
  uint64_t allocations = 0;     // vkAllocateMemory calls
  uint64_t cache_hits = 0;      // allocations served from the cache
  // Tables the device keeps for its kernels until it closes (Device::constant): not live buffers.
  uint64_t constant_buffers = 0;
  uint64_t constant_bytes = 0;
};

// Where a buffer's memory came from (see Device::allocate_exportable and the imports).
enum class ExternalMemory : uint8_t {
  None,          // an ordinary tensor or staging buffer of the caching allocator
  ExportedFd,    // allocated exportable; its memory is shared as an opaque POSIX fd
  ImportedFd,    // imported from an opaque POSIX fd (VK_KHR_external_memory_fd)
  ImportedHost,  // imported from a host allocation (VK_EXT_external_memory_host)
};

// What an importer of an exported buffer must know: Vulkan requires an opaque-fd import to use
// the exporter's allocation size and memory type, and an identical buffer when it is dedicated.
struct ExportedFd {
  int fd = -1;                  // owned by the buffer: open while the buffer lives; dup it to keep it
  uint64_t buffer_size = 0;     // VkBufferCreateInfo::size of the exporting buffer
  uint64_t allocation_size = 0; // VkMemoryAllocateInfo::allocationSize
  uint32_t memory_type = 0;     // VkMemoryAllocateInfo::memoryTypeIndex
  bool dedicated = false;       // allocated with VkMemoryDedicatedAllocateInfo
};

// A device buffer. Freed buffers return to the device's cache once every submission that used
// them has completed (pending submissions hold a reference).
class Buffer : public std::enable_shared_from_this<Buffer> {
 public:
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  uint64_t size() const { return size_; }
  Device& device() const { return *device_; }
  // Host pointer for zero-copy access, or nullptr when the buffer lives behind staging.
  void* mapped() const;
  BufferBlock& block() const { return *block_; }
  ExternalMemory external() const;
  // Never return this buffer's memory to the cache: the host holds its address (to_pointer).
  void keep_out_of_cache();

 private:
  friend class Device;
  friend class Executor;
  friend std::shared_ptr<Buffer> make_buffer(std::shared_ptr<Device>, std::unique_ptr<BufferBlock>, uint64_t);
  Buffer(std::shared_ptr<Device> device, std::unique_ptr<BufferBlock> block, uint64_t size);
  std::shared_ptr<Device> device_;
  std::unique_ptr<BufferBlock> block_;
  uint64_t size_;
};

// A range of a buffer bound to one kernel binding.
struct BufferView {
  std::shared_ptr<Buffer> buffer;
  uint64_t offset = 0;
  uint64_t bytes = 0;  // 0: to the end of the buffer
};

struct WorkgroupCount {
  uint32_t x = 1, y = 1, z = 1;
};

// A compute kernel: embedded SPIR-V by name, or GLSL generated at run time (compiled with
// shaderc and cached by the hash of its source, in memory and on disk).
struct Kernel {
  std::string name;            // embedded kernel name, or a label for a generated one
  std::string glsl;            // non-empty: a generated kernel compiled at run time
  uint32_t bindings = 1;       // storage buffers, at set 0 bindings 0..n-1
  // Optionally, a generated kernel's leading GLSL (the libraries a family of kernels shares)
  // kept out of `glsl`: `prefix_key` names it (on one device the key determines the text) and
  // `prefix` produces it, called only when the pipeline is created. The pipeline is found by
  // prefix_key and the hash of `glsl`, so a call neither rebuilds nor rehashes the prefix.
  std::string prefix_key;
  std::function<std::string()> prefix;
};

struct DeviceOptions {
  // Force uploads and downloads through staging buffers even where zero-copy is possible.
  // Default: NX_VULKAN_FORCE_STAGING=1.
  std::optional<bool> force_staging;
  // Dispatches recorded per submission before the batch is submitted (0 = submit every
  // dispatch). Default: NX_VULKAN_BATCH_MAX (or NXV_BATCH_MAX), else 64.
  std::optional<uint32_t> batch_max;
  // Features to mask off on top of NX_VULKAN_DISABLE.
  std::vector<std::string> disable;
};

class Device : public std::enable_shared_from_this<Device> {
 public:
  // Opens (or returns the already open) device for `selector`; empty selects the default.
  static std::shared_ptr<Device> open(const std::string& selector = "");
  static std::shared_ptr<Device> open_index(uint32_t index, const DeviceOptions& options = {});
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const Capabilities& caps() const;
  bool zero_copy() const;  // tensors are host-visible and transfers skip staging

  // Memory. Allocation checks the device's limits and names the one exceeded.
  std::shared_ptr<Buffer> allocate(uint64_t bytes, const char* op = "allocate");
  void write(Buffer& dst, uint64_t offset, const void* data, uint64_t bytes);
  void read(const Buffer& src, uint64_t offset, void* data, uint64_t bytes);
  void copy(const Buffer& src, uint64_t src_offset, Buffer& dst, uint64_t dst_offset,
            uint64_t bytes);
  // Fills `bytes` bytes (a multiple of 4) at `offset` with a repeated 32-bit pattern.
  void fill(Buffer& dst, uint64_t offset, uint64_t bytes, uint32_t pattern);
  MemoryStats memory_stats() const;
  void release_cached_memory();
  // Waits until every recorded use of `buffer` has completed (flushing if needed).
  void wait_for(const Buffer& buffer);

  // External memory. Buffers from these are never cached: freeing one destroys its memory (an
  // importer elsewhere keeps its own reference to the payload). Each throws Unsupported, naming
  // `op` and the capability, when the device lacks it.
  // A dedicated buffer of `bytes` whose memory is exportable as an opaque fd (external_memory_fd).
  std::shared_ptr<Buffer> allocate_exportable(uint64_t bytes, const char* op);
  // The export of a buffer made by allocate_exportable (InvalidArgument for any other buffer).
  ExportedFd exported_fd(const Buffer& buffer, const char* op) const;
  // A buffer of `bytes` over memory imported from `fd`, exported with `layout` by a device with
  // this device's UUID and driver UUID. Takes `fd`: the imported memory owns it on success
  // (closed when the buffer's memory is freed), and it is closed on failure.
  std::shared_ptr<Buffer> import_fd(int fd, const ExportedFd& layout, uint64_t bytes, const char* op);
  // A buffer of `bytes` over the host allocation at `host` (external_memory_host): `host` must be
  // a multiple of min_imported_host_pointer_alignment and the range rounded up to it readable.
  // The buffer aliases that memory, which must outlive it.
  std::shared_ptr<Buffer> import_host_memory(void* host, uint64_t bytes, const char* op);

  // Records one dispatch. `push` goes to push constants (at most 128 bytes); `spec` values are
  // specialization constants 0..n-1 (by convention 0 is the workgroup size x).
  void dispatch(const Kernel& kernel, std::span<const BufferView> buffers,
                std::span<const std::byte> push, WorkgroupCount groups,
                std::span<const uint32_t> spec = {});
  // Small parameter blocks (shapes, strides) for one dispatch, valid until it completes.
  BufferView params(const void* data, uint64_t bytes);
  // A device buffer holding `data` (a kernel's constant table), uploaded on the first call with
  // these bytes and kept until the device closes: later calls return the same buffer, so kernels
  // that read a table neither allocate nor upload per call. Kernels must not write it.
  std::shared_ptr<Buffer> constant(std::span<const std::byte> data, const char* op);

  // Submits everything recorded so far. Returns the timeline value that signals its completion.
  uint64_t flush();
  // Flushes and waits for all submitted work.
  void sync();
  uint64_t submissions() const;

  // Saves the pipeline cache to disk (also done when the device closes). Never throws.
  void save_pipeline_cache() noexcept;
  std::string pipeline_cache_path() const;
  uint64_t pipelines_created() const;

  DeviceState& state() { return *state_; }

 private:
  friend class Buffer;
  struct Private {};

 public:
  Device(Private, uint32_t index, const DeviceOptions& options);

 private:
  std::unique_ptr<DeviceState> state_;
};

// Compiles GLSL compute source to SPIR-V with shaderc (cached in memory and on disk by hash).
// Throws InvalidArgument with the compiler's message when the source does not compile.
std::vector<uint32_t> compile_glsl(const std::string& source, const std::string& name);

// The directory for on-disk caches: NX_VULKAN_CACHE_DIR, else $XDG_CACHE_HOME/nx_vulkan, else
// ~/.cache/nx_vulkan. It may not exist or be writable; callers treat it as best effort.
std::string cache_directory();

}  // namespace nxvk
