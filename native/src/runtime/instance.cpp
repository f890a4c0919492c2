// The Vulkan instance: portability enumeration, optional validation, device discovery and choice.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>

#include "runtime/env.hpp"
#include "runtime/internal.hpp"

namespace nxvk {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";
std::atomic<bool> validation_requested{false};  // request_validation_layer()
std::atomic<bool> instance_created{false};
constexpr const char* kInstallHint =
    "install a Vulkan driver: on Debian, mesa-vulkan-drivers for the CPU device (lavapipe), "
    "or your GPU vendor's Vulkan driver";

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT && data != nullptr) {
    static_cast<Instance*>(user)->record_validation_message(data->pMessage);
  }
  return VK_FALSE;
}

bool has_instance_extension(const char* name) {
  uint32_t count = 0;
  vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> props(count);
  vkEnumerateInstanceExtensionProperties(nullptr, &count, props.data());
  return std::any_of(props.begin(), props.end(),
                     [&](const auto& p) { return std::strcmp(p.extensionName, name) == 0; });
}

bool has_layer(const char* name) {
  uint32_t count = 0;
  vkEnumerateInstanceLayerProperties(&count, nullptr);
  std::vector<VkLayerProperties> props(count);
  vkEnumerateInstanceLayerProperties(&count, props.data());
  return std::any_of(props.begin(), props.end(),
                     [&](const auto& p) { return std::strcmp(p.layerName, name) == 0; });
}

int type_rank(DeviceType type) {
  switch (type) {
    case DeviceType::Discrete: return 0;
    case DeviceType::Integrated: return 1;
    case DeviceType::Virtual: return 2;
    case DeviceType::Cpu: return 3;
    case DeviceType::Other: return 4;
  }
  return 5;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

Instance& Instance::get() {
  static Instance instance;
  return instance;
}

Instance::Instance() {
  instance_created = true;
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "nx_vulkan";
  app.pEngineName = "nxvk";
  app.apiVersion = VK_API_VERSION_1_3;

  std::vector<const char*> extensions;
  std::vector<const char*> layers;
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  if (has_instance_extension(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
    extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    info.flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }
  VkDebugUtilsMessengerCreateInfoEXT messenger_info{
      VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  if (env::flag("NX_VULKAN_VALIDATION") || validation_requested.load()) {
    if (!has_layer(kValidationLayer))
      fail(ErrorKind::Unsupported,
           "vulkan instance: NX_VULKAN_VALIDATION=1 but VK_LAYER_KHRONOS_validation is not "
           "installed (on Debian: apt-get install vulkan-validationlayers)");
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    messenger_info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                     VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                                 VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
    messenger_info.pfnUserCallback = on_validation_message;
    messenger_info.pUserData = this;
    info.pNext = &messenger_info;
    validation_enabled_ = true;
  }
  info.pApplicationInfo = &app;
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();

  VkResult result = vkCreateInstance(&info, nullptr, &instance_);
  if (result == VK_ERROR_INCOMPATIBLE_DRIVER || result == VK_ERROR_INITIALIZATION_FAILED)
    fail(ErrorKind::NoDevice, std::string("vulkan instance: vkCreateInstance: ") +
                                  vk_result_name(result) + " (no Vulkan driver found; " +
                                  kInstallHint + ")");
  check(result, "vulkan instance: vkCreateInstance");

  if (validation_enabled_) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (create != nullptr) check(create(instance_, &messenger_info, nullptr, &messenger_),
                                 "vulkan instance: vkCreateDebugUtilsMessengerEXT");
  }

  uint32_t count = 0;
  check(vkEnumeratePhysicalDevices(instance_, &count, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> all(count);
  check(vkEnumeratePhysicalDevices(instance_, &count, all.data()), "vkEnumeratePhysicalDevices");

  for (VkPhysicalDevice physical : all) {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(physical, &props);
    std::string name = props.deviceName;
    if (props.apiVersion < VK_API_VERSION_1_2) {
      skipped_.push_back(name + ": Vulkan " + std::to_string(VK_API_VERSION_MAJOR(props.apiVersion)) +
                         "." + std::to_string(VK_API_VERSION_MINOR(props.apiVersion)) +
                         " (nx_vulkan needs 1.2)");
      continue;
    }
    uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, nullptr);
    std::vector<VkQueueFamilyProperties> family_props(families);
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, family_props.data());
    // Prefer a compute queue without graphics (a dedicated compute family), else any compute.
    int chosen = -1;
    for (uint32_t f = 0; f < families; ++f) {
      bool compute = family_props[f].queueFlags & VK_QUEUE_COMPUTE_BIT;
      bool graphics = family_props[f].queueFlags & VK_QUEUE_GRAPHICS_BIT;
      if (!compute) continue;
      if (chosen < 0 || (!graphics && (family_props[chosen].queueFlags & VK_QUEUE_GRAPHICS_BIT)))
        chosen = static_cast<int>(f);
    }
    if (chosen < 0) {
      skipped_.push_back(name + ": no compute queue");
      continue;
    }
    Capabilities caps =
        read_capabilities(instance_, physical, static_cast<uint32_t>(physical_.size()));
    if (!caps.timeline_semaphore) {
      skipped_.push_back(name + ": no timeline semaphores");
      continue;
    }
    physical_.push_back(physical);
    queue_family_.push_back(static_cast<uint32_t>(chosen));
    caps_.push_back(std::move(caps));
  }
}

Instance::~Instance() {
  {
    std::lock_guard lock(registry_mutex);
    registry.clear();
  }
  if (messenger_ != VK_NULL_HANDLE) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy != nullptr) destroy(instance_, messenger_, nullptr);
  }
  if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
}

