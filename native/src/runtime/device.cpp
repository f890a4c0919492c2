// Device: logical device creation, memory type choice, transfers and dispatch.
#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>

#include "runtime/env.hpp"
#include "runtime/internal.hpp"

namespace nxvk {
namespace {

constexpr uint64_t kStagingChunk = 64ull << 20;  // transfers larger than this go in chunks
constexpr size_t kStagingChunksInFlight = 4;     // per upload
constexpr uint32_t kPushConstantBytes = 128;     // the minimum every device guarantees

int find_memory_type(const VkPhysicalDeviceMemoryProperties& memory, VkMemoryPropertyFlags want,
                     int heap = -1) {
  for (uint32_t t = 0; t < memory.memoryTypeCount; ++t)
    if ((memory.memoryTypes[t].propertyFlags & want) == want &&
        (heap < 0 || static_cast<int>(memory.memoryTypes[t].heapIndex) == heap))
      return static_cast<int>(t);
  return -1;
}

std::string range_text(uint64_t offset, uint64_t bytes) {
  return "[" + std::to_string(offset) + ", " + std::to_string(offset + bytes) + ")";
}

void check_range(const char* op, const Buffer& buffer, uint64_t offset, uint64_t bytes) {
  if (offset > buffer.size() || bytes > buffer.size() - offset)
    fail(ErrorKind::InvalidArgument, std::string(op) + ": byte range " + range_text(offset, bytes) +
                                         " is outside a buffer of " + std::to_string(buffer.size()) +
                                         " bytes");
}

// Whether fma() on f32 rounds once on this device (Capabilities::fused_fma_f32): fma(a, a, c)
// with a = 1 + 2^-12 and c = -(1 + 2^-11) is 2^-24 fused and 0 rounded twice (a^2 = 1 + 2^-11 +
// 2^-24 rounds to 1 + 2^-11). The operands come from a buffer, so no compiler folds them, and
// the result goes through a precise variable, as in the kernels that rely on it (math_ff_f32.inc).
constexpr const char* kFmaProbe = R"GLSL(#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Probe_t { float w[]; } probe;
void main() {
  precise float r = fma(probe.w[0], probe.w[0], probe.w[1]);
  probe.w[2] = r;
}
)GLSL";

void probe_arithmetic(Device& device) {
  Capabilities& caps = device.state().caps;
  if (std::find(caps.disabled.begin(), caps.disabled.end(), "fused_fma") != caps.disabled.end()) return;
  // A property of the GPU and its driver, so the first open of each device probes it for all.
  static std::mutex mutex;
  static std::map<uint32_t, bool> probed;
  std::lock_guard lock(mutex);
  if (auto known = probed.find(caps.index); known != probed.end()) {
    caps.fused_fma_f32 = known->second;
    return;
  }
  const float in[3] = {1.0f + 0x1p-12f, -(1.0f + 0x1p-11f), 0.0f};
  auto buffer = device.allocate(sizeof in, "probe fma");
  device.write(*buffer, 0, in, sizeof in);
  device.dispatch(Kernel{"probe_fma", kFmaProbe, 1}, std::vector<BufferView>{{buffer}}, {}, {1});
  float out = 1.0f;
  device.read(*buffer, 2 * sizeof(float), &out, sizeof out);
  caps.fused_fma_f32 = out == 0x1p-24f;
  probed[caps.index] = caps.fused_fma_f32;
  // A new device holds no memory: this frees the probe's, and the statistics start at zero.
  buffer.reset();
  device.sync();
  device.release_cached_memory();
  device.state().allocator->reset_statistics();
}

}  // namespace

void record_dispatch(DeviceState& s, const Pipeline& pipeline, std::span<const BufferView> buffers,
                     const std::vector<VkDescriptorBufferInfo>& infos, std::span<const std::byte> push,
                     WorkgroupCount groups);

void DeviceState::check(VkResult result, const char* what) {
  if (result == VK_ERROR_DEVICE_LOST) lost = true;
  nxvk::check(result, what);
}

