// CPU reference of the reductions in Nx.BinaryBackend semantics: a sequential scan per output in
// row-major order of the reduced axes (sums and products of floats in double, rounded once).
#pragma once

#include <optional>

#include "nxvk/ops.hpp"
#include "ref/host_tensor.hpp"

namespace nxvk::ref {

// `abs_sum` (optional) receives sum |x| per output (the error scale of a float sum).
HostTensor reduce(ReduceOp op, const HostTensor& x, const std::vector<int64_t>& axes, bool keep_axes,
                  DType out_type, std::vector<double>* abs_sum = nullptr);
HostTensor arg_reduce(ArgReduceOp op, const HostTensor& x, std::optional<int64_t> axis, bool keep_axis,
                      TieBreak tie_break, DType out_type);

}  // namespace nxvk::ref
