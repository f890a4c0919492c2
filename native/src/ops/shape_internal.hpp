// Fast paths of the shape ops, tried before the generic gather kernel.
#pragma once

#include <optional>
#include <vector>

#include "nxvk/tensor.hpp"

namespace nxvk::shape_internal {

// Transposes whose permutation, after merging axes that stay adjacent, swaps the last two of
// [batch, M, N]: a tiled kernel through shared memory, so reads and writes are both coalesced.
// Returns nullopt when the permutation or the type (packed 8/16-bit) does not fit.
std::optional<Tensor> tiled_transpose(const Tensor& x, const std::vector<int64_t>& perm, const Shape& out_shape);

}  // namespace nxvk::shape_internal
