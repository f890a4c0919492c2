// CPU reference of the elementwise op family (casts, unary, binary, select, clip, creation) in
// Nx.BinaryBackend's semantics, on host bytes. Integers are exact (__int128), floats are doubles,
// f16 via _Float16 and bf16 as the f32 value truncated, as Nx writes them; f8, f8_e4m3fn and the
// sub-byte integers by ref/float8.hpp. Where BinaryBackend raises, the documented GPU values are
// used (see src/ops/elementwise_expr.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "nxvk/ops.hpp"

namespace nxvk::ref {

using Bytes = std::vector<std::byte>;

// A value as Nx.BinaryBackend holds it: an exact integer or a double.
struct Value {
  bool is_float = false;
  __int128 i = 0;
  double f = 0;
};

Value read_value(DType type, const Bytes& data, size_t index);
void write_value(DType type, const Value& v, Bytes& data, size_t index);  // Nx's conversion rules

// Element counts default to all the bytes hold; give them for the sub-byte types, whose last
// byte may hold padding bits.
constexpr size_t kAllElements = ~size_t(0);
size_t element_count(DType type, const Bytes& x, size_t n = kAllElements);

Bytes as_type(DType from, const Bytes& x, DType to, size_t n = kAllElements);
Bytes unary(UnaryOp op, DType type, const Bytes& x, DType out, size_t n = kAllElements);
Bytes binary(BinaryOp op, DType ta, const Bytes& a, const Shape& sa, DType tb, const Bytes& b, const Shape& sb,
             DType out, const Shape& out_shape);
Bytes select(DType tp, const Bytes& p, const Shape& sp, DType tt, const Bytes& t, const Shape& st, DType tf,
             const Bytes& f, const Shape& sf, DType out, const Shape& out_shape);
Bytes clip(DType tx, const Bytes& x, DType tmin, const Bytes& min, DType tmax, const Bytes& max, DType out,
           size_t n = kAllElements);
Bytes constant(DType type, const Shape& shape, const Scalar& value);
Bytes iota(DType type, const Shape& shape, std::optional<int64_t> axis);
Bytes eye(DType type, const Shape& shape);

// Element index in an operand of shape `s` for flat output index `i` (right-aligned broadcast).
size_t broadcast_index(const Shape& out, const Shape& s, size_t i);

}  // namespace nxvk::ref
