// nxvk: the command line of the native core.
//   nxvk info              every device with its capabilities and limits
//   nxvk selftest [DEV]    runs fill, copy, add and a reduction on a device, checked on the host
//   nxvk unary OP X...     an f32 unary op (Nx.Backend name) on the default device, printed as
//                          Nx prints f32 (shortest round-trip digits): nxvk unary sigmoid 1 2 3 4
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "nxvk/ops.hpp"

#include "nxvk/runtime.hpp"
#include "nxvk/selftest.hpp"

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: nxvk info\n"
               "       nxvk selftest [DEVICE]   (DEVICE: index or name substring; default:\n"
               "                                 NX_VULKAN_DEVICE, else the best device)\n"
               "       nxvk unary OP X...       (OP: an Nx unary op, X: f32 values)\n");
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

int unary_op(int argc, char** argv) {
  const auto op = nxvk::parse_unary_op(argv[2]);
  if (!op) {
    std::fprintf(stderr, "nxvk: unary: unknown op %s\n", argv[2]);
    return 2;
  }
  std::vector<float> x;
  for (int i = 3; i < argc; ++i) {
    float v = 0;
    const char* end = argv[i] + std::strlen(argv[i]);
    if (std::from_chars(argv[i], end, v).ptr != end) {
      std::fprintf(stderr, "nxvk: unary: not an f32 value: %s\n", argv[i]);
      return 2;
    }
    x.push_back(v);
  }
  auto device = nxvk::Device::open("");
  nxvk::Tensor t = nxvk::from_binary(*device, nxvk::DType::F32, {static_cast<int64_t>(x.size())},
                                     std::as_bytes(std::span<const float>(x)));
  const auto bytes = nxvk::to_binary(nxvk::unary(*op, t, nxvk::DType::F32));
  std::vector<float> y(x.size());
  std::memcpy(y.data(), bytes.data(), y.size() * sizeof(float));
  std::printf("%s on %s:\n[", argv[2], device->caps().name.c_str());
  for (size_t i = 0; i < y.size(); ++i) {
    char buf[32];
    *std::to_chars(buf, buf + sizeof buf - 1, y[i]).ptr = 0;
    std::printf("%s%s", i ? ", " : "", buf);
  }
  std::printf("]\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 2) return usage();
    std::string command = argv[1];
    if (command == "info") return info();
    if (command == "selftest") return selftest(argc > 2 ? argv[2] : "");
    if (command == "unary" && argc > 2) return unary_op(argc, argv);
    return usage();
  } catch (const nxvk::Error& e) {
    std::fprintf(stderr, "nxvk: %s: %s\n", nxvk::error_kind_name(e.kind()), e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nxvk: %s\n", e.what());
    return 1;
  }
}
