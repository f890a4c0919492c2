// CPU reference of the cumulative ops: Nx 0.13's default implementation (Nx.associative_scan,
// the work-efficient tree, with each combination rounded to the tensor type as Nx.add etc. do).
#pragma once

#include "nxvk/ops.hpp"
#include "ref/host_tensor.hpp"

namespace nxvk::ref {

HostTensor cumulative(CumulativeOp op, const HostTensor& x, int64_t axis, bool reverse);

}  // namespace nxvk::ref
