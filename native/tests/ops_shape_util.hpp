// Helpers shared by the shape, reduction and cumulative op tests: host <-> device tensors,
// random data per type, poisoned allocator caches and bitwise comparison.
#pragma once

#include <cmath>
#include <cstring>
#include <random>

#include "nxvk/ops.hpp"
#include "nxvk_test.hpp"
#include "ref/host_tensor.hpp"

namespace nxvk::test {

// Every type (sub-byte and complex ones included: shape ops move bits).
inline std::vector<DType> all_types() {
  auto t = real_types();
  for (DType s : sub_byte_types()) t.push_back(s);
  t.push_back(DType::C64);
  t.push_back(DType::C128);
  return t;
}

// Leaves freed, poisoned buffers of about `bytes` in the device's cache so that an op's next
// output allocation is likely to start out as 0xdeadbeef words, not as an older correct result.
inline void poison_cache(Device& dev, uint64_t bytes) {
  bytes = std::max<uint64_t>(4, (bytes + 3) / 4 * 4);
  auto b = dev.allocate(bytes, "poison");
  dev.fill(*b, 0, bytes, kPoison);
  dev.sync();
}

inline Tensor upload(Device& dev, const ref::HostTensor& h) {
  return from_binary(dev, h.type, h.shape, std::as_bytes(std::span<const uint8_t>(h.bytes)));
}

inline ref::HostTensor download(const Tensor& t) {
  ref::HostTensor h = ref::make(t.type, t.shape);
  auto b = to_binary(t);
  std::memcpy(h.bytes.data(), b.data(), h.bytes.size());
  return h;
}

// Random element bits (every pattern: NaN payloads, -0.0, inf, subnormals) or, with `values`,
// moderate values (floats in [-4, 4) with a few of 0, -0.0, inf and canonical NaN; small ints
// mixed with extremes).
inline ref::HostTensor random_tensor(std::mt19937& rng, DType type, const Shape& shape, bool values = false) {
  ref::HostTensor h = ref::make(type, shape);
  for (auto& b : h.bytes) b = static_cast<uint8_t>(rng());
  // Sub-byte types: the padding bits after the last element are zero, as to_binary returns them.
  if (const uint64_t used = static_cast<uint64_t>(h.size()) * type_info(type).bits % 8)
    h.bytes.back() &= static_cast<uint8_t>(0xff << (8 - used));
  if (!values) return h;
  const TypeInfo& ti = type_info(type);
  std::uniform_real_distribution<double> u(-4, 4);
  for (int64_t i = 0; i < h.size(); ++i) {
    const uint32_t r = rng() % 64;
    if (ti.is_float()) {
      double v = u(rng);
      if (r == 0) v = 0.0;
      else if (r == 1) v = -0.0;
      else if (r == 2) v = (rng() & 1) ? INFINITY : -INFINITY;
      else if (r == 3) v = NAN;
      else if (r < 12) v = std::round(v);  // ties and repeated values
      ref::set(h, i, ref::of_double(v));
    } else if (r < 4) {
      ref::set_bits(h, i, rng() % 2 ? ~0ull : (ti.is_signed() ? 1ull << (ti.bits - 1) : 0));  // extremes
    } else {
      ref::set(h, i, ref::of_int(static_cast<int64_t>(rng() % 9) - 4));
    }
  }
  return h;
}

inline std::string describe(const ref::HostTensor& h, int64_t i) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(ref::get_bits(h, i)));
  return buf;
}

// Bitwise equality; reports the first mismatch.
inline ::testing::AssertionResult same_bits(const ref::HostTensor& got, const ref::HostTensor& want) {
  if (got.type != want.type || got.shape != want.shape)
    return ::testing::AssertionFailure() << "type/shape " << type_name(got.type) << shape_string(got.shape) << " vs "
                                         << type_name(want.type) << shape_string(want.shape);
  for (int64_t i = 0; i < got.size(); ++i)
    if (!ref::same_elem(got, want, i))
      return ::testing::AssertionFailure() << "element " << i << " of " << got.size() << ": got " << describe(got, i)
                                           << ", want " << describe(want, i);
  return ::testing::AssertionSuccess();
}

inline bool device_has(Device& dev, DType t) { return type_supported(dev.caps(), t); }

}  // namespace nxvk::test