std::shared_ptr<Device> Device::open(const std::string& selector) {
  uint32_t index = selector.empty() ? default_device_index() : select_device(selector);
  Instance& instance = Instance::get();
  std::lock_guard lock(instance.registry_mutex);
  auto& slot = instance.registry[index];
  if (!slot) {
    auto device = std::make_shared<Device>(Private{}, index, DeviceOptions{});
    probe_arithmetic(*device);
    slot = device;
  }
  return slot;
}

std::shared_ptr<Device> Device::open_index(uint32_t index, const DeviceOptions& options) {
  if (index >= list_devices().size())
    fail(ErrorKind::InvalidArgument, "device selection: index " + std::to_string(index) +
                                         " out of range (" + std::to_string(list_devices().size()) +
                                         " devices)");
  auto device = std::make_shared<Device>(Private{}, index, options);
  probe_arithmetic(*device);
  return device;
}

Device::Device(Private, uint32_t index, const DeviceOptions& options)
    : state_(std::make_unique<DeviceState>()) {
  Instance& instance = Instance::get();
  DeviceState& s = *state_;
  s.self = this;
  s.caps = instance.devices().at(index);
  s.physical = instance.physical(index);
  s.queue_family = instance.compute_queue_family(index);

  std::vector<std::string> mask = environment_capability_mask();
  mask.insert(mask.end(), options.disable.begin(), options.disable.end());
  apply_capability_mask(s.caps, mask);
  const Capabilities& caps = s.caps;

  // Options and environment are read before the VkDevice exists, so a bad value leaks nothing.
  uint64_t batch_env = 64;
  if (auto n = env::number("NX_VULKAN_BATCH_MAX")) batch_env = *n;
  else if (auto m = env::number("NXV_BATCH_MAX")) batch_env = *m;
  const uint32_t batch_max =
      options.batch_max ? *options.batch_max : static_cast<uint32_t>(std::min<uint64_t>(batch_env, UINT32_MAX));
  const bool force_staging = options.force_staging.value_or(env::flag("NX_VULKAN_FORCE_STAGING"));

  // Enable exactly the features the (masked) capabilities report, so a shader that uses a masked
  // feature is caught by the validation layer instead of silently working.
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.features.shaderFloat64 = caps.float64;
  features.features.shaderInt64 = caps.int64;
  features.features.shaderInt16 = caps.int16;
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  f11.storageBuffer16BitAccess = caps.storage_buffer_16bit;
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  f12.shaderFloat16 = caps.float16;
  f12.shaderInt8 = caps.int8;
  f12.storageBuffer8BitAccess = caps.storage_buffer_8bit;
  f12.timelineSemaphore = VK_TRUE;
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceSubgroupSizeControlFeatures size_control{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic1{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT atomic2{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_2_FEATURES_EXT};
  features.pNext = &f11;
  f11.pNext = &f12;
  void** tail = &f12.pNext;
  auto chain = [&](auto& st) {
    *tail = &st;
    tail = &st.pNext;
  };

  std::vector<const char*> extensions;
  const bool v13 = caps.api_version >= VK_API_VERSION_1_3;
  if (caps.subgroup_size_control) {
    if (v13) {
      f13.subgroupSizeControl = VK_TRUE;
      f13.computeFullSubgroups = VK_TRUE;
    } else {
      extensions.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
      size_control.subgroupSizeControl = VK_TRUE;
      size_control.computeFullSubgroups = VK_TRUE;
      chain(size_control);
    }
  }
  if (v13) chain(f13);
  if (caps.push_descriptor) extensions.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  // Kernel statistics for performance work, only on request (capturing them costs compile time).
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executable{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  const bool log_statistics = caps.pipeline_statistics && env::flag("NX_VULKAN_PIPELINE_STATS");
  if (log_statistics) {
    extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    executable.pipelineExecutableInfo = VK_TRUE;
    chain(executable);
  }
  if (caps.atomic_float32_add || caps.atomic_float64_add) {
    extensions.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
    atomic1.shaderBufferFloat32AtomicAdd = caps.atomic_float32_add;
    atomic1.shaderBufferFloat64AtomicAdd = caps.atomic_float64_add;
    chain(atomic1);
  }
  if (caps.atomic_float32_min_max || caps.atomic_float64_min_max) {
    extensions.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_2_EXTENSION_NAME);
    atomic2.shaderBufferFloat32AtomicMinMax = caps.atomic_float32_min_max;
    atomic2.shaderBufferFloat64AtomicMinMax = caps.atomic_float64_min_max;
    chain(atomic2);
  }
  // External memory (Nx.to_pointer / from_pointer): only when present and not masked off.
  if (caps.external_memory_fd) extensions.push_back(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
  if (caps.external_memory_host) extensions.push_back(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
  // MoltenVK and other portability drivers require this extension to be enabled when offered.
  if (has_device_extension(s.physical, "VK_KHR_portability_subset"))
    extensions.push_back("VK_KHR_portability_subset");

  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = s.queue_family;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = &features;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue_info;
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  nxvk::check(vkCreateDevice(s.physical, &info, nullptr, &s.device),
              ("open device " + caps.name + ": vkCreateDevice").c_str());
  try {
    vkGetDeviceQueue(s.device, s.queue_family, 0, &s.queue);
    if (caps.push_descriptor)
      s.push_descriptor_set = reinterpret_cast<PFN_vkCmdPushDescriptorSetKHR>(
          vkGetDeviceProcAddr(s.device, "vkCmdPushDescriptorSetKHR"));
    if (log_statistics)
      s.pipeline_statistics = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
          vkGetDeviceProcAddr(s.device, "vkGetPipelineExecutableStatisticsKHR"));
    if (caps.external_memory_fd)
      s.get_memory_fd = reinterpret_cast<PFN_vkGetMemoryFdKHR>(vkGetDeviceProcAddr(s.device, "vkGetMemoryFdKHR"));
    if (caps.external_memory_host)
      s.get_memory_host_pointer_properties = reinterpret_cast<PFN_vkGetMemoryHostPointerPropertiesEXT>(
          vkGetDeviceProcAddr(s.device, "vkGetMemoryHostPointerPropertiesEXT"));

    // Memory types: tensors on the largest device-local heap; zero-copy when that memory is also
    // host-visible, coherent and cached, unless staging is forced.
    vkGetPhysicalDeviceMemoryProperties(s.physical, &s.memory_properties);
    const VkPhysicalDeviceMemoryProperties& memory = s.memory_properties;
    const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    int tensor_type = -1;
    if (caps.unified_memory && !force_staging) {
      tensor_type = find_memory_type(memory, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host |
                                                 VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
      s.tensors_mapped = tensor_type >= 0;
    }
    if (tensor_type < 0) tensor_type = find_memory_type(memory, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (tensor_type < 0) tensor_type = 0;
    int staging_type = find_memory_type(memory, host | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    if (staging_type < 0) staging_type = find_memory_type(memory, host);
    if (staging_type < 0)
      fail(ErrorKind::Unsupported, "open device " + caps.name + ": no host-visible coherent memory type");
    s.tensor_memory_type = static_cast<uint32_t>(tensor_type);
    s.staging_memory_type = static_cast<uint32_t>(staging_type);

    s.allocator = std::make_unique<Allocator>(s);
    s.pipelines = std::make_unique<PipelineStore>(s);
    s.executor = std::make_unique<Executor>(s, batch_max);
  } catch (...) {
    // The destructor does not run for a constructor that throws: release what exists.
    s.executor.reset();
    s.pipelines.reset();
    s.allocator.reset();
    vkDestroyDevice(s.device, nullptr);
    s.device = VK_NULL_HANDLE;
    throw;
  }
}

Device::~Device() {
  DeviceState& s = *state_;
  try {
    if (!s.lost) sync();
  } catch (...) {
    // Destruction must not throw; a lost device has nothing left to wait for.
  }
  if (s.device != VK_NULL_HANDLE && !s.lost) vkDeviceWaitIdle(s.device);
  s.executor.reset();
  s.constants.clear();  // their blocks go back to the allocator, which still exists
  if (s.pipelines) s.pipelines->save();
  s.pipelines.reset();
  s.allocator.reset();
  if (s.device != VK_NULL_HANDLE) vkDestroyDevice(s.device, nullptr);
}

const Capabilities& Device::caps() const { return state_->caps; }
bool Device::zero_copy() const { return state_->tensors_mapped; }

Buffer::Buffer(std::shared_ptr<Device> device, std::unique_ptr<BufferBlock> block, uint64_t size)
    : device_(std::move(device)), block_(std::move(block)), size_(size) {}

Buffer::~Buffer() { device_->state().allocator->give(std::move(block_), size_); }

void* Buffer::mapped() const { return block_->mapped; }

std::shared_ptr<Buffer> make_buffer(std::shared_ptr<Device> device, std::unique_ptr<BufferBlock> block,
                                    uint64_t size) {
  return std::shared_ptr<Buffer>(new Buffer(std::move(device), std::move(block), size));
}

namespace {
// Before a cache miss creates memory (about 25 ms for 1 GiB on the H200), the buffers of batches
// the GPU has already finished go back to the cache (staging: tensor blocks return when the host
// drops them, Executor::Recording::use) and blocks whose destruction waited are destroyed.
std::unique_ptr<BufferBlock> take_reclaiming(DeviceState& s, uint64_t bytes, MemoryPool pool, const char* op) {
  if (!s.allocator->cached(bytes, pool)) {
    s.executor->retire_completed();
    s.allocator->reap();
  }
  return s.allocator->take(bytes, pool, op);
}

std::shared_ptr<Buffer> staging_buffer(Device& device, uint64_t bytes) {
  return make_buffer(device.shared_from_this(), take_reclaiming(device.state(), bytes, MemoryPool::Staging, "staging"),
                     bytes);
}
}  // namespace

std::shared_ptr<Buffer> Device::allocate(uint64_t bytes, const char* op) {
  return make_buffer(shared_from_this(), take_reclaiming(*state_, bytes, MemoryPool::Tensor, op), bytes);
}

void Device::write(Buffer& dst, uint64_t offset, const void* data, uint64_t bytes) {
  check_range("write", dst, offset, bytes);
  if (bytes == 0) return;
  DeviceState& s = *state_;
  if (dst.mapped() != nullptr) {
    // Zero-copy: the host may only write once every recorded use of the buffer has completed.
    s.executor->wait_for(dst);
    std::memcpy(static_cast<char*>(dst.mapped()) + offset, data, bytes);
    return;
  }
  // At most kStagingChunksInFlight chunks in flight: a large upload then cycles through a few
  // staging buffers instead of creating one per chunk (about 25 ms per 64 MiB on the H200).
  std::deque<std::shared_ptr<Buffer>> in_flight;
  for (uint64_t done = 0; done < bytes; done += kStagingChunk) {
    uint64_t n = std::min(kStagingChunk, bytes - done);
    if (in_flight.size() == kStagingChunksInFlight) {
      s.executor->wait_for(*in_flight.front());
      in_flight.pop_front();  // back to the cache, for the next chunk
    }
    auto staging = staging_buffer(*this, n);
    in_flight.push_back(staging);
    std::memcpy(staging->mapped(), static_cast<const char*>(data) + done, n);
    {
      Executor::Recording rec(*s.executor);
      rec.use(*staging);
      rec.use(dst);
      VkBufferCopy region{0, offset + done, n};
      vkCmdCopyBuffer(rec.cmd(), staging->block().buffer, dst.block().buffer, 1, &region);
    }
    s.executor->submit_if_due();
  }
}

void Device::read(const Buffer& src, uint64_t offset, void* data, uint64_t bytes) {
  check_range("read", src, offset, bytes);
  if (bytes == 0) return;
  DeviceState& s = *state_;
  if (src.mapped() != nullptr) {
    s.executor->wait_for(src);
    std::memcpy(data, static_cast<const char*>(src.mapped()) + offset, bytes);
    return;
  }
  for (uint64_t done = 0; done < bytes; done += kStagingChunk) {
    uint64_t n = std::min(kStagingChunk, bytes - done);
    auto staging = staging_buffer(*this, n);
    {
      Executor::Recording rec(*s.executor);
      rec.use(src);
      rec.use(*staging);
      VkBufferCopy region{offset + done, 0, n};
      vkCmdCopyBuffer(rec.cmd(), src.block().buffer, staging->block().buffer, 1, &region);
    }
    s.executor->wait_for(*staging);
    std::memcpy(static_cast<char*>(data) + done, staging->mapped(), n);
  }
}

void Device::copy(const Buffer& src, uint64_t src_offset, Buffer& dst, uint64_t dst_offset,
                  uint64_t bytes) {
  check_range("copy", src, src_offset, bytes);
  check_range("copy", dst, dst_offset, bytes);
  if (bytes == 0) return;
  {
    Executor::Recording rec(*state_->executor);
    rec.use(src);
    rec.use(dst);
    VkBufferCopy region{src_offset, dst_offset, bytes};
    vkCmdCopyBuffer(rec.cmd(), src.block().buffer, dst.block().buffer, 1, &region);
  }
  state_->executor->submit_if_due();
}

void Device::fill(Buffer& dst, uint64_t offset, uint64_t bytes, uint32_t pattern) {
  check_range("fill", dst, offset, bytes);
  if (offset % 4 != 0 || bytes % 4 != 0)
    fail(ErrorKind::InvalidArgument, "fill: offset and size must be multiples of 4 bytes, got " +
                                         range_text(offset, bytes));
  if (bytes == 0) return;
  {
    Executor::Recording rec(*state_->executor);
    rec.use(dst);
    vkCmdFillBuffer(rec.cmd(), dst.block().buffer, offset, bytes, pattern);
  }
  state_->executor->submit_if_due();
}

MemoryStats Device::memory_stats() const { return state_->allocator->stats(); }
void Device::release_cached_memory() { state_->allocator->release_cache(); }

void Device::dispatch(const Kernel& kernel, std::span<const BufferView> buffers,
                      std::span<const std::byte> push, WorkgroupCount groups,
                      std::span<const uint32_t> spec) {
  DeviceState& s = *state_;
  const std::string& name = kernel.name;
  if (buffers.size() != kernel.bindings)
    fail(ErrorKind::InvalidArgument, "dispatch " + name + ": expected " + std::to_string(kernel.bindings) +
                                         " buffers, got " + std::to_string(buffers.size()));
  if (push.size() > kPushConstantBytes)
    fail(ErrorKind::InvalidArgument, "dispatch " + name + ": " + std::to_string(push.size()) +
                                         " bytes of push constants (at most 128)");
  const uint32_t counts[3] = {groups.x, groups.y, groups.z};
  for (int i = 0; i < 3; ++i)
    if (counts[i] > s.caps.max_workgroup_count[i])
      fail(ErrorKind::InvalidArgument,
           "dispatch " + name + ": workgroup count " + std::to_string(counts[i]) +
               " exceeds maxComputeWorkGroupCount[" + std::to_string(i) + "] (" +
               std::to_string(s.caps.max_workgroup_count[i]) + ")");
  if (groups.x == 0 || groups.y == 0 || groups.z == 0) return;

  std::vector<VkDescriptorBufferInfo> infos(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferView& view = buffers[i];
    if (!view.buffer)
      fail(ErrorKind::InvalidArgument, "dispatch " + name + ": buffer " + std::to_string(i) + " is null");
    if (&view.buffer->device() != this)
      fail(ErrorKind::InvalidArgument, "dispatch " + name + ": buffer " + std::to_string(i) +
                                           " belongs to another device");
    uint64_t bytes = view.bytes;
    if (bytes == 0) bytes = view.buffer->size() > view.offset ? view.buffer->size() - view.offset : 0;
    check_range(("dispatch " + name).c_str(), *view.buffer, view.offset, bytes);
    if (bytes == 0) bytes = std::min<uint64_t>(4, view.buffer->block().capacity - view.offset);
    if (view.offset % s.caps.min_storage_buffer_offset_alignment != 0)
      fail(ErrorKind::InvalidArgument, "dispatch " + name + ": buffer " + std::to_string(i) + " offset " +
                                           std::to_string(view.offset) +
                                           " is not a multiple of minStorageBufferOffsetAlignment (" +
                                           std::to_string(s.caps.min_storage_buffer_offset_alignment) + ")");
    if (bytes > s.caps.max_storage_buffer_range)
      fail(ErrorKind::Unsupported, "dispatch " + name + ": binding " + std::to_string(i) + " of " +
                                       std::to_string(bytes) +
                                       " bytes exceeds the device's maxStorageBufferRange (" +
                                       std::to_string(s.caps.max_storage_buffer_range) + " bytes)");
    infos[i] = {view.buffer->block().buffer, view.offset, bytes};
  }

  const Pipeline& pipeline = s.pipelines->get(kernel, spec);
  record_dispatch(s, pipeline, buffers, infos, push, groups);
  s.executor->submit_if_due(uint64_t{groups.x} * groups.y * groups.z);
}

void record_dispatch(DeviceState& s, const Pipeline& pipeline, std::span<const BufferView> buffers,
                     const std::vector<VkDescriptorBufferInfo>& infos, std::span<const std::byte> push,
                     WorkgroupCount groups) {
  Executor::Recording rec(*s.executor);
  for (const auto& view : buffers) rec.use(*view.buffer);
  VkCommandBuffer cmd = rec.cmd();
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline);
  std::vector<VkWriteDescriptorSet> writes(infos.size());
  VkDescriptorSet set = s.push_descriptor_set ? VK_NULL_HANDLE : rec.descriptor_set(pipeline.set_layout);
  for (size_t i = 0; i < infos.size(); ++i) {
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = static_cast<uint32_t>(i);
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  if (s.push_descriptor_set) {
    s.push_descriptor_set(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout, 0,
                          static_cast<uint32_t>(writes.size()), writes.data());
  } else {
    vkUpdateDescriptorSets(s.device, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout, 0, 1, &set, 0, nullptr);
  }
  if (!push.empty())
    vkCmdPushConstants(cmd, pipeline.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                       static_cast<uint32_t>(push.size()), push.data());
  vkCmdDispatch(cmd, groups.x, groups.y, groups.z);
}

std::shared_ptr<Buffer> Device::constant(std::span<const std::byte> data, const char* op) {
  DeviceState& s = *state_;
  std::string key(reinterpret_cast<const char*>(data.data()), data.size());
  std::lock_guard lock(s.constants_mutex);
  auto it = s.constants.find(key);
  if (it != s.constants.end()) return it->second;
  // The buffer's reference to the device owns nothing (an aliasing shared_ptr): the device keeps
  // the buffer, and the buffer must not keep the device open.
  auto buffer = make_buffer(std::shared_ptr<Device>(std::shared_ptr<Device>(), this),
                            take_reclaiming(s, data.size(), MemoryPool::Tensor, op), data.size());
  write(*buffer, 0, data.data(), data.size());
  s.allocator->make_constant(buffer->block(), data.size());
  s.constants.emplace(std::move(key), buffer);
  return buffer;
}

BufferView Device::params(const void* data, uint64_t bytes) {
  Executor::Recording rec(*state_->executor);
  return rec.params(data, bytes);
}

uint64_t Device::flush() { return state_->executor->flush(); }

void Device::sync() {
  uint64_t value = state_->executor->flush();
  state_->executor->wait(value);
}

uint64_t Device::submissions() const { return state_->executor->submissions(); }
void Device::save_pipeline_cache() noexcept { state_->pipelines->save(); }
std::string Device::pipeline_cache_path() const { return state_->pipelines->path(); }
uint64_t Device::pipelines_created() const { return state_->pipelines->created(); }

}  // namespace nxvk
