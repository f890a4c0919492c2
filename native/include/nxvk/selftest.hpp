// A handful of kernels (fill, copy, add, a reduction) run on a device and checked on the host.
#pragma once

#include <string>
#include <vector>

#include "nxvk/runtime.hpp"

namespace nxvk {

struct SelftestCase {
  std::string name;
  bool passed = false;
  std::string detail;
};

std::vector<SelftestCase> run_selftest(Device& device);

}  // namespace nxvk
