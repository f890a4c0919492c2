// The generic data-movement kernel behind the shape ops (broadcast, transpose, pad, reverse,
// slice, put_slice, concatenate, stack): every output element reads one element of one source,
// found by per-axis affine index maps. Elements are moved as bits (gen::bits_type), so NaN
// payloads and -0.0 survive.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "nxvk/tensor.hpp"

namespace nxvk::gather {

// How output coordinate c of one axis maps to a source coordinate:
//   p = c * a + b (+ sign * dyn[dyn] when dyn >= 0: a start index computed on the device);
//   with q > 1, p must be a multiple of q (interior padding) and p /= q;
//   the source is "inside" when 0 <= p < bound; its element index gains p * stride.
struct AxisMap {
  int64_t stride = 0;
  int64_t a = 1;
  int64_t b = 0;
  int64_t q = 1;
  int64_t bound = std::numeric_limits<int32_t>::max();
  int32_t dyn = -1;
  int32_t dyn_sign = 1;
};

struct Source {
  Tensor tensor;
  std::vector<AxisMap> axes;  // one per output axis
  int64_t base = 0;           // element offset added to the index
};

// out[i] = the element of the first source whose maps are all inside at i; the last source is
// read unconditionally (it must be inside everywhere, e.g. a scalar pad value or the tensor
// put_slice writes into). `dyn` (optional) holds u32 start indices read by maps with dyn >= 0.
// All sources must have out_type's element size.
Tensor run(const std::string& op, DType out_type, const Shape& out_shape,
           const std::vector<Source>& sources, const Tensor* dyn = nullptr);

// A u32 buffer of clamped start indices: dyn[k] = clamp(starts[k], 0, dims[k] - lengths[k]),
// computed on the device from scalar integer tensors of any integer type.
Tensor clamped_starts(const std::string& op, const std::vector<Tensor>& starts, const Shape& dims,
                      const std::vector<int64_t>& lengths);

// Identity maps for a source of `shape` read at the same coordinates as the output.
std::vector<AxisMap> identity_maps(const Shape& shape);

// Returns operands converted to out_type where their type differs (Nx passes mixed types to pad,
// put_slice, concatenate and stack).
std::vector<Tensor> to_out_type(const std::string& op, DType out_type, const std::vector<Tensor>& xs);

}  // namespace nxvk::gather
