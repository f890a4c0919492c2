// Host tensors for the CPU references of the shape, reduction and cumulative ops: row-major
// bytes plus (type, shape), element values read and written by Nx's rules (f16 round to nearest
// even, bf16 as the f32 value truncated, NaN written canonical).
#pragma once

#include <cstdint>
#include <vector>

#include "nxvk/tensor.hpp"

namespace nxvk::ref {

struct HostTensor {
  DType type = DType::F32;
  Shape shape;
  std::vector<uint8_t> bytes;
  int64_t size() const { return shape_size(shape); }
  uint32_t esize() const { return type_bytes(type); }  // 0 for the sub-byte types
};

HostTensor make(DType type, const Shape& shape);
// Element bits (types of up to 8 bytes); copy_elem moves any element (complex included).
uint64_t get_bits(const HostTensor& t, int64_t i);
void copy_elem(HostTensor& dst, int64_t di, const HostTensor& src, int64_t si);
bool same_elem(const HostTensor& a, const HostTensor& b, int64_t i);
void set_bits(HostTensor& t, int64_t i, uint64_t bits);

// A value of any real type: integers exactly, floats as double.
struct Value {
  bool is_float = false;
  bool is_signed = false;
  double f = 0;
  int64_t s = 0;   // signed view of integers
  uint64_t u = 0;  // unsigned view (two's complement of s for signed types)
};
Value get(const HostTensor& t, int64_t i);
// Writes `v` rounded/wrapped to t.type (floats: one rounding from double; ints: modulo 2^bits).
void set(HostTensor& t, int64_t i, const Value& v);
Value of_double(double d);
Value of_int(int64_t s);
Value of_uint(uint64_t u);

uint16_t double_to_half(double d);
double half_to_double(uint16_t h);

std::vector<int64_t> strides(const Shape& shape);
// Multi-index of flat index i.
std::vector<int64_t> coords(const Shape& shape, int64_t i);

}  // namespace nxvk::ref
