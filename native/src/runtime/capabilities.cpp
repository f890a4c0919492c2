// Reading a device's capabilities once, describing them, and masking them off for tests.
#include <algorithm>
#include <cstring>
#include <sstream>

#include "runtime/env.hpp"
#include "runtime/internal.hpp"

namespace nxvk {

const char* device_type_name(DeviceType type) {
  switch (type) {
    case DeviceType::Discrete: return "discrete";
    case DeviceType::Integrated: return "integrated";
    case DeviceType::Virtual: return "virtual";
    case DeviceType::Cpu: return "cpu";
    case DeviceType::Other: return "other";
  }
  return "other";
}

bool has_device_extension(VkPhysicalDevice physical, const char* name) {
  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> props(count);
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, props.data());
  return std::any_of(props.begin(), props.end(),
                     [&](const auto& p) { return std::strcmp(p.extensionName, name) == 0; });
}

namespace {
// What the driver says about storage buffers with external memory of one handle type.
VkExternalMemoryFeatureFlags external_buffer_features(VkPhysicalDevice physical,
                                                      VkExternalMemoryHandleTypeFlagBits type) {
  VkPhysicalDeviceExternalBufferInfo info{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO};
  info.usage = kTensorBufferUsage;
  info.handleType = type;
  VkExternalBufferProperties props{VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
  vkGetPhysicalDeviceExternalBufferProperties(physical, &info, &props);
  return props.externalMemoryProperties.externalMemoryFeatures;
}

void read_external_memory(VkPhysicalDevice physical, Capabilities& caps) {
  if (has_device_extension(physical, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME)) {
    const auto f = external_buffer_features(physical, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT);
    caps.external_memory_fd = (f & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT) &&
                              (f & VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT);
    caps.external_memory_fd_dedicated_only = (f & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT) != 0;
  }
  if (has_device_extension(physical, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME)) {
    const auto f = external_buffer_features(physical, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT);
    VkPhysicalDeviceExternalMemoryHostPropertiesEXT host{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &host};
    vkGetPhysicalDeviceProperties2(physical, &p2);
    caps.min_imported_host_pointer_alignment = host.minImportedHostPointerAlignment;
    caps.external_memory_host = (f & VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT) &&
                                (f & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT) == 0 &&
                                host.minImportedHostPointerAlignment != 0;
  }
}
}  // namespace

Capabilities read_capabilities(VkInstance, VkPhysicalDevice physical, uint32_t index) {
  Capabilities caps;
  caps.index = index;

  // Properties.
  VkPhysicalDeviceSubgroupSizeControlProperties size_control_props{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceVulkan12Properties props12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
  VkPhysicalDeviceVulkan11Properties props11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  VkPhysicalDeviceProperties basic;
  vkGetPhysicalDeviceProperties(physical, &basic);
  const bool v13 = basic.apiVersion >= VK_API_VERSION_1_3;
  const bool size_control_ext = has_device_extension(physical, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  props.pNext = &props11;
  props11.pNext = &props12;
  if (v13 || size_control_ext) props12.pNext = &size_control_props;
  vkGetPhysicalDeviceProperties2(physical, &props);
  const VkPhysicalDeviceLimits& limits = props.properties.limits;

  caps.name = props.properties.deviceName;
  switch (props.properties.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: caps.type = DeviceType::Discrete; break;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: caps.type = DeviceType::Integrated; break;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: caps.type = DeviceType::Virtual; break;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: caps.type = DeviceType::Cpu; break;
    default: caps.type = DeviceType::Other; break;
  }
  caps.vendor_id = props.properties.vendorID;
  caps.device_id = props.properties.deviceID;
  caps.api_version = props.properties.apiVersion;
  caps.driver_version = props.properties.driverVersion;
  caps.driver_name = props12.driverName;
  caps.driver_info = props12.driverInfo;
  std::memcpy(caps.device_uuid.data(), props11.deviceUUID, 16);
  std::memcpy(caps.pipeline_cache_uuid.data(), props.properties.pipelineCacheUUID, 16);
  std::memcpy(caps.driver_uuid.data(), props11.driverUUID, 16);

  caps.subgroup_size = props11.subgroupSize;
  caps.min_subgroup_size = (v13 || size_control_ext) ? size_control_props.minSubgroupSize : props11.subgroupSize;
  caps.max_subgroup_size = (v13 || size_control_ext) ? size_control_props.maxSubgroupSize : props11.subgroupSize;
  if (props11.subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT)
    caps.subgroup_operations = props11.subgroupSupportedOperations;

  caps.denorm_preserve_f32 = props12.shaderDenormPreserveFloat32;
  caps.denorm_preserve_f64 = props12.shaderDenormPreserveFloat64;
  caps.rounding_rte_f32 = props12.shaderRoundingModeRTEFloat32;
  caps.rounding_rte_f64 = props12.shaderRoundingModeRTEFloat64;

  caps.max_storage_buffer_range = limits.maxStorageBufferRange;
  caps.max_memory_allocation_size = props11.maxMemoryAllocationSize;
  caps.max_shared_memory = limits.maxComputeSharedMemorySize;
  caps.max_workgroup_invocations = limits.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    caps.max_workgroup_count[i] = limits.maxComputeWorkGroupCount[i];
    caps.max_workgroup_size[i] = limits.maxComputeWorkGroupSize[i];
  }
  caps.max_push_constants_size = limits.maxPushConstantsSize;
  caps.min_storage_buffer_offset_alignment = limits.minStorageBufferOffsetAlignment;

  if (v13 || has_device_extension(physical, VK_KHR_MAINTENANCE_4_EXTENSION_NAME)) {
    VkPhysicalDeviceMaintenance4Properties m4{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &m4};
    vkGetPhysicalDeviceProperties2(physical, &p2);
    caps.max_buffer_size = m4.maxBufferSize;
  } else {
    // Without maintenance4 no limit is reported; allocations are bounded by the allocation size.
    caps.max_buffer_size = caps.max_memory_allocation_size;
  }

  // Features.
  const bool atomic_float = has_device_extension(physical, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  const bool atomic_float2 = has_device_extension(physical, VK_EXT_SHADER_ATOMIC_FLOAT_2_EXTENSION_NAME);
  const bool coop_nv = has_device_extension(physical, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  const bool coop_khr = has_device_extension(physical, kCooperativeMatrixKHRExtension);
  const bool executable_properties =
      has_device_extension(physical, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executable_features{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic1{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT atomic2{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_2_FEATURES_EXT};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coop_nv_features{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
#ifdef VK_KHR_cooperative_matrix
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR coop_khr_features{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
#else
  NxvkCooperativeMatrixFeaturesKHR coop_khr_features{kStructureTypeCooperativeMatrixFeaturesKHR,
                                                    nullptr, VK_FALSE, VK_FALSE};
#endif
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceSubgroupSizeControlFeatures size_control{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  void** tail = &features.pNext;
  auto chain = [&](auto& s) {
    *tail = &s;
    tail = &s.pNext;
  };
  chain(f11);
  chain(f12);
  if (v13) chain(f13);
  else if (size_control_ext) chain(size_control);
  if (atomic_float) chain(atomic1);
  if (atomic_float2) chain(atomic2);
  if (coop_nv) chain(coop_nv_features);
  if (coop_khr) chain(coop_khr_features);
  if (executable_properties) chain(executable_features);
  vkGetPhysicalDeviceFeatures2(physical, &features);

  caps.float64 = features.features.shaderFloat64;
  caps.int64 = features.features.shaderInt64;
  caps.int16 = features.features.shaderInt16;
  caps.int8 = f12.shaderInt8;
  caps.float16 = f12.shaderFloat16;
  caps.storage_buffer_8bit = f12.storageBuffer8BitAccess;
  caps.storage_buffer_16bit = f11.storageBuffer16BitAccess;
  caps.timeline_semaphore = f12.timelineSemaphore;
  caps.subgroup_size_control = v13 ? f13.subgroupSizeControl : (size_control_ext && size_control.subgroupSizeControl);
  caps.atomic_float32_add = atomic_float && atomic1.shaderBufferFloat32AtomicAdd;
  caps.atomic_float64_add = atomic_float && atomic1.shaderBufferFloat64AtomicAdd;
  caps.atomic_float32_min_max = atomic_float2 && atomic2.shaderBufferFloat32AtomicMinMax;
  caps.atomic_float64_min_max = atomic_float2 && atomic2.shaderBufferFloat64AtomicMinMax;
  caps.cooperative_matrix_nv = coop_nv && coop_nv_features.cooperativeMatrix;
  caps.cooperative_matrix_khr = coop_khr && coop_khr_features.cooperativeMatrix;
  caps.push_descriptor = has_device_extension(physical, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  caps.pipeline_statistics = executable_properties && executable_features.pipelineExecutableInfo;
  read_external_memory(physical, caps);

  // Memory: the largest device-local heap and whether it has a cached, coherent host view.
  VkPhysicalDeviceMemoryProperties memory;
  vkGetPhysicalDeviceMemoryProperties(physical, &memory);
  int largest = -1;
  for (uint32_t h = 0; h < memory.memoryHeapCount; ++h)
    if ((memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
        (largest < 0 || memory.memoryHeaps[h].size > memory.memoryHeaps[largest].size))
      largest = static_cast<int>(h);
  if (largest >= 0) caps.device_local_heap_size = memory.memoryHeaps[largest].size;
  const VkMemoryPropertyFlags unified =
      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
      VK_MEMORY_PROPERTY_HOST_COHERENT_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  for (uint32_t t = 0; t < memory.memoryTypeCount; ++t)
    if ((memory.memoryTypes[t].propertyFlags & unified) == unified &&
        static_cast<int>(memory.memoryTypes[t].heapIndex) == largest)
      caps.unified_memory = true;
  return caps;
}

std::vector<std::string> Capabilities::subgroup_operation_names() const {
  static const std::pair<uint32_t, const char*> names[] = {
      {VK_SUBGROUP_FEATURE_BASIC_BIT, "basic"},
      {VK_SUBGROUP_FEATURE_VOTE_BIT, "vote"},
      {VK_SUBGROUP_FEATURE_ARITHMETIC_BIT, "arithmetic"},
      {VK_SUBGROUP_FEATURE_BALLOT_BIT, "ballot"},
      {VK_SUBGROUP_FEATURE_SHUFFLE_BIT, "shuffle"},
      {VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT, "shuffle_relative"},
      {VK_SUBGROUP_FEATURE_CLUSTERED_BIT, "clustered"},
      {VK_SUBGROUP_FEATURE_QUAD_BIT, "quad"},
  };
  std::vector<std::string> out;
  for (auto [bit, name] : names)
    if (subgroup_operations & bit) out.emplace_back(name);
  return out;
}

namespace {
struct Maskable {
  const char* name;
  void (*apply)(Capabilities&);
};
const Maskable kMaskable[] = {
    {"f64", [](Capabilities& c) { c.float64 = false; c.atomic_float64_add = false; c.atomic_float64_min_max = false; }},
    {"int64", [](Capabilities& c) { c.int64 = false; }},
    {"int16", [](Capabilities& c) { c.int16 = false; }},
    {"int8", [](Capabilities& c) { c.int8 = false; }},
    {"f16", [](Capabilities& c) { c.float16 = false; }},
    {"storage8", [](Capabilities& c) { c.storage_buffer_8bit = false; }},
    {"storage16", [](Capabilities& c) { c.storage_buffer_16bit = false; }},
    {"subgroup", [](Capabilities& c) { c.subgroup_operations = 0; c.subgroup_size_control = false; }},
    {"float_atomics", [](Capabilities& c) {
       c.atomic_float32_add = c.atomic_float64_add = false;
       c.atomic_float32_min_max = c.atomic_float64_min_max = false; }},
    {"coop_matrix", [](Capabilities& c) { c.cooperative_matrix_khr = c.cooperative_matrix_nv = false; }},
    {"unified_memory", [](Capabilities& c) { c.unified_memory = false; }},
    {"push_descriptor", [](Capabilities& c) { c.push_descriptor = false; }},
    {"external_memory_fd", [](Capabilities& c) { c.external_memory_fd = c.external_memory_fd_dedicated_only = false; }},
    {"external_memory_host", [](Capabilities& c) { c.external_memory_host = false; }},
    {"fused_fma", [](Capabilities& c) { c.fused_fma_f32 = false; }},
};
}  // namespace

const std::vector<std::string>& maskable_features() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& m : kMaskable) out.emplace_back(m.name);
    return out;
  }();
  return names;
}

void apply_capability_mask(Capabilities& caps, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    auto it = std::find_if(std::begin(kMaskable), std::end(kMaskable),
                           [&](const Maskable& m) { return name == m.name; });
    if (it == std::end(kMaskable)) {
      std::string known;
      for (const auto& m : kMaskable) known += (known.empty() ? "" : ",") + std::string(m.name);
      fail(ErrorKind::InvalidArgument,
           "NX_VULKAN_DISABLE: unknown feature \"" + name + "\" (known: " + known + ")");
    }
    it->apply(caps);
    if (std::find(caps.disabled.begin(), caps.disabled.end(), name) == caps.disabled.end())
      caps.disabled.push_back(name);
  }
}

std::vector<std::string> environment_capability_mask() {
  auto disable = env::get("NX_VULKAN_DISABLE");
  return disable ? env::split_list(*disable) : std::vector<std::string>{};
}

namespace {
std::string yes(bool b) { return b ? "yes" : "no"; }
std::string version(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}
std::string mib(uint64_t bytes) {
  std::ostringstream s;
  s << bytes << " (" << (bytes >> 20) << " MiB)";
  return s.str();
}
}  // namespace

std::string uuid_hex(const std::array<uint8_t, 16>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::string Capabilities::describe() const {
  std::ostringstream s;
  s << "device " << index << ": " << name << "\n";
  s << "  type:                     " << device_type_name(type) << "\n";
  s << "  vendor/device id:         0x" << std::hex << vendor_id << "/0x" << device_id << std::dec << "\n";
  s << "  Vulkan:                   " << version(api_version) << "\n";
  s << "  driver:                   " << driver_name << " " << driver_info << " (version " << driver_version << ")\n";
  s << "  device uuid:              " << uuid_hex(device_uuid) << "\n";
  s << "  types: f64 " << yes(float64) << ", int64 " << yes(int64) << ", int16 " << yes(int16)
    << ", int8 " << yes(int8) << ", f16 " << yes(float16) << "\n";
  s << "  storage: 8-bit " << yes(storage_buffer_8bit) << ", 16-bit " << yes(storage_buffer_16bit) << "\n";
  s << "  subgroup: size " << subgroup_size << " (" << min_subgroup_size << ".." << max_subgroup_size
    << "), size control " << yes(subgroup_size_control) << ", ops";
  for (const auto& op : subgroup_operation_names()) s << " " << op;
  s << "\n";
  s << "  float atomics: f32 add " << yes(atomic_float32_add) << ", f64 add " << yes(atomic_float64_add)
    << ", f32 min/max " << yes(atomic_float32_min_max) << ", f64 min/max " << yes(atomic_float64_min_max) << "\n";
  s << "  cooperative matrix: KHR " << yes(cooperative_matrix_khr) << ", NV " << yes(cooperative_matrix_nv) << "\n";
  s << "  float controls: denorm preserve f32 " << yes(denorm_preserve_f32) << " f64 " << yes(denorm_preserve_f64)
    << ", RTE f32 " << yes(rounding_rte_f32) << " f64 " << yes(rounding_rte_f64)
    << ", fused fma f32 " << yes(fused_fma_f32) << " (probed when a process first opens the device)\n";
  s << "  maxStorageBufferRange:    " << mib(max_storage_buffer_range) << "\n";
  s << "  maxMemoryAllocationSize:  " << mib(max_memory_allocation_size) << "\n";
  s << "  maxBufferSize:            " << mib(max_buffer_size) << "\n";
  s << "  device-local heap:        " << mib(device_local_heap_size) << "\n";
  s << "  shared memory:            " << max_shared_memory << " bytes\n";
  s << "  workgroup: invocations " << max_workgroup_invocations << ", size " << max_workgroup_size[0] << "x"
    << max_workgroup_size[1] << "x" << max_workgroup_size[2] << ", count " << max_workgroup_count[0] << "x"
    << max_workgroup_count[1] << "x" << max_workgroup_count[2] << "\n";
  s << "  push constants:           " << max_push_constants_size << " bytes\n";
  s << "  unified memory:           " << yes(unified_memory) << " (device-local and host-visible)\n";
  s << "  external memory fd:       " << yes(external_memory_fd)
    << (external_memory_fd_dedicated_only ? " (dedicated allocations only)" : "")
    << " (Nx.to_pointer/from_pointer mode :ipc)\n";
  s << "  external memory host:     " << yes(external_memory_host);
  if (min_imported_host_pointer_alignment != 0)
    s << " (alignment " << min_imported_host_pointer_alignment << " bytes)";
  s << " (Nx.from_pointer mode :local)\n";
  s << "  push descriptors:         " << yes(push_descriptor) << "\n";
  s << "  timeline semaphores:      " << yes(timeline_semaphore) << "\n";
  s << "  kernel statistics:        " << yes(pipeline_statistics) << " (NX_VULKAN_PIPELINE_STATS=1 logs them)\n";
  if (!disabled.empty()) {
    s << "  masked off:              ";
    for (const auto& d : disabled) s << " " << d;
    s << "\n";
  }
  return s.str();
}

}  // namespace nxvk
