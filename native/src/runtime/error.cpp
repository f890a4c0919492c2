#include <string>

#include "runtime/vk_check.hpp"

namespace nxvk {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::InvalidArgument: return "invalid argument";
    case ErrorKind::Unsupported: return "unsupported on this device";
    case ErrorKind::OutOfDeviceMemory: return "out of device memory";
    case ErrorKind::DeviceLost: return "device lost";
    case ErrorKind::NoDevice: return "no Vulkan device";
    case ErrorKind::Internal: return "internal error";
  }
  return "error";
}

void fail(ErrorKind kind, const std::string& message) { throw Error(kind, message); }

const char* vk_result_name(VkResult result) {
  switch (result) {
#define NXVK_RESULT(r) \
  case r:              \
    return #r;
    NXVK_RESULT(VK_SUCCESS)
    NXVK_RESULT(VK_NOT_READY)
    NXVK_RESULT(VK_TIMEOUT)
    NXVK_RESULT(VK_INCOMPLETE)
    NXVK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    NXVK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    NXVK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    NXVK_RESULT(VK_ERROR_DEVICE_LOST)
    NXVK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    NXVK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    NXVK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    NXVK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    NXVK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    NXVK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    NXVK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    NXVK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    NXVK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    NXVK_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    NXVK_RESULT(VK_ERROR_FRAGMENTATION)
    NXVK_RESULT(VK_ERROR_INVALID_SHADER_NV)
    NXVK_RESULT(VK_ERROR_UNKNOWN)
#undef NXVK_RESULT
    default: return "VkResult(unknown)";
  }
}

void throw_vk_error(VkResult result, const char* what) {
  std::string message = std::string(what) + ": " + vk_result_name(result);
  switch (result) {
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_FRAGMENTED_POOL:
      fail(ErrorKind::OutOfDeviceMemory, message);
    case VK_ERROR_DEVICE_LOST:
      fail(ErrorKind::DeviceLost, message);
    case VK_ERROR_INCOMPATIBLE_DRIVER:
      fail(ErrorKind::NoDevice,
           message + " (no usable Vulkan driver; on Debian install mesa-vulkan-drivers for the CPU "
                     "device, or your GPU vendor's Vulkan driver)");
    case VK_ERROR_FEATURE_NOT_PRESENT:
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FORMAT_NOT_SUPPORTED:
      fail(ErrorKind::Unsupported, message);
    default:
      fail(ErrorKind::Internal, message);
  }
}

}  // namespace nxvk
