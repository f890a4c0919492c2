// CPU reference of the shape ops in Nx.BinaryBackend semantics (element bits moved; operands of
// another type converted with ref::set's rules, which match Nx for the exact conversions tested).
#pragma once

#include "nxvk/ops.hpp"
#include "ref/host_tensor.hpp"

namespace nxvk::ref {

HostTensor convert(const HostTensor& x, DType type);
HostTensor broadcast(const HostTensor& x, const Shape& shape, const std::vector<int64_t>& axes);
HostTensor transpose(const HostTensor& x, const std::vector<int64_t>& axes);
HostTensor pad(const HostTensor& x, const HostTensor& value, const std::vector<PadConfig>& config, DType out_type);
HostTensor reverse(const HostTensor& x, const std::vector<int64_t>& axes);
HostTensor slice(const HostTensor& x, std::vector<int64_t> start, const std::vector<int64_t>& lengths,
                 const std::vector<int64_t>& strides);
HostTensor put_slice(const HostTensor& x, std::vector<int64_t> start, const HostTensor& update, DType out_type);
HostTensor concatenate(const std::vector<HostTensor>& xs, int64_t axis, DType out_type);
HostTensor stack(const std::vector<HostTensor>& xs, int64_t axis, DType out_type);

}  // namespace nxvk::ref
