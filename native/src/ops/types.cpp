#include <algorithm>

#include "nxvk/tensor.hpp"
#include "nxvk/types.hpp"

namespace nxvk {
namespace {
const TypeInfo kTypes[] = {
#define NXVK_TYPE_ROW(e, name, kind, bits) {DType::e, name, TypeKind::kind, bits},
    NXVK_TYPES(NXVK_TYPE_ROW)
#undef NXVK_TYPE_ROW
};
}  // namespace

const TypeInfo& type_info(DType type) { return kTypes[static_cast<int>(type)]; }

std::optional<DType> parse_type(std::string_view name) {
  for (const auto& t : kTypes)
    if (name == t.name) return t.dtype;
  return std::nullopt;
}

bool type_supported(const Capabilities& caps, DType type) {
  switch (type) {
    case DType::U64:
    case DType::S64: return caps.int64;
    case DType::F64:
    case DType::C128: return caps.float64;
    default: return true;
  }
}

void require_type(const Capabilities& caps, DType type, const std::string& op) {
  if (!type_supported(caps, type))
    fail(ErrorKind::Unsupported, op + ": unsupported on this device: " + type_name(type));
}

int64_t shape_size(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_string(const Shape& shape) {
  std::string s = "{";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "}";
}

Tensor empty_tensor(Device& device, DType type, const Shape& shape, const std::string& op) {
  for (int64_t d : shape)
    if (d < 0) fail(ErrorKind::InvalidArgument, op + ": negative dimension in shape " + shape_string(shape));
  require_type(device.caps(), type, op);
  Tensor t{nullptr, type, shape};
  // Rounded up to whole 32-bit words: kernels store 8- and 16-bit elements packed in words.
  t.buffer = device.allocate(std::max<uint64_t>(4, (t.bytes() + 3) / 4 * 4), op.c_str());
  return t;
}

}  // namespace nxvk
