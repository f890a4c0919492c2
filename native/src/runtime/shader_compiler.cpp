// Run-time GLSL → SPIR-V with shaderc, for generated kernels (fusion, op variants). Results are
// cached by the hash of the source: in memory, and on disk under cache_directory()/spirv/.
#include <shaderc/shaderc.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <unordered_map>

#include "nxvk/runtime.hpp"
#include "runtime/env.hpp"
#include "runtime/hash.hpp"

namespace nxvk {

std::vector<uint32_t> compile_glsl(const std::string& source, const std::string& name) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::vector<uint32_t>> memory;
  const uint64_t hash = hash64(source);
  {
    std::lock_guard lock(mutex);
    auto it = memory.find(source);
    if (it != memory.end()) return it->second;
  }
  // On disk: <hash>.spv, accepted only if it starts with the SPIR-V magic number and the source
  // stored beside it is identical (a hash collision or a corrupt file means a fresh compile).
  // NX_VULKAN_SPIRV_CACHE_DIR overrides where compiled kernels are kept (tests share one across
  // runs while each run's pipeline cache stays private).
  std::string dir = env::get("NX_VULKAN_SPIRV_CACHE_DIR").value_or(cache_directory().empty() ? "" : cache_directory() + "/spirv");
  std::string base = dir.empty() ? "" : dir + "/" + std::to_string(hash);
  if (!base.empty()) {
    std::ifstream src(base + ".glsl", std::ios::binary);
    std::ifstream bin(base + ".spv", std::ios::binary);
    if (src && bin) {
      std::string stored((std::istreambuf_iterator<char>(src)), std::istreambuf_iterator<char>());
      std::string bytes((std::istreambuf_iterator<char>(bin)), std::istreambuf_iterator<char>());
      if (stored == source && bytes.size() >= 20 && bytes.size() % 4 == 0) {
        std::vector<uint32_t> words(bytes.size() / 4);
        std::memcpy(words.data(), bytes.data(), bytes.size());
        if (words[0] == 0x07230203u) {
          std::lock_guard lock(mutex);
          memory.emplace(source, words);
          return words;
        }
      }
    }
  }
  shaderc::Compiler compiler;
  shaderc::CompileOptions options;
  options.SetTargetEnvironment(shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_2);
  options.SetOptimizationLevel(shaderc_optimization_level_performance);
  auto result = compiler.CompileGlslToSpv(source, shaderc_compute_shader, name.c_str(), options);
  if (result.GetCompilationStatus() != shaderc_compilation_status_success)
    fail(ErrorKind::InvalidArgument, "kernel " + name + ": GLSL does not compile: " + result.GetErrorMessage());
  std::vector<uint32_t> words(result.cbegin(), result.cend());
  if (!base.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::string tmp = base + ".tmp" + std::to_string(reinterpret_cast<uintptr_t>(&words));
    std::ofstream(tmp + ".glsl", std::ios::binary) << source;
    std::ofstream(tmp + ".spv", std::ios::binary)
        .write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(words.size() * 4));
    std::filesystem::rename(tmp + ".glsl", base + ".glsl", ec);
    std::filesystem::rename(tmp + ".spv", base + ".spv", ec);
    std::filesystem::remove(tmp + ".glsl", ec);
    std::filesystem::remove(tmp + ".spv", ec);
  }
  std::lock_guard lock(mutex);
  memory.emplace(source, words);
  return words;
}

}  // namespace nxvk
