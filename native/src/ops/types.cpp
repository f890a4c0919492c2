#include <algorithm>

#include "nxvk/tensor.hpp"
#include "nxvk/types.hpp"

namespace nxvk {
namespace {
const TypeInfo kTypes[] = {
#define NXVK_TYPE_ROW(e, name, nx_kind, kind, bits, glsl, needs, fmt) \
  {DType::e, name, nx_kind, TypeKind::kind, bits, glsl, TypeNeeds::needs, fmt},
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

std::optional<DType> parse_nx_type(std::string_view nx_kind, uint32_t bits) {
  for (const auto& t : kTypes)
    if (nx_kind == t.nx_kind && bits == t.bits) return t.dtype;
  return std::nullopt;
}

std::optional<DType> unsigned_type_of_bits(uint32_t bits) {
  for (const auto& t : kTypes)
    if (t.kind == TypeKind::Unsigned && t.bits == bits) return t.dtype;
  return std::nullopt;
}

bool type_supported(const Capabilities& caps, DType type) {
  switch (type_info(type).needs) {
    case TypeNeeds::Int64: return caps.int64;
    case TypeNeeds::Float64: return caps.float64;
    case TypeNeeds::None: return true;
  }
  return false;
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
  // Rounded up to whole 32-bit words: kernels store elements of fewer than 32 bits packed in words.
  t.buffer = device.allocate(std::max<uint64_t>(4, (t.bytes() + 3) / 4 * 4), op.c_str());
  return t;
}

}  // namespace nxvk
