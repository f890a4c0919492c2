// Kernels compiled at build time and embedded in the library (generated registry).
#pragma once

#include <cstdint>
#include <string>
#include <span>
#include <vector>

namespace nxvk {

struct EmbeddedKernel {
  const char* name;
  std::span<const uint32_t> spirv;
};

const std::vector<EmbeddedKernel>& embedded_kernels();
std::span<const uint32_t> find_embedded_kernel(const std::string& name);  // throws if unknown

}  // namespace nxvk
