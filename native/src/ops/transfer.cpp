// from_binary / to_binary: bytes in and out of device tensors.
#include <algorithm>

#include "nxvk/ops.hpp"

namespace nxvk {

Tensor from_binary(Device& device, DType type, const Shape& shape, std::span<const std::byte> data) {
  Tensor t = empty_tensor(device, type, shape, "from_binary");
  if (data.size() != t.bytes())
    fail(ErrorKind::InvalidArgument, "from_binary: " + std::to_string(data.size()) + " bytes given for a " +
                                         type_name(type) + shape_string(shape) + " tensor of " +
                                         std::to_string(t.bytes()) + " bytes");
  device.write(*t.buffer, 0, data.data(), data.size());
  return t;
}

std::vector<std::byte> to_binary(const Tensor& tensor, int64_t limit) {
  int64_t elements = limit < 0 ? tensor.size() : std::min(limit, tensor.size());
  std::vector<std::byte> out(storage_bytes(tensor.type, static_cast<uint64_t>(elements)));
  tensor.device().read(*tensor.buffer, 0, out.data(), out.size());
  // Sub-byte types: the bits past the last element (the low bits of the last byte, as Nx packs
  // them) are whatever the buffer held; they are returned as zeros.
  const uint64_t used = static_cast<uint64_t>(elements) * type_info(tensor.type).bits % 8;
  if (used) out.back() &= std::byte(0xff << (8 - used));
  return out;
}

}  // namespace nxvk
