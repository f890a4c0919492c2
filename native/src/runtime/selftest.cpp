#include "nxvk/selftest.hpp"

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

namespace nxvk {
namespace {

constexpr uint32_t kWorkgroup = 256;

uint32_t groups_for(uint64_t n) {
  return static_cast<uint32_t>(std::min<uint64_t>((n + kWorkgroup - 1) / kWorkgroup, 4096));
}

template <class T>
std::vector<std::byte> push_of(const T& value) {
  std::vector<std::byte> out(sizeof(T));
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

SelftestCase run_case(const std::string& name, const std::function<std::string()>& body) {
  SelftestCase c{name, false, ""};
  try {
    c.detail = body();
    c.passed = c.detail.empty();
  } catch (const std::exception& e) {
    c.detail = e.what();
  }
  return c;
}

}  // namespace

std::vector<SelftestCase> run_selftest(Device& device) {
  const uint32_t spec[] = {kWorkgroup};
  const uint32_t n = 1'000'003;  // not a multiple of anything convenient
  std::mt19937 rng(20261202);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(n), b(n);
  for (auto& x : a) x = dist(rng);
  for (auto& x : b) x = dist(rng);
  std::vector<SelftestCase> results;

  results.push_back(run_case("fill", [&] {
    auto out = device.allocate(n * 4ull);
    device.fill(*out, 0, n * 4ull, 0xdeadbeef);  // poison, then overwrite with the kernel
    struct { uint32_t n, value; } p{n, 0x12345678u};
    BufferView views[] = {{out}};
    device.dispatch({"fill", "", 1}, views, push_of(p), {groups_for(n)}, spec);
    std::vector<uint32_t> got(n);
    device.read(*out, 0, got.data(), n * 4ull);
    for (uint32_t i = 0; i < n; ++i)
      if (got[i] != 0x12345678u) return "element " + std::to_string(i) + " is wrong";
    return std::string();
  }));

  results.push_back(run_case("copy", [&] {
    auto in = device.allocate(n * 4ull), out = device.allocate(n * 4ull);
    device.write(*in, 0, a.data(), n * 4ull);
    device.fill(*out, 0, n * 4ull, 0xdeadbeef);
    uint32_t p = n;
    BufferView views[] = {{in}, {out}};
    device.dispatch({"copy", "", 2}, views, push_of(p), {groups_for(n)}, spec);
    std::vector<float> got(n);
    device.read(*out, 0, got.data(), n * 4ull);
    if (std::memcmp(got.data(), a.data(), n * 4ull) != 0) return std::string("copied bytes differ");
    return std::string();
  }));

  results.push_back(run_case("add_f32", [&] {
    auto ba = device.allocate(n * 4ull), bb = device.allocate(n * 4ull), out = device.allocate(n * 4ull);
    device.write(*ba, 0, a.data(), n * 4ull);
    device.write(*bb, 0, b.data(), n * 4ull);
    device.fill(*out, 0, n * 4ull, 0xdeadbeef);
    uint32_t p = n;
    BufferView views[] = {{ba}, {bb}, {out}};
    device.dispatch({"add_f32", "", 3}, views, push_of(p), {groups_for(n)}, spec);
    std::vector<float> got(n);
    device.read(*out, 0, got.data(), n * 4ull);
    for (uint32_t i = 0; i < n; ++i)
      if (got[i] != a[i] + b[i]) return "element " + std::to_string(i) + " is not correctly rounded";
    return std::string();
  }));

  results.push_back(run_case("sum_f32", [&] {
    // The host computes the same fixed order the kernel promises, so the bits must match.
    constexpr uint32_t kBlock = 4096, kLanes = 256;
    auto host_pass = [&](const std::vector<float>& in) {
      uint32_t blocks = static_cast<uint32_t>((in.size() + kBlock - 1) / kBlock);
      std::vector<float> out(blocks);
      for (uint32_t blk = 0; blk < blocks; ++blk) {
        float lanes[kLanes];
        for (uint32_t l = 0; l < kLanes; ++l) {
          float s = 0;
          for (uint32_t k = 0; k < kBlock / kLanes; ++k) {
            size_t i = size_t(blk) * kBlock + l + k * kLanes;
            if (i < in.size()) s += in[i];
          }
          lanes[l] = s;
        }
        for (uint32_t w = kLanes / 2; w > 0; w /= 2)
          for (uint32_t l = 0; l < w; ++l) lanes[l] = lanes[l] + lanes[l + w];
        out[blk] = lanes[0];
      }
      return out;
    };
    std::vector<float> expect = a;
    while (expect.size() > 1) expect = host_pass(expect);

    auto cur = device.allocate(n * 4ull);
    device.write(*cur, 0, a.data(), n * 4ull);
    uint64_t count = n;
    while (count > 1) {
      uint32_t blocks = static_cast<uint32_t>((count + kBlock - 1) / kBlock);
      auto next = device.allocate(blocks * 4ull);
      device.fill(*next, 0, blocks * 4ull, 0xdeadbeef);
      struct { uint32_t n, blocks; } p{static_cast<uint32_t>(count), blocks};
      BufferView views[] = {{cur}, {next}};
      device.dispatch({"sum_f32", "", 2}, views, push_of(p), {std::min<uint32_t>(blocks, 1024)}, spec);
      cur = next;
      count = blocks;
    }
    float got = 0;
    device.read(*cur, 0, &got, 4);
    double exact = 0;
    for (float x : a) exact += x;
    if (std::memcmp(&got, &expect[0], 4) != 0)
      return "sum " + std::to_string(got) + " differs from the host's fixed-order sum " + std::to_string(expect[0]);
    if (std::fabs(got - exact) > 1e-2)
      return "sum " + std::to_string(got) + " is far from the f64 sum " + std::to_string(exact);
    return std::string();
  }));
  device.sync();
  return results;
}

}  // namespace nxvk
