// External memory: buffers whose memory is exported as an opaque POSIX fd
// (VK_KHR_external_memory_fd) or imported from one, or from a host allocation
// (VK_EXT_external_memory_host). Each such buffer owns one VkDeviceMemory of its own and is never
// cached: the memory is shared, so reusing it for another tensor would change what the other
// side sees. Nx.to_pointer / Nx.from_pointer (src/ops/pointer.cpp) are built on these.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include "runtime/internal.hpp"

namespace nxvk {
namespace {

constexpr auto kOpaqueFd = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
constexpr auto kHostAllocation = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;

uint64_t round_up(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

// Kernels read and write whole 32-bit words, so a tensor buffer covers its bytes rounded up to 4.
uint64_t word_bytes(uint64_t bytes) { return std::max<uint64_t>(4, round_up(bytes, 4)); }

[[noreturn]] void unsupported(const char* op, const Capabilities& caps, const char* what) {
  fail(ErrorKind::Unsupported,
       std::string(op) + ": unsupported on this device: " + caps.name + " has no " + what);
}

// The memory type for an external allocation: the tensor type when allowed, else a device-local
// one, else any allowed type.
int pick_memory_type(const DeviceState& s, uint32_t allowed) {
  if (allowed & (1u << s.tensor_memory_type)) return static_cast<int>(s.tensor_memory_type);
  const auto& m = s.memory_properties;
  for (uint32_t t = 0; t < m.memoryTypeCount; ++t)
    if ((allowed & (1u << t)) &&
        (m.memoryTypes[t].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
      return static_cast<int>(t);
  for (uint32_t t = 0; t < m.memoryTypeCount; ++t)
    if (allowed & (1u << t)) return static_cast<int>(t);
  return -1;
}

}  // namespace

bool Allocator::should_map(uint32_t memory_type) const {
  // The zero-copy policy of ordinary tensors: mapped where tensors are; elsewhere only memory
  // that is host-visible, coherent and cached (uncached BAR memory is slower than staging).
  if (memory_type == device_.tensor_memory_type) return device_.tensors_mapped;
  const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                                     VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  return (device_.memory_properties.memoryTypes[memory_type].propertyFlags & want) == want &&
         device_.tensors_mapped;
}

VkBuffer Allocator::create_buffer(uint64_t size, VkExternalMemoryHandleTypeFlags handle_types,
                                  const std::string& what) {
  VkExternalMemoryBufferCreateInfo external{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
  external.handleTypes = handle_types;
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.pNext = &external;
  info.size = size;
  info.usage = kTensorBufferUsage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buffer = VK_NULL_HANDLE;
  device_.check(vkCreateBuffer(device_.device, &info, nullptr, &buffer),
                (what + ": vkCreateBuffer").c_str());
  return buffer;
}

void Allocator::bind_and_map(BufferBlock& block, const std::string& what) {
  device_.check(vkBindBufferMemory(device_.device, block.buffer, block.memory, 0),
                (what + ": vkBindBufferMemory").c_str());
  if (should_map(block.memory_type))
    device_.check(vkMapMemory(device_.device, block.memory, 0, VK_WHOLE_SIZE, 0, &block.mapped),
                  (what + ": vkMapMemory").c_str());
}

std::unique_ptr<BufferBlock> Allocator::take_exportable(uint64_t bytes, const char* op) {
  const Capabilities& caps = device_.caps;
  if (!caps.external_memory_fd || device_.get_memory_fd == nullptr)
    unsupported(op, caps,
                "exportable memory (VK_KHR_external_memory_fd, capability external_memory_fd)");
  if (bytes > caps.max_memory_allocation_size || bytes > caps.max_buffer_size)
    fail(ErrorKind::Unsupported,
         std::string(op) + ": " + std::to_string(bytes) +
             " bytes exceeds the device's maxMemoryAllocationSize or maxBufferSize");
  const std::string what =
      std::string(op) + ": exportable allocation of " + std::to_string(bytes) + " bytes";
  auto block = std::make_unique<BufferBlock>();
  block->capacity = word_bytes(bytes);
  block->external = ExternalMemory::ExportedFd;
  block->buffer = create_buffer(block->capacity, kOpaqueFd, what);
  try {
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device_.device, block->buffer, &req);
    const int type = pick_memory_type(device_, req.memoryTypeBits);
    if (type < 0)
      fail(ErrorKind::Unsupported, what + ": no memory type can hold an exportable buffer");
    block->memory_type = static_cast<uint32_t>(type);
    block->allocation_size = req.size;
    block->dedicated = caps.external_memory_fd_dedicated_only;
    VkExportMemoryAllocateInfo export_info{VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO};
    export_info.handleTypes = kOpaqueFd;
    VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    dedicated.buffer = block->buffer;
    if (block->dedicated) export_info.pNext = &dedicated;
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &export_info};
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = block->memory_type;
    VkResult result = vkAllocateMemory(device_.device, &alloc, nullptr, &block->memory);
    if (result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY) {
      release_cache();  // as for ordinary allocations: give the cache back and try once more
      result = vkAllocateMemory(device_.device, &alloc, nullptr, &block->memory);
    }
    device_.check(result, (what + ": vkAllocateMemory").c_str());
    bind_and_map(*block, what);
    VkMemoryGetFdInfoKHR get{VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR};
    get.memory = block->memory;
    get.handleType = kOpaqueFd;
    device_.check(device_.get_memory_fd(device_.device, &get, &block->export_fd),
                  (what + ": vkGetMemoryFdKHR").c_str());
    // Not inherited by programs the VM starts (ports, System.cmd): a leaked copy would keep the
    // memory alive after the tensor is freed.
    ::fcntl(block->export_fd, F_SETFD, ::fcntl(block->export_fd, F_GETFD) | FD_CLOEXEC);
  } catch (...) {
    destroy(*block);
    throw;
  }
  count_new(*block, bytes);
  return block;
}

std::unique_ptr<BufferBlock> Allocator::import_fd(int fd, const ExportedFd& layout, uint64_t bytes,
                                                  const char* op) {
  // Every failure below closes `fd`: the caller handed it over.
  struct CloseUnlessImported {
    int fd;
    bool armed = true;
    ~CloseUnlessImported() {
      if (armed) ::close(fd);
    }
  } guard{fd};
  const Capabilities& caps = device_.caps;
  if (!caps.external_memory_fd)
    unsupported(op, caps,
                "importable memory (VK_KHR_external_memory_fd, capability external_memory_fd)");
  const std::string what = std::string(op) + ": importing " +
                           std::to_string(layout.allocation_size) + " bytes from fd " +
                           std::to_string(fd);
  if (layout.memory_type >= device_.memory_properties.memoryTypeCount)
    fail(ErrorKind::InvalidArgument, what + ": memory type " + std::to_string(layout.memory_type) +
                                         " does not exist on this device");
  if (layout.buffer_size < word_bytes(bytes) || layout.buffer_size > layout.allocation_size)
    fail(ErrorKind::InvalidArgument, what + ": a buffer of " + std::to_string(layout.buffer_size) +
                                         " bytes cannot hold " + std::to_string(bytes) +
                                         " bytes in " + std::to_string(layout.allocation_size) +
                                         " bytes of memory");
  if (layout.dedicated != caps.external_memory_fd_dedicated_only)
    fail(ErrorKind::InvalidArgument,
         what + ": the export's dedicated-allocation flag does not match this driver");
  auto block = std::make_unique<BufferBlock>();
  block->capacity = layout.buffer_size;
  block->external = ExternalMemory::ImportedFd;
  block->memory_type = layout.memory_type;
  block->allocation_size = layout.allocation_size;
  block->dedicated = layout.dedicated;
  block->buffer = create_buffer(block->capacity, kOpaqueFd, what);
  guard.armed = false;  // closed below on failure, owned by the memory on success
  try {
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device_.device, block->buffer, &req);
    if (!(req.memoryTypeBits & (1u << layout.memory_type)) || req.size > layout.allocation_size)
      fail(ErrorKind::InvalidArgument,
           what + ": memory type " + std::to_string(layout.memory_type) + " and size " +
               std::to_string(layout.allocation_size) +
               " cannot back a buffer of this device (exported by another driver?)");
    VkImportMemoryFdInfoKHR import{VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR};
    import.handleType = kOpaqueFd;
    import.fd = fd;
    VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    dedicated.buffer = block->buffer;
    if (block->dedicated) import.pNext = &dedicated;
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &import};
    alloc.allocationSize = layout.allocation_size;
    alloc.memoryTypeIndex = layout.memory_type;
    VkResult result = vkAllocateMemory(device_.device, &alloc, nullptr, &block->memory);
    if (result == VK_ERROR_INVALID_EXTERNAL_HANDLE)
      fail(ErrorKind::InvalidArgument,
           what + ": the driver refused the fd (VK_ERROR_INVALID_EXTERNAL_HANDLE)");
    device_.check(result, (what + ": vkAllocateMemory").c_str());
  } catch (...) {
    ::close(fd);  // not imported: still ours
    destroy(*block);
    throw;
  }
  // From here on the fd belongs to the VkDeviceMemory and is closed when it is freed.
  try {
    bind_and_map(*block, what);
  } catch (...) {
    destroy(*block);
    throw;
  }
  count_new(*block, bytes);
  return block;
}

std::unique_ptr<BufferBlock> Allocator::import_host(void* host, uint64_t bytes, const char* op) {
  const Capabilities& caps = device_.caps;
  if (!caps.external_memory_host || device_.get_memory_host_pointer_properties == nullptr)
    unsupported(
        op, caps,
        "host-memory import (VK_EXT_external_memory_host, capability external_memory_host)");
  const uint64_t align = caps.min_imported_host_pointer_alignment;
  const auto address = reinterpret_cast<uintptr_t>(host);
  const std::string what = std::string(op) + ": importing " + std::to_string(bytes) + " host bytes";
  if (address == 0 || address % align != 0)
    fail(ErrorKind::InvalidArgument,
         what + ": address " + std::to_string(address) +
             " is not a non-zero multiple of minImportedHostPointerAlignment (" +
             std::to_string(align) + ")");
  VkMemoryHostPointerPropertiesEXT props{VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
  VkResult result =
      device_.get_memory_host_pointer_properties(device_.device, kHostAllocation, host, &props);
  if (result != VK_SUCCESS || props.memoryTypeBits == 0)
    fail(ErrorKind::InvalidArgument,
         what + ": the driver cannot import this address (" + vk_result_name(result) + ")");
  auto block = std::make_unique<BufferBlock>();
  block->capacity = word_bytes(bytes);
  block->allocation_size = round_up(block->capacity, align);
  block->external = ExternalMemory::ImportedHost;
  block->buffer = create_buffer(block->capacity, kHostAllocation, what);
  try {
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device_.device, block->buffer, &req);
    const int type = pick_memory_type(device_, req.memoryTypeBits & props.memoryTypeBits);
    if (type < 0)
      fail(ErrorKind::Unsupported,
           what + ": no memory type can hold both this host memory and a buffer");
    if (req.size > block->allocation_size) block->allocation_size = round_up(req.size, align);
    block->memory_type = static_cast<uint32_t>(type);
    VkImportMemoryHostPointerInfoEXT import{VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT};
    import.handleType = kHostAllocation;
    import.pHostPointer = host;
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &import};
    alloc.allocationSize = block->allocation_size;
    alloc.memoryTypeIndex = block->memory_type;
    result = vkAllocateMemory(device_.device, &alloc, nullptr, &block->memory);
    if (result == VK_ERROR_INVALID_EXTERNAL_HANDLE)
      fail(ErrorKind::InvalidArgument,
           what + ": the driver refused the address (VK_ERROR_INVALID_EXTERNAL_HANDLE)");
    device_.check(result, (what + ": vkAllocateMemory").c_str());
    bind_and_map(*block, what);
  } catch (...) {
    destroy(*block);
    throw;
  }
  count_new(*block, bytes);
  return block;
}

