// Checking VkResult: every Vulkan call in the runtime goes through check().
#pragma once

#include <vulkan/vulkan.h>

#include "nxvk/error.hpp"

namespace nxvk {

const char* vk_result_name(VkResult result);

// Throws the typed Error that matches `result`, naming `what` (the operation and the call).
[[noreturn]] void throw_vk_error(VkResult result, const char* what);

inline void check(VkResult result, const char* what) {
  if (result != VK_SUCCESS) throw_vk_error(result, what);
}

}  // namespace nxvk
