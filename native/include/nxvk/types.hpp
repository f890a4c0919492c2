// The type table: one row per Nx type. Storage size, kind, the GLSL type a value is held in, the
// float format's conversion helpers and the capabilities a type needs all come from here.
// Complex types are rows like any other (two floats per element).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "nxvk/capabilities.hpp"

namespace nxvk {

// X(enum, Nx name, Nx kind atom, kind, bits per element, GLSL value type, device needs, float format)
//
// - bits < 32: stored packed in 32-bit words, little-endian bytes; types below 8 bits are packed
//   as Nx.BinaryBackend's bitstrings are (the first element in the most significant bits of its
//   byte), so from_binary/to_binary are plain byte copies;
// - float format: the GLSL helpers nx_<fmt>_to_float(uint), nx_float_to_<fmt>(float) and
//   nx_double_to_<fmt>(double) convert packed floats (ops/codegen.cpp); "" for f32/f64.
// New rows go at the end: the enum values of existing types do not move.
#define NXVK_TYPES(X)                                                          \
  X(U8, "u8", "u", Unsigned, 8, "uint", None, "")                              \
  X(U16, "u16", "u", Unsigned, 16, "uint", None, "")                           \
  X(U32, "u32", "u", Unsigned, 32, "uint", None, "")                           \
  X(U64, "u64", "u", Unsigned, 64, "uint64_t", Int64, "")                      \
  X(S8, "s8", "s", Signed, 8, "int", None, "")                                 \
  X(S16, "s16", "s", Signed, 16, "int", None, "")                              \
  X(S32, "s32", "s", Signed, 32, "int", None, "")                              \
  X(S64, "s64", "s", Signed, 64, "int64_t", Int64, "")                         \
  X(F16, "f16", "f", Float, 16, "float", None, "half")                         \
  X(BF16, "bf16", "bf", Float, 16, "float", None, "bf16")                      \
  X(F32, "f32", "f", Float, 32, "float", None, "")                             \
  X(F64, "f64", "f", Float, 64, "double", Float64, "")                         \
  X(C64, "c64", "c", Complex, 64, "vec2", None, "")                            \
  X(C128, "c128", "c", Complex, 128, "dvec2", Float64, "")                     \
  X(U2, "u2", "u", Unsigned, 2, "uint", None, "")                              \
  X(U4, "u4", "u", Unsigned, 4, "uint", None, "")                              \
  X(S2, "s2", "s", Signed, 2, "int", None, "")                                 \
  X(S4, "s4", "s", Signed, 4, "int", None, "")                                 \
  X(F8, "f8", "f", Float, 8, "float", None, "f8")             /* E5M2 */       \
  X(F8E4M3FN, "f8_e4m3fn", "f8_e4m3fn", Float, 8, "float", None, "f8e4m3fn")

enum class DType : uint8_t {
#define NXVK_TYPE_ENUM(e, name, nx_kind, kind, bits, glsl, needs, fmt) e,
  NXVK_TYPES(NXVK_TYPE_ENUM)
#undef NXVK_TYPE_ENUM
};

enum class TypeKind : uint8_t { Unsigned, Signed, Float, Complex };
// The device feature a type needs beyond Vulkan 1.2 core.
enum class TypeNeeds : uint8_t { None, Int64, Float64 };

struct TypeInfo {
  DType dtype;
  const char* name;     // Nx spelling: "u8", "f32", "bf16", "f8_e4m3fn", ...
  const char* nx_kind;  // the atom of Nx's {kind, bits} tuple: "u", "f", "bf", "f8_e4m3fn", ...
  TypeKind kind;
  uint32_t bits;        // bits per element (a complex element is two floats)
  const char* glsl;     // GLSL type a value is held in by kernels
  TypeNeeds needs;
  const char* float_format;  // packed float formats: the GLSL helper suffix, else ""

  // Bytes per element; 0 for the sub-byte types (use storage_bytes for a count of elements).
  uint32_t bytes() const { return bits / 8; }
  // Bytes that n elements occupy (sub-byte types rounded up to whole bytes).
  uint64_t storage_bytes(uint64_t n) const { return (n * bits + 7) / 8; }
  bool packed() const { return bits < 32; }  // several elements per 32-bit word
  bool is_float() const { return kind == TypeKind::Float; }
  bool is_integer() const { return kind == TypeKind::Unsigned || kind == TypeKind::Signed; }
  bool is_signed() const { return kind == TypeKind::Signed; }
  bool is_complex() const { return kind == TypeKind::Complex; }
};

const TypeInfo& type_info(DType type);
inline const char* type_name(DType type) { return type_info(type).name; }
inline uint32_t type_bytes(DType type) { return type_info(type).bytes(); }
inline uint64_t storage_bytes(DType type, uint64_t n) { return type_info(type).storage_bytes(n); }
std::optional<DType> parse_type(std::string_view name);  // "f32" -> F32
// Nx's {kind, bits}: ("f", 32) -> F32, ("f8_e4m3fn", 8) -> F8E4M3FN.
std::optional<DType> parse_nx_type(std::string_view nx_kind, uint32_t bits);
// The unsigned type of `bits` bits (U2 ... U64), if there is one.
std::optional<DType> unsigned_type_of_bits(uint32_t bits);

// Whether the device can hold and compute `type` with the exact bits Nx defines. Types of fewer
// than 32 bits are stored packed in 32-bit words, so they need no 8/16-bit storage feature;
// 64-bit integers need int64, f64 and c128 need float64.
bool type_supported(const Capabilities& caps, DType type);
// Throws ErrorKind::Unsupported "<op>: unsupported on this device: <type>" when not supported.
void require_type(const Capabilities& caps, DType type, const std::string& op);

}  // namespace nxvk