// ---- Device and Buffer entry points ----

ExternalMemory Buffer::external() const { return block_->external; }
void Buffer::keep_out_of_cache() { block_->no_reuse = true; }

void Device::wait_for(const Buffer& buffer) { state_->executor->wait_for(buffer); }

std::shared_ptr<Buffer> Device::allocate_exportable(uint64_t bytes, const char* op) {
  return make_buffer(shared_from_this(), state_->allocator->take_exportable(bytes, op), bytes);
}

ExportedFd Device::exported_fd(const Buffer& buffer, const char* op) const {
  const BufferBlock& b = buffer.block();
  if (&buffer.device() != this)
    fail(ErrorKind::InvalidArgument, std::string(op) + ": the buffer belongs to another device");
  if (b.external != ExternalMemory::ExportedFd || b.export_fd < 0)
    fail(ErrorKind::InvalidArgument, std::string(op) + ": the buffer was not allocated exportable");
  return ExportedFd{b.export_fd, b.capacity, b.allocation_size, b.memory_type, b.dedicated};
}

std::shared_ptr<Buffer> Device::import_fd(int fd, const ExportedFd& layout, uint64_t bytes,
                                          const char* op) {
  return make_buffer(shared_from_this(), state_->allocator->import_fd(fd, layout, bytes, op),
                     bytes);
}

std::shared_ptr<Buffer> Device::import_host_memory(void* host, uint64_t bytes, const char* op) {
  return make_buffer(shared_from_this(), state_->allocator->import_host(host, bytes, op), bytes);
}

}  // namespace nxvk
