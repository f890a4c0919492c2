// The 8-bit floats and the sub-byte integers as Nx.BinaryBackend reads and writes them, for both
// CPU references (ref/elementwise.cpp and ref/host_tensor.cpp). Written after Nx 0.13's
// Nx.Floating (load_f8, dump_f8, load_f8_e4m3fn, dump_f8_e4m3fn) and Nx.Shared, clause by clause,
// independently of the kernels' integer code.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "nxvk/types.hpp"

namespace nxvk::ref {

// load_f8: 0xfc -inf, 0x7c +inf, exponent 31 with a mantissa NaN, +-0, else
// 2^(exp - 15) * (1 + m/4) -- also for exponent 0 (Nx reads no subnormals).
inline double load_f8(uint32_t b) {
  if (b == 0xfc) return -INFINITY;
  if (b == 0x7c) return INFINITY;
  const int sign = (b >> 7) & 1, e = (b >> 2) & 31, m = b & 3;
  if (e == 31) return NAN;
  if ((b & 0x7f) == 0) return sign ? -0.0 : 0.0;
  const double f = std::pow(2.0, e - 15) * (1 + m / 4.0);
  return sign ? -f : f;
}

// dump_f8: the upper byte of <<x::float-16>> (Erlang rounds to nearest even, overflow infinity);
// :nan 0x7e.
inline uint32_t dump_f8(double x) {
  if (std::isnan(x)) return 0x7e;
  const _Float16 h = static_cast<_Float16>(x);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits >> 8;
}

// load_f8_e4m3fn: S.1111.111 NaN; exponent 0: 2^-6 * m/8; else 2^(exp - 7) * (1 + m/8).
inline double load_f8e4m3fn(uint32_t b) {
  const int sign = (b >> 7) & 1, e = (b >> 3) & 15, m = b & 7;
  if (e == 15 && m == 7) return NAN;
  const double f = e == 0 ? std::pow(2.0, -6) * (m / 8.0) : std::pow(2.0, e - 7) * (1 + m / 8.0);
  return sign ? -f : f;
}

// dump_f8_e4m3fn, as written in Nx (libm's log2, Kernel.round = half away from zero).
inline uint32_t dump_f8e4m3fn(double x) {
  if (std::isnan(x)) return 0x7f;
  if (x == 0) return std::signbit(x) ? 0x80 : 0x00;
  const double clamped = std::max(-448.0, std::min(448.0, x));
  const uint32_t sign = clamped < 0 ? 1 : 0;
  const double abs_val = std::fabs(clamped);
  const double exp_unbiased = std::floor(std::log2(abs_val));
  const double exp = exp_unbiased + 7;
  if (exp <= 0) {
    const double mantissa = std::round(abs_val / std::pow(2.0, -6) * 8);
    return sign << 7 | static_cast<uint32_t>(std::min(7.0, mantissa));
  }
  if (exp > 15) return sign << 7 | 15 << 3 | 6;
  const double significand = abs_val / std::pow(2.0, exp_unbiased);
  const double mantissa = std::max(0.0, std::min(7.0, std::round((significand - 1.0) * 8)));
  if (exp == 15 && mantissa >= 7) return sign << 7 | 15 << 3 | 6;
  return sign << 7 | static_cast<uint32_t>(exp) << 3 | static_cast<uint32_t>(mantissa);
}

// Raw bits of element i of a row-major array of `bits`-bit elements (bits <= 64). Below 8 bits
// the first element of a byte is in its most significant bits (Erlang bitstrings).
inline uint64_t get_element_bits(const uint8_t* data, uint32_t bits, size_t i) {
  if (bits < 8) {
    const size_t bit = i * bits;
    return (data[bit / 8] >> (8 - bits - bit % 8)) & ((1u << bits) - 1);
  }
  uint64_t v = 0;
  std::memcpy(&v, data + i * (bits / 8), bits / 8);
  return v;
}
inline void set_element_bits(uint8_t* data, uint32_t bits, size_t i, uint64_t v) {
  if (bits < 8) {
    const size_t bit = i * bits;
    const uint32_t shift = 8 - bits - bit % 8, mask = ((1u << bits) - 1) << shift;
    data[bit / 8] = static_cast<uint8_t>((data[bit / 8] & ~mask) |
                                         ((static_cast<uint32_t>(v) << shift) & mask));
    return;
  }
  std::memcpy(data + i * (bits / 8), &v, bits / 8);
}

}  // namespace nxvk::ref
