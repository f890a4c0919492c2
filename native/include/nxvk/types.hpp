// The type table: one row per Nx type. Storage size, kind, GLSL types and the capabilities a type
// needs all come from here. Complex types are rows like any other (two floats per element).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "nxvk/capabilities.hpp"

namespace nxvk {

// X(enum, Nx name, kind, bits per element)
#define NXVK_TYPES(X)             \
  X(U8, "u8", Unsigned, 8)        \
  X(U16, "u16", Unsigned, 16)     \
  X(U32, "u32", Unsigned, 32)     \
  X(U64, "u64", Unsigned, 64)     \
  X(S8, "s8", Signed, 8)          \
  X(S16, "s16", Signed, 16)       \
  X(S32, "s32", Signed, 32)       \
  X(S64, "s64", Signed, 64)       \
  X(F16, "f16", Float, 16)        \
  X(BF16, "bf16", Float, 16)      \
  X(F32, "f32", Float, 32)        \
  X(F64, "f64", Float, 64)        \
  X(C64, "c64", Complex, 64)      \
  X(C128, "c128", Complex, 128)

enum class DType : uint8_t {
#define NXVK_TYPE_ENUM(e, name, kind, bits) e,
  NXVK_TYPES(NXVK_TYPE_ENUM)
#undef NXVK_TYPE_ENUM
};

enum class TypeKind : uint8_t { Unsigned, Signed, Float, Complex };

struct TypeInfo {
  DType dtype;
  const char* name;  // Nx spelling: "u8", "f32", "bf16", ...
  TypeKind kind;
  uint32_t bits;     // bits per element (a complex element is two floats)
  uint32_t bytes() const { return bits / 8; }
  bool is_float() const { return kind == TypeKind::Float; }
  bool is_integer() const { return kind == TypeKind::Unsigned || kind == TypeKind::Signed; }
  bool is_signed() const { return kind == TypeKind::Signed; }
  bool is_complex() const { return kind == TypeKind::Complex; }
};

const TypeInfo& type_info(DType type);
inline const char* type_name(DType type) { return type_info(type).name; }
inline uint32_t type_bytes(DType type) { return type_info(type).bytes(); }
std::optional<DType> parse_type(std::string_view name);  // "f32" -> F32

// Whether the device can hold and compute `type` with the exact bits Nx defines. 8- and 16-bit
// types are stored packed in 32-bit words, so they need no 8/16-bit storage feature; 64-bit
// integers need int64, f64 and c128 need float64.
bool type_supported(const Capabilities& caps, DType type);
// Throws ErrorKind::Unsupported "<op>: unsupported on this device: <type>" when not supported.
void require_type(const Capabilities& caps, DType type, const std::string& op);

}  // namespace nxvk
