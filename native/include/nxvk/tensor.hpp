// A tensor on a device: a dense row-major buffer with a shape and a type. Tensors are immutable
// once made (Nx semantics), so reshape can share the buffer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nxvk/runtime.hpp"
#include "nxvk/types.hpp"

namespace nxvk {

using Shape = std::vector<int64_t>;

int64_t shape_size(const Shape& shape);  // product of dimensions (1 for a scalar)
std::string shape_string(const Shape& shape);  // "{2, 3}"

struct Tensor {
  std::shared_ptr<Buffer> buffer;
  DType type = DType::F32;
  Shape shape;

  int64_t size() const { return shape_size(shape); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  uint64_t bytes() const { return storage_bytes(type, static_cast<uint64_t>(size())); }
  Device& device() const { return buffer->device(); }
};

// A new, uninitialised tensor (checks the type against the device and the size against limits).
Tensor empty_tensor(Device& device, DType type, const Shape& shape, const std::string& op);

}  // namespace nxvk
