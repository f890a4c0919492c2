// Compute pipelines: created once per (kernel, specialization constants), over a VkPipelineCache
// that is loaded from and saved to disk. A missing, unreadable, read-only or corrupt cache file is
// never an error: the cache simply starts empty.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/env.hpp"
#include "runtime/hash.hpp"
#include "runtime/internal.hpp"
#include "runtime/kernel_registry.hpp"

namespace nxvk {
namespace {

constexpr char kMagic[8] = {'N', 'X', 'V', 'K', 'P', 'C', '0', '2'};

// Our own header in front of the driver's blob: it ties the file to one device and driver and
// detects truncation or corruption before the driver ever sees the data.
struct CacheFileHeader {
  char magic[8];
  uint8_t device_uuid[16];
  uint8_t pipeline_cache_uuid[16];
  uint32_t vendor_id;
  uint32_t driver_version;
  uint64_t data_size;
  uint64_t checksum;
};

std::string hex(const uint8_t* bytes, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

CacheFileHeader header_for(const Capabilities& caps) {
  CacheFileHeader h{};
  std::memcpy(h.magic, kMagic, 8);
  std::memcpy(h.device_uuid, caps.device_uuid.data(), 16);
  std::memcpy(h.pipeline_cache_uuid, caps.pipeline_cache_uuid.data(), 16);
  h.vendor_id = caps.vendor_id;
  h.driver_version = caps.driver_version;
  return h;
}

std::vector<char> load_cache_file(const std::string& path, const Capabilities& caps) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  CacheFileHeader h{};
  if (!in.read(reinterpret_cast<char*>(&h), sizeof h)) return {};
  CacheFileHeader want = header_for(caps);
  if (std::memcmp(h.magic, want.magic, 8) != 0 || std::memcmp(h.device_uuid, want.device_uuid, 16) != 0 ||
      std::memcmp(h.pipeline_cache_uuid, want.pipeline_cache_uuid, 16) != 0 ||
      h.vendor_id != want.vendor_id || h.driver_version != want.driver_version || h.data_size > (1ull << 30))
    return {};
  std::vector<char> data(h.data_size);
  if (!in.read(data.data(), static_cast<std::streamsize>(data.size()))) return {};
  if (hash64(data.data(), data.size()) != h.checksum) return {};
  return data;
}

// The driver's statistics of a new pipeline on stderr, one line (NX_VULKAN_PIPELINE_STATS):
// register counts and the like, for performance work.
void log_statistics(const DeviceState& device, const std::string& what, VkPipeline pipeline) {
  VkPipelineExecutableInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
  info.pipeline = pipeline;
  info.executableIndex = 0;
  uint32_t count = 0;
  if (device.pipeline_statistics(device.device, &info, &count, nullptr) != VK_SUCCESS) return;
  std::vector<VkPipelineExecutableStatisticKHR> stats(count, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
  if (device.pipeline_statistics(device.device, &info, &count, stats.data()) != VK_SUCCESS) return;
  std::string line = "nx_vulkan pipeline " + what + ":";
  for (const auto& st : stats) {
    line += ' ';
    line += st.name;
    line += '=';
    switch (st.format) {
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: line += st.value.b32 ? "true" : "false"; break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: line += std::to_string(st.value.i64); break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: line += std::to_string(st.value.u64); break;
      default: line += std::to_string(st.value.f64); break;
    }
    line += ';';
  }
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace

std::string cache_directory() {
  if (auto dir = env::get("NX_VULKAN_CACHE_DIR")) return *dir;
  if (auto xdg = env::get("XDG_CACHE_HOME")) return *xdg + "/nx_vulkan";
  if (auto home = env::get("HOME")) return *home + "/.cache/nx_vulkan";
  return {};
}

std::span<const uint32_t> find_embedded_kernel(const std::string& name) {
  for (const auto& k : embedded_kernels())
    if (name == k.name) return k.spirv;
  fail(ErrorKind::InvalidArgument, "kernel " + name + ": no such embedded kernel");
}

PipelineStore::PipelineStore(DeviceState& device) : device_(device) {
  const Capabilities& caps = device.caps;
  std::string dir = cache_directory();
  if (!dir.empty())
    path_ = dir + "/pipelines-" + hex(caps.device_uuid.data(), 16) + "-" + std::to_string(caps.driver_version) + ".bin";
  std::vector<char> initial = path_.empty() ? std::vector<char>{} : load_cache_file(path_, caps);
  VkPipelineCacheCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  info.initialDataSize = initial.size();
  info.pInitialData = initial.empty() ? nullptr : initial.data();
  VkResult result = vkCreatePipelineCache(device.device, &info, nullptr, &cache_);
  if (result != VK_SUCCESS && !initial.empty()) {
    // The driver rejected the data: start with an empty cache.
    info.initialDataSize = 0;
    info.pInitialData = nullptr;
    result = vkCreatePipelineCache(device.device, &info, nullptr, &cache_);
  }
  device.check(result, "pipeline cache: vkCreatePipelineCache");
}

PipelineStore::~PipelineStore() {
  for (auto& [key, p] : pipelines_) {
    vkDestroyPipeline(device_.device, p->pipeline, nullptr);
    vkDestroyPipelineLayout(device_.device, p->layout, nullptr);
    vkDestroyDescriptorSetLayout(device_.device, p->set_layout, nullptr);
  }
  vkDestroyPipelineCache(device_.device, cache_, nullptr);
}

void PipelineStore::save() noexcept {
  if (path_.empty() || cache_ == VK_NULL_HANDLE) return;
  try {
    std::lock_guard lock(mutex_);
    size_t size = 0;
    if (vkGetPipelineCacheData(device_.device, cache_, &size, nullptr) != VK_SUCCESS || size == 0) return;
    std::vector<char> data(size);
    if (vkGetPipelineCacheData(device_.device, cache_, &size, data.data()) != VK_SUCCESS) return;
    data.resize(size);
    CacheFileHeader h = header_for(device_.caps);
    h.data_size = data.size();
    h.checksum = hash64(data.data(), data.size());
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
    // Write a private temporary file and rename it, so readers never see a half-written cache.
    std::string tmp = path_ + ".tmp" + std::to_string(reinterpret_cast<uintptr_t>(this));
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) return;
      out.write(reinterpret_cast<const char*>(&h), sizeof h);
      out.write(data.data(), static_cast<std::streamsize>(data.size()));
      if (!out) {
        out.close();
        std::filesystem::remove(tmp, ec);
        return;
      }
    }
    std::filesystem::rename(tmp, path_, ec);
    if (ec) std::filesystem::remove(tmp, ec);
  } catch (...) {
    // Best effort: a cache that cannot be written costs compile time, never correctness.
  }
}

const Pipeline& PipelineStore::get(const Kernel& kernel, std::span<const uint32_t> spec) {
  std::vector<uint32_t> generated;
  std::string key =
      kernel.glsl.empty() ? kernel.name : "glsl:" + kernel.prefix_key + ":" + std::to_string(hash64(kernel.glsl));
  for (uint32_t v : spec) key += ":" + std::to_string(v);
  key += "/" + std::to_string(kernel.bindings);

  std::lock_guard lock(mutex_);
  auto it = pipelines_.find(key);
  if (it != pipelines_.end()) return *it->second;

  std::span<const uint32_t> spirv;
  if (kernel.glsl.empty()) {
    spirv = find_embedded_kernel(kernel.name);
  } else {
    generated = compile_glsl(kernel.prefix ? kernel.prefix() + kernel.glsl : kernel.glsl, kernel.name);
    spirv = generated;
  }
  const std::string what = "kernel " + kernel.name;
  auto p = std::make_unique<Pipeline>();
  p->bindings = kernel.bindings;
  VkDevice dev = device_.device;

  std::vector<VkDescriptorSetLayoutBinding> bindings(kernel.bindings);
  for (uint32_t i = 0; i < kernel.bindings; ++i)
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  if (device_.push_descriptor_set) set_info.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  set_info.bindingCount = kernel.bindings;
  set_info.pBindings = bindings.data();
  VkShaderModule module = VK_NULL_HANDLE;
  try {
    device_.check(vkCreateDescriptorSetLayout(dev, &set_info, nullptr, &p->set_layout),
                  (what + ": vkCreateDescriptorSetLayout").c_str());
    VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, 128};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &p->set_layout;
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &push;
    device_.check(vkCreatePipelineLayout(dev, &layout_info, nullptr, &p->layout),
                  (what + ": vkCreatePipelineLayout").c_str());
    VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module_info.codeSize = spirv.size() * sizeof(uint32_t);
    module_info.pCode = spirv.data();
    device_.check(vkCreateShaderModule(dev, &module_info, nullptr, &module),
                  (what + ": vkCreateShaderModule").c_str());
    std::vector<VkSpecializationMapEntry> entries(spec.size());
    for (uint32_t i = 0; i < spec.size(); ++i) entries[i] = {i, i * 4u, 4};
    VkSpecializationInfo spec_info{static_cast<uint32_t>(entries.size()), entries.data(),
                                   spec.size() * sizeof(uint32_t), spec.data()};
    VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = module;
    info.stage.pName = "main";
    info.stage.pSpecializationInfo = spec.empty() ? nullptr : &spec_info;
    info.layout = p->layout;
    if (device_.pipeline_statistics) info.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    device_.check(vkCreateComputePipelines(dev, cache_, 1, &info, nullptr, &p->pipeline),
                  (what + ": vkCreateComputePipelines").c_str());
    if (device_.pipeline_statistics) log_statistics(device_, what, p->pipeline);
  } catch (...) {
    if (module != VK_NULL_HANDLE) vkDestroyShaderModule(dev, module, nullptr);
    if (p->layout != VK_NULL_HANDLE) vkDestroyPipelineLayout(dev, p->layout, nullptr);
    if (p->set_layout != VK_NULL_HANDLE) vkDestroyDescriptorSetLayout(dev, p->set_layout, nullptr);
    throw;
  }
  vkDestroyShaderModule(dev, module, nullptr);
  created_ += 1;
  return *pipelines_.emplace(key, std::move(p)).first->second;
}

}  // namespace nxvk
