// nxvk: the command line of the native core.
//   nxvk info              every device with its capabilities and limits
//   nxvk selftest [DEV]    runs fill, copy, add and a reduction on a device, checked on the host
#include <cstdio>
#include <string>

#include "nxvk/runtime.hpp"
#include "nxvk/selftest.hpp"

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: nxvk info\n"
               "       nxvk selftest [DEVICE]   (DEVICE: index or name substring; default:\n"
               "                                 NX_VULKAN_DEVICE, else the best device)\n");
  return 2;
}

int info() {
  const auto& devices = nxvk::list_devices();
  uint32_t chosen = nxvk::default_device_index();
  std::printf("%zu Vulkan device(s); default: %u\n\n", devices.size(), chosen);
  for (const auto& caps : devices) {
    nxvk::Capabilities masked = caps;
    nxvk::apply_capability_mask(masked, nxvk::environment_capability_mask());
    std::printf("%s\n", masked.describe().c_str());
  }
  return 0;
}

int selftest(const std::string& selector) {
  auto device = nxvk::Device::open(selector);
  std::printf("selftest on device %u: %s (%s memory)\n", device->caps().index, device->caps().name.c_str(),
              device->zero_copy() ? "zero-copy" : "staged");
  int failed = 0;
  for (const auto& c : nxvk::run_selftest(*device)) {
    std::printf("  %-10s %s%s%s\n", c.name.c_str(), c.passed ? "ok" : "FAILED", c.detail.empty() ? "" : ": ",
                c.detail.c_str());
    failed += c.passed ? 0 : 1;
  }
  std::printf("%s\n", failed == 0 ? "selftest passed" : "selftest FAILED");
  return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 2) return usage();
    std::string command = argv[1];
    if (command == "info") return info();
    if (command == "selftest") return selftest(argc > 2 ? argv[2] : "");
    return usage();
  } catch (const nxvk::Error& e) {
    std::fprintf(stderr, "nxvk: %s: %s\n", nxvk::error_kind_name(e.kind()), e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nxvk: %s\n", e.what());
    return 1;
  }
}