ValidationReport Instance::validation() const {
  std::lock_guard lock(validation_mutex_);
  return {validation_enabled_, validation_messages_, last_validation_message_};
}

void Instance::record_validation_message(const char* message) {
  std::lock_guard lock(validation_mutex_);
  ++validation_messages_;
  last_validation_message_ = message;
  std::fprintf(stderr, "[nxvk validation] %s\n", message);
}

const std::vector<Capabilities>& list_devices() {
  const auto& devices = Instance::get().devices();
  if (devices.empty()) {
    std::string message = "vulkan: no Vulkan device with a compute queue was found; ";
    message += kInstallHint;
    for (const auto& s : Instance::get().skipped()) message += "; skipped " + s;
    fail(ErrorKind::NoDevice, message);
  }
  return devices;
}

uint32_t select_device(const std::string& selector) {
  const auto& devices = list_devices();
  bool numeric = !selector.empty() &&
                 std::all_of(selector.begin(), selector.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (numeric) {
    unsigned long index = std::stoul(selector);
    if (index >= devices.size())
      fail(ErrorKind::InvalidArgument, "device selection: index " + selector + " out of range (" +
                                           std::to_string(devices.size()) + " devices)");
    return static_cast<uint32_t>(index);
  }
  for (const auto& caps : devices)
    if (lower(caps.name).find(lower(selector)) != std::string::npos) return caps.index;
  std::string names;
  for (const auto& caps : devices) names += (names.empty() ? "" : ", ") + caps.name;
  fail(ErrorKind::InvalidArgument,
       "device selection: no device matches \"" + selector + "\" (devices: " + names + ")");
}

uint32_t default_device_index() {
  if (auto selector = env::get("NX_VULKAN_DEVICE")) return select_device(*selector);
  const auto& devices = list_devices();
  uint32_t best = 0;
  for (const auto& caps : devices)
    if (type_rank(caps.type) < type_rank(devices[best].type)) best = caps.index;
  return best;
}

ValidationReport validation_report() { return Instance::get().validation(); }

bool request_validation_layer() {
  validation_requested = true;
  return !instance_created.load();
}

}  // namespace nxvk
