// What one Vulkan device can do, read once when the instance enumerates it. Every op asks this
// struct; nothing in the library assumes a feature. NX_VULKAN_DISABLE masks features off.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace nxvk {

enum class DeviceType { Discrete, Integrated, Virtual, Cpu, Other };
const char* device_type_name(DeviceType type);

struct Capabilities {
  // Identity.
  uint32_t index = 0;  // position in the instance's enumeration, as `nxvk info` lists it
  std::string name;
  DeviceType type = DeviceType::Other;
  uint32_t vendor_id = 0, device_id = 0;
  uint32_t api_version = 0, driver_version = 0;
  std::string driver_name, driver_info;
  std::array<uint8_t, 16> device_uuid{};
  std::array<uint8_t, 16> pipeline_cache_uuid{};
  std::array<uint8_t, 16> driver_uuid{};  // with device_uuid, what opaque external memory must match

  // Arithmetic types in shaders.
  bool float64 = false, int64 = false, int16 = false, int8 = false, float16 = false;
  // 8- and 16-bit values in storage buffers.
  bool storage_buffer_8bit = false, storage_buffer_16bit = false;

  // Subgroups.
  uint32_t subgroup_size = 0, min_subgroup_size = 0, max_subgroup_size = 0;
  bool subgroup_size_control = false;
  uint32_t subgroup_operations = 0;  // VkSubgroupFeatureFlags supported in compute
  std::vector<std::string> subgroup_operation_names() const;

  // Floating-point atomics (VK_EXT_shader_atomic_float / _float2). Reductions never use them.
  bool atomic_float32_add = false, atomic_float64_add = false;
  bool atomic_float32_min_max = false, atomic_float64_min_max = false;

  // Cooperative matrix.
  bool cooperative_matrix_khr = false, cooperative_matrix_nv = false;

  // Float controls (VK 1.2).
  bool denorm_preserve_f32 = false, denorm_preserve_f64 = false;
  bool rounding_rte_f32 = false, rounding_rte_f64 = false;
  // fma() on f32 in a kernel rounds once (a fused multiply-add), which makes a product's exact
  // error two instructions instead of Dekker's seventeen. No property reports it (SPIR-V lets
  // Fma round twice, and lavapipe does): a kernel probes it the first time a process opens the
  // device, so a struct from the enumeration alone says false.
  bool fused_fma_f32 = false;

  // Limits.
  uint64_t max_storage_buffer_range = 0;
  uint64_t max_memory_allocation_size = 0;
  uint64_t max_buffer_size = 0;
  uint32_t max_shared_memory = 0;
  uint32_t max_workgroup_invocations = 0;
  std::array<uint32_t, 3> max_workgroup_count{};
  std::array<uint32_t, 3> max_workgroup_size{};
  uint32_t max_push_constants_size = 0;
  uint64_t min_storage_buffer_offset_alignment = 0;
  uint64_t device_local_heap_size = 0;  // the largest device-local heap

  // Memory: a memory type that is device-local, host-visible, coherent and cached on the largest
  // device-local heap, so tensors can be read and written by the host without staging.
  bool unified_memory = false;

  // Memory shared outside this device (Nx.to_pointer / Nx.from_pointer).
  // VK_KHR_external_memory_fd with storage buffers exportable and importable as opaque POSIX fds.
  bool external_memory_fd = false;
  bool external_memory_fd_dedicated_only = false;  // the driver wants a dedicated allocation per buffer
  // VK_EXT_external_memory_host with storage buffers importable from host allocations; the address
  // and size of an import must be multiples of min_imported_host_pointer_alignment.
  bool external_memory_host = false;
  uint64_t min_imported_host_pointer_alignment = 0;

  // Runtime features the executor uses when present.
  bool push_descriptor = false;
  bool timeline_semaphore = false;
  // VK_KHR_pipeline_executable_properties: the driver's statistics of each compiled kernel
  // (register count and the like), logged when NX_VULKAN_PIPELINE_STATS is set.
  bool pipeline_statistics = false;

  // Feature names masked off by NX_VULKAN_DISABLE (or the API), as given.
  std::vector<std::string> disabled;

  // Multi-line human-readable description (used by `nxvk info`).
  std::string describe() const;
};

// Names accepted by NX_VULKAN_DISABLE, comma separated.
const std::vector<std::string>& maskable_features();

// Switches the named features off in `caps`. Unknown names are an InvalidArgument error.
void apply_capability_mask(Capabilities& caps, const std::vector<std::string>& names);

// The feature names NX_VULKAN_DISABLE lists (empty when unset).
std::vector<std::string> environment_capability_mask();

// A device or driver UUID as 32 lowercase hex digits.
std::string uuid_hex(const std::array<uint8_t, 16>& bytes);

}  // namespace nxvk
