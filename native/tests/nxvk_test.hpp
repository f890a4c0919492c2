// Shared test support: the fixture every device test derives from, random data, poisoned
// buffers and error matchers.
//
// The test main (nxvk_test.cpp) sets NX_VULKAN_VALIDATION=1 before the Vulkan instance exists
// and points NX_VULKAN_CACHE_DIR at a private temporary directory. DeviceTest then checks, after
// every test, that no validation message was reported and that every device it handed out is
// back to zero live buffers once synced.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "nxvk/runtime.hpp"
#include "nxvk/types.hpp"

namespace nxvk::test {

constexpr uint32_t kPoison = 0xdeadbeefu;
constexpr uint32_t kWorkgroup = 256;

// The root of this process's temporary files (removed at exit).
const std::string& temp_root();
// A fresh, empty directory under temp_root().
std::string fresh_dir(const std::string& name);

// Sets (or unsets, with nullopt) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

class DeviceTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // The shared default device (Device::open("")).
  Device& device();
  // A separate device with its own allocator, executor and pipeline cache; checked at TearDown.
  std::shared_ptr<Device> open_device(const DeviceOptions& options = {});
  // Accepts the validation messages reported so far (for tests that provoke the layer); returns
  // how many arrived since the last baseline.
  uint64_t accept_validation_messages();
  // Checks one device now: synced, no live buffers.
  static void expect_idle(Device& device);

  uint32_t seed() const { return seed_; }
  std::mt19937& rng() { return rng_; }
  std::vector<float> random_floats(size_t n, float lo = -1.0f, float hi = 1.0f);
  std::vector<uint8_t> random_bytes(size_t n);

 private:
  uint64_t validation_baseline_ = 0;
  uint32_t seed_ = 0;
  std::mt19937 rng_;
  std::shared_ptr<Device> shared_;
  std::vector<std::shared_ptr<Device>> devices_;
};

// A buffer of `bytes` (rounded up to 4) with every word set to kPoison, so that elements a kernel
// or transfer failed to write are caught.
std::shared_ptr<Buffer> poisoned(Device& device, uint64_t bytes);

// Reads a whole buffer (or `bytes` of it) to the host.
std::vector<uint8_t> read_bytes(Device& device, const Buffer& buffer, uint64_t offset, uint64_t bytes);
template <class T>
std::vector<T> read_all(Device& device, const Buffer& buffer, size_t count) {
  std::vector<T> out(count);
  if (count) device.read(buffer, 0, out.data(), count * sizeof(T));
  return out;
}

template <class T>
std::vector<std::byte> push_of(const T& value) {
  std::vector<std::byte> out(sizeof(T));
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

inline uint32_t groups_for(uint64_t n, uint32_t workgroup = kWorkgroup) {
  uint64_t g = (n + workgroup - 1) / workgroup;
  if (g == 0) g = 1;
  return static_cast<uint32_t>(g < 4096 ? g : 4096);
}

// Index of the first element where `got` and `want` differ bitwise, or -1.
template <class T>
long first_mismatch(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) return static_cast<long>(i);
  return -1;
}

// Runs `statement` and checks that it throws nxvk::Error of `kind` whose message contains every
// one of `parts`.
#define EXPECT_NXVK_ERROR(statement, error_kind, ...)                                      \
  do {                                                                                     \
    bool nxvk_thrown_ = false;                                                             \
    try {                                                                                  \
      statement;                                                                           \
    } catch (const ::nxvk::Error& nxvk_e_) {                                               \
      nxvk_thrown_ = true;                                                                 \
      EXPECT_EQ(nxvk_e_.kind(), error_kind)                                                \
          << "message: " << nxvk_e_.what() << " (kind " << ::nxvk::error_kind_name(nxvk_e_.kind()) << ")"; \
      for (const std::string& nxvk_part_ : std::initializer_list<std::string>{__VA_ARGS__}) \
        EXPECT_NE(std::string(nxvk_e_.what()).find(nxvk_part_), std::string::npos)         \
            << "message \"" << nxvk_e_.what() << "\" does not mention \"" << nxvk_part_ << "\""; \
    }                                                                                      \
    EXPECT_TRUE(nxvk_thrown_) << #statement " did not throw nxvk::Error";                 \
  } while (0)

// Every real (non-complex) Nx type of whole bytes, in type-table order (f8 types included).
inline const std::vector<DType>& real_types() {
  static const std::vector<DType> t = {DType::U8,  DType::U16, DType::U32, DType::U64,  DType::S8,
                                       DType::S16, DType::S32, DType::S64, DType::F16,  DType::BF16,
                                       DType::F32, DType::F64, DType::F8,  DType::F8E4M3FN};
  return t;
}
// The sub-byte integer types (packed as Nx's bitstrings; tests of their own: test_types_narrow.cpp).
inline const std::vector<DType>& sub_byte_types() {
  static const std::vector<DType> t = {DType::U2, DType::U4, DType::S2, DType::S4};
  return t;
}

// f32 bits around the subnormal range, for the tests of subnormal operands and results (GPUs may
// flush them; Nx keeps them): subnormals of every magnitude, small normals, zeros, and larger
// values and specials so that results cross between the ranges. `small_subnormals`: only
// subnormals below 2^-135, whose sums of up to 512 terms stay exact in any order.
inline uint32_t tiny_f32_bits(std::mt19937& rng, bool small_subnormals = false) {
  const uint32_t sign = rng() & 0x80000000u;
  if (small_subnormals) return sign | ((rng() & 0x3fffu) >> (rng() % 14));
  switch (rng() % 10) {
    case 0: case 1: case 2: case 3: return sign | (((rng() & 0x7fffffu) >> (rng() % 23)) | 1u);  // subnormal
    case 4: case 5: return sign | (1u + rng() % 24u) << 23 | (rng() & 0x7fffffu);  // 2^-126 .. 2^-102
    case 6: return sign;                                                              // +-0
    case 7: return sign | (100u + rng() % 60u) << 23 | (rng() & 0x7fffffu);         // 2^-27 .. 2^33
    case 8: return sign | (140u + rng() % 100u) << 23 | (rng() & 0x7fffffu);        // 2^13 .. 2^113
    default: {
      const uint32_t specials[] = {0x7f800000u /* inf */, 0x7fc00000u /* NaN */, 0x00800000u /* 2^-126 */,
                                   0x007fffffu, 0x3f800000u /* 1 */, 0x7f7fffffu, 0x34000000u /* 2^-23 */,
                                   0x4b000000u /* 2^23 */};
      return sign | specials[rng() % std::size(specials)];
    }
  }
}
// The bits of +-2^k for a random normal exponent (exact scale factors).
inline uint32_t power_of_two_f32_bits(std::mt19937& rng) { return (rng() & 0x80000000u) | (rng() % 254 + 1) << 23; }

}  // namespace nxvk::test
