// Helpers for the elementwise op tests: random values of every type with edge cases mixed in,
// tensors from host bytes, poisoned outputs, comparison against the CPU reference.
#pragma once

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "nxvk/ops.hpp"
#include "nxvk_test.hpp"
#include "ref/elementwise.hpp"

namespace nxvk::test {

inline bool is_float_type(DType t) { return type_info(t).is_float(); }

// Random elements of `type`: random bits (so NaN payloads, subnormals, extreme ints) or, with
// `moderate`, floats in [-lo, hi]; one element in four is an edge value.
inline ref::Bytes random_data(DType type, size_t n, std::mt19937& rng, bool moderate = false, double lo = -4,
                              double hi = 4) {
  const size_t b = type_bytes(type);  // 0 for the sub-byte types
  ref::Bytes out(storage_bytes(type, n));
  std::uniform_int_distribution<uint32_t> bits;
  for (auto& x : out) x = std::byte(bits(rng) & 0xff);
  std::uniform_real_distribution<double> real(lo, hi);
  const double edges_f[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 1e-45, -1e-310,
                            65504.0, 65520.0, 3.4e38, 1e300, 16777217.0};
  const uint64_t edges_i[] = {0, 1, ~0ull, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0x7fffffff, 0x80000000ull,
                              0x7fffffffffffffffull, 0x8000000000000000ull, 2, 3, 7};
  for (size_t i = 0; i < n; ++i) {
    const bool edge = bits(rng) % 4 == 0;
    if (is_float_type(type) && (moderate || edge)) {
      ref::Value v{true, 0, edge ? edges_f[bits(rng) % std::size(edges_f)] : real(rng)};
      if (moderate && !edge) v.f = real(rng);
      ref::write_value(type, v, out, i);
    } else if (!is_float_type(type) && edge) {
      uint64_t e = edges_i[bits(rng) % std::size(edges_i)];
      if (b == 0) ref::write_value(type, ref::Value{false, static_cast<__int128>(e), 0}, out, i);
      else std::memcpy(out.data() + i * b, &e, b);
    }
  }
  return out;
}

inline Tensor upload(Device& d, DType t, const Shape& s, const ref::Bytes& data) { return from_binary(d, t, s, data); }

// Every 16-bit pattern once, in order: each f16 or bf16 value (and NaN payloads).
inline ref::Bytes every_16_bit_value() {
  ref::Bytes every(2 * 65536);
  for (uint32_t h = 0; h < 65536; ++h) std::memcpy(&every[2 * h], &h, 2);
  return every;
}

// The next allocation of `bytes` most likely reuses this poisoned buffer (caching allocator), so
// elements a kernel fails to write show up as 0xdeadbeef rather than as stale results.
inline void poison_next(Device& d, uint64_t bytes) {
  if (bytes == 0) return;
  auto b = poisoned(d, std::max<uint64_t>(4, (bytes + 3) / 4 * 4));
  d.sync();
  b.reset();
}

// ulp distance of doubles / of the output type's values.
inline double value_at(DType t, const ref::Bytes& d, size_t i) { return ref::read_value(t, d, i).f; }

// Compares element by element; float types within `tol_ulps` of the output type (NaN == NaN,
// NaN bits checked only when exact). Returns a description of the first mismatch, or "".
inline std::string compare_bytes(DType t, const ref::Bytes& got, const ref::Bytes& want, double tol_ulps = 0) {
  if (got.size() != want.size()) return "size " + std::to_string(got.size()) + " != " + std::to_string(want.size());
  if (type_info(t).bits < 8) {  // sub-byte types: exact, byte by byte (padding bits are zero)
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != want[i])
        return "byte " + std::to_string(i) + " of " + std::to_string(got.size()) + ": got " +
               std::to_string(int(got[i])) + " want " + std::to_string(int(want[i]));
    return "";
  }
  const size_t b = type_bytes(t), n = got.size() / b;
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(got.data() + i * b, want.data() + i * b, b) == 0) continue;
    if (tol_ulps > 0 && is_float_type(t)) {
      double g = value_at(t, got, i), w = value_at(t, want, i);
      if (std::isnan(g) && std::isnan(w)) continue;
      if (std::isfinite(g) && std::isfinite(w)) {
        const int mant = t == DType::F64 ? 52 : t == DType::F32 ? 23 : t == DType::F16 ? 10 : t == DType::F8 ? 2
                         : t == DType::F8E4M3FN ? 3 : 7;
        const int min_exp = t == DType::F16 || t == DType::F8 ? -14 : t == DType::F8E4M3FN ? -6 : -126;
        const double ulp = std::ldexp(1.0, std::max(std::ilogb(w == 0 ? 1e-30 : w), min_exp) - mant);
        if (std::fabs(g - w) <= tol_ulps * ulp) continue;
      }
    }
    uint64_t gb = 0, wb = 0;
    std::memcpy(&gb, got.data() + i * b, b);
    std::memcpy(&wb, want.data() + i * b, b);
    char buf[160];
    std::snprintf(buf, sizeof buf, "element %zu of %zu: got 0x%llx want 0x%llx", i, n, (unsigned long long)gb,
                  (unsigned long long)wb);
    return buf;
  }
  return "";
}

}  // namespace nxvk::test
