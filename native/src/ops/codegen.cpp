#include "ops/codegen.hpp"

#include <algorithm>

namespace nxvk::gen {
namespace {

// Float conversions done in integer code so every device rounds the same way.
constexpr const char* kFloatHelpers = R"GLSL(
float nx_half_to_float(uint h) {
  uint sign = (h & 0x8000u) << 16;
  uint e = (h >> 10) & 0x1fu;
  uint m = h & 0x3ffu;
  if (e == 0x1fu) return uintBitsToFloat(sign | 0x7f800000u | (m << 13));
  if (e == 0u) {
    // Subnormal half: m * 2^-24, exact in f32.
    float f = float(m) * 5.9604644775390625e-8;
    return (sign != 0u) ? -f : f;
  }
  return uintBitsToFloat(sign | ((e + 112u) << 23) | (m << 13));
}
float nx_bf16_to_float(uint b) { return uintBitsToFloat(b << 16); }


uint nx_float_to_half(float f) {
  uint x = floatBitsToUint(f);
  uint sign = (x >> 16) & 0x8000u;
  uint a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return 0x7e00u;               // NaN: canonical
  if (a >= 0x477ff000u) return sign | 0x7c00u;       // rounds to infinity
  if (a < 0x38800000u) {                             // below the smallest normal half
    if (a <= 0x33000000u) return sign;               // <= 2^-25 rounds to zero (tie to even)
    uint e = a >> 23;
    uint m = (a & 0x7fffffu) | 0x800000u;
    uint shift = 126u - e;
    uint k = m >> shift;
    uint rem = m & ((1u << shift) - 1u);
    uint halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (k & 1u) != 0u)) k += 1u;
    return sign | k;
  }
  uint k = (a - 0x38000000u) >> 13;
  uint rem = a & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (k & 1u) != 0u)) k += 1u;
  return sign | k;
}
// Nx.BinaryBackend writes bf16 as the upper half of the binary32 value (truncation).
uint nx_float_to_bf16(float f) {
  if (isnan(f)) return 0x7fc0u;
  return floatBitsToUint(f) >> 16;
}
)GLSL";

constexpr const char* kDoubleHelpers = R"GLSL(
// Round-to-nearest-even of a double into a binary format with `mbits` stored mantissa bits and
// `ebits` exponent bits; returns the format's bits without sign, or 0xffffffff for NaN.
uint nx_double_round_bits(double d, uint mbits, uint ebits) {
  uvec2 u = unpackDouble2x32(d);
  uint hi = u.y & 0x7fffffffu;
  uint e = hi >> 20;
  uint maxe = (1u << ebits) - 1u;
  int bias = int((1u << (ebits - 1u)) - 1u);
  if (e == 0x7ffu) return ((hi & 0xfffffu) != 0u || u.x != 0u) ? 0xffffffffu : (maxe << mbits);
  if (e == 0u) return 0u;  // double subnormals are far below every narrower format's range
  int fe = int(e) - 1023 + bias;         // biased exponent in the target format
  if (fe >= int(maxe)) return maxe << mbits;  // overflow (also keeps the shift below in range)
  uint mh = (hi & 0xfffffu) | 0x100000u;  // 53-bit significand = mh:u.x (21 + 32 bits)
  uint s = 52u - mbits;                   // bits to drop for a normal result
  if (fe <= 0) s += uint(1 - fe);         // subnormal result: drop more
  if (s > 54u) return 0u;                 // below half the smallest subnormal
  uint k, rem_hi, rem_lo, half_hi, half_lo;
  if (s < 32u) {
    k = (mh << (32u - s)) | (u.x >> s);
    rem_hi = 0u; rem_lo = u.x & ((1u << s) - 1u);
    half_hi = 0u; half_lo = 1u << (s - 1u);
  } else {
    k = mh >> (s - 32u);
    rem_hi = mh & ((1u << (s - 32u)) - 1u); rem_lo = u.x;
    if (s == 32u) { half_hi = 0u; half_lo = 0x80000000u; }
    else { half_hi = 1u << (s - 33u); half_lo = 0u; }
  }
  bool above = rem_hi > half_hi || (rem_hi == half_hi && rem_lo > half_lo);
  bool tie = rem_hi == half_hi && rem_lo == half_lo;
  if (above || (tie && (k & 1u) != 0u)) k += 1u;
  if (fe <= 0) return k;  // subnormal (a carry into the exponent field is the right encoding)
  uint bits = (uint(fe - 1) << mbits) + k;  // k holds the implicit bit: adds 1 to the exponent
  if ((bits >> mbits) >= maxe) return maxe << mbits;  // overflow: infinity
  return bits;
}
float nx_double_to_float(double d) {
  uvec2 u = unpackDouble2x32(d);
  uint e = (u.y >> 20) & 0x7ffu;
  if (e - 897u < 254u) {  // f32's normal range: round the 53-bit significand to 24 bits here
    uint r = u.x & 0x1fffffffu;
    uint bits = (u.y & 0x80000000u) | ((e - 896u) << 23) | ((u.y & 0xfffffu) << 3) | (u.x >> 29);
    return uintBitsToFloat(bits + ((r > 0x10000000u || (r == 0x10000000u && (bits & 1u) != 0u)) ? 1u : 0u));
  }
  uint b = nx_double_round_bits(d, 23u, 8u);
  if (b == 0xffffffffu) return uintBitsToFloat(0x7fc00000u);
  return uintBitsToFloat(b | ((unpackDouble2x32(d).y >> 31) << 31));
}
uint nx_double_to_half(double d) {
  uint b = nx_double_round_bits(d, 10u, 5u);
  if (b == 0xffffffffu) return 0x7e00u;
  return b | ((unpackDouble2x32(d).y >> 31) << 15);
}
uint nx_double_to_bf16(double d) { return nx_float_to_bf16(nx_double_to_float(d)); }
double nx_canonical_nan_f64(double d) { return isnan(d) ? packDouble2x32(uvec2(0u, 0x7ff80000u)) : d; }
)GLSL";

bool narrow(DType t) { return type_bytes(t) < 4; }

}  // namespace

std::string value_type(DType type) {
  switch (type) {
    case DType::U8:
    case DType::U16:
    case DType::U32: return "uint";
    case DType::S8:
    case DType::S16:
    case DType::S32: return "int";
    case DType::U64: return "uint64_t";
    case DType::S64: return "int64_t";
    case DType::F16:
    case DType::BF16:
    case DType::F32: return "float";
    case DType::F64: return "double";
    case DType::C64: return "vec2";
    case DType::C128: return "dvec2";
  }
  return "uint";
}

std::string float_compute_type(const Capabilities& caps) { return caps.float64 ? "double" : "float"; }

std::string preamble(const Capabilities& caps) {
  std::string s = "#version 450\n";
  s += "#extension GL_EXT_control_flow_attributes : enable\n";
  if (caps.int64) s += "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n";
  s += "layout(local_size_x_id = 0) in;\n";
  s += "uint grid_stride() { return gl_NumWorkGroups.x * gl_WorkGroupSize.x; }\n";
  s += kFloatHelpers;
  if (caps.float64) s += kDoubleHelpers;
  s += convert_helpers(caps);
  return s;
}

std::string buffer(uint32_t binding, const std::string& name, DType type, bool read_only) {
  std::string elem;
  switch (type) {
    case DType::U64: elem = "uint64_t"; break;
    case DType::S64: elem = "uint64_t"; break;
    case DType::F64: elem = "double"; break;
    case DType::C64: elem = "vec2"; break;
    case DType::C128: elem = "dvec2"; break;
    default: elem = "uint"; break;
  }
  return "layout(std430, binding = " + std::to_string(binding) + ") " + (read_only ? "readonly " : "") +
         "buffer " + name + "_t { " + elem + " w[]; } " + name + ";\n";
}

std::string params_buffer(uint32_t binding) {
  return "layout(std430, binding = " + std::to_string(binding) + ") readonly buffer Params_t { uint p[]; } params;\n";
}

std::string load(DType type, const std::string& name, const std::string& i) {
  const std::string w = name + ".w";
  switch (type) {
    case DType::U8: return "((" + w + "[(" + i + ") >> 2] >> (((" + i + ") & 3u) * 8u)) & 0xffu)";
    case DType::S8: return "bitfieldExtract(int(" + w + "[(" + i + ") >> 2]), int(((" + i + ") & 3u) * 8u), 8)";
    case DType::U16: return "((" + w + "[(" + i + ") >> 1] >> (((" + i + ") & 1u) * 16u)) & 0xffffu)";
    case DType::S16: return "bitfieldExtract(int(" + w + "[(" + i + ") >> 1]), int(((" + i + ") & 1u) * 16u), 16)";
    case DType::U32: return w + "[" + i + "]";
    case DType::S32: return "int(" + w + "[" + i + "])";
    case DType::F16: return "nx_half_to_float((" + w + "[(" + i + ") >> 1] >> (((" + i + ") & 1u) * 16u)) & 0xffffu)";
    case DType::BF16: return "nx_bf16_to_float((" + w + "[(" + i + ") >> 1] >> (((" + i + ") & 1u) * 16u)) & 0xffffu)";
    case DType::F32: return "uintBitsToFloat(" + w + "[" + i + "])";
    case DType::U64: return w + "[" + i + "]";
    case DType::S64: return "int64_t(" + w + "[" + i + "])";
    case DType::F64:
    case DType::C64:
    case DType::C128: return w + "[" + i + "]";
  }
  return w + "[" + i + "]";
}

std::string store_value(DType out, const std::string& v, const std::string& v_type, bool canonical_nan) {
  const bool from_double = v_type == "double";
  switch (out) {
    case DType::U8:
    case DType::S8: return "(uint(" + v + ") & 0xffu)";
    case DType::U16:
    case DType::S16: return "(uint(" + v + ") & 0xffffu)";
    case DType::U32:
    case DType::S32: return "uint(" + v + ")";
    case DType::U64:
    case DType::S64: return "uint64_t(" + v + ")";
    case DType::F16:
      return from_double ? "nx_double_to_half(" + v + ")" : "nx_float_to_half(" + v + ")";
    case DType::BF16:
      return from_double ? "nx_double_to_bf16(" + v + ")" : "nx_float_to_bf16(" + v + ")";
    case DType::F32:
      if (from_double) return "floatBitsToUint(nx_double_to_float(" + v + "))";
      return canonical_nan ? "(isnan(" + v + ") ? 0x7fc00000u : floatBitsToUint(" + v + "))"
                           : "floatBitsToUint(" + v + ")";
    case DType::F64: return canonical_nan ? "nx_canonical_nan_f64(double(" + v + "))" : "double(" + v + ")";
    case DType::C64:
    case DType::C128: return v;
  }
  return v;
}

DType bits_type(DType type, const Capabilities& caps) {
  switch (type_bytes(type)) {
    case 1: return DType::U8;
    case 2: return DType::U16;
    case 4: return DType::U32;
    case 8: return caps.int64 ? DType::U64 : caps.float64 ? DType::F64 : DType::C64;  // c64 alone: vec2 moves
    default: return type;  // complex: vec2/dvec2 moves keep their bits
  }
}

uint64_t elementwise_invocations(DType out_type, uint64_t n) {
  uint64_t per_word = narrow(out_type) ? 4 / type_bytes(out_type) : 1;
  return (n + per_word - 1) / per_word;
}

std::string elementwise_main(DType out_type, const std::string& out, const std::string& body,
                             const std::string& v_type, bool canonical_nan) {
  std::string s = "void main() {\n";
  if (narrow(out_type)) {
    const uint32_t bits = type_info(out_type).bits;
    const uint32_t per_word = 32 / bits;
    s += "  uint words = (pc.n + " + std::to_string(per_word - 1) + "u) / " + std::to_string(per_word) + "u;\n";
    s += "  for (uint word = gl_GlobalInvocationID.x; word < words; word += grid_stride()) {\n";
    s += "    uint packed = 0u;\n";
    s += "    [[unroll]] for (uint e = 0u; e < " + std::to_string(per_word) + "u; ++e) {\n";
    s += "      uint i = word * " + std::to_string(per_word) + "u + e;\n";
    s += "      if (i >= pc.n) break;\n";
    s += "      " + body + "\n";
    s += "      packed |= " + store_value(out_type, "v", v_type, canonical_nan) + " << (e * " + std::to_string(bits) + "u);\n";
    s += "    }\n";
    s += "    " + out + ".w[word] = packed;\n";
    s += "  }\n";
  } else {
    s += "  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += grid_stride()) {\n";
    s += "    " + body + "\n";
    s += "    " + out + ".w[i] = " + store_value(out_type, "v", v_type, canonical_nan) + ";\n";
    s += "  }\n";
  }
  s += "}\n";
  return s;
}

std::string strided_index_function(const std::string& name, uint32_t offset) {
  const std::string o = std::to_string(offset);
  return "uint " + name + "(uint i) {\n"
         "  uint rank = params.p[" + o + "];\n"
         "  uint index = 0u;\n"
         "  for (uint d = rank; d > 0u; --d) {\n"
         "    uint dim = params.p[" + o + " + d];\n"
         "    uint stride = params.p[" + o + " + rank + d];\n"
         "    index += (i % dim) * stride;\n"
         "    i /= dim;\n"
         "  }\n"
         "  return index;\n"
         "}\n";
}

void append_strided_params(std::vector<uint32_t>& params, const Shape& out_shape,
                           const std::vector<int64_t>& strides) {
  params.push_back(static_cast<uint32_t>(out_shape.size()));
  for (int64_t d : out_shape) params.push_back(static_cast<uint32_t>(d));
  for (int64_t st : strides) params.push_back(static_cast<uint32_t>(st));
}

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i > 0; --i) {
    strides[i - 1] = s;
    s *= shape[i - 1];
  }
  return strides;
}

void check_index_range(const std::string& op, int64_t elements) {
  if (elements > int64_t(0xffffffffll))
    fail(ErrorKind::Unsupported, op + ": " + std::to_string(elements) +
                                     " elements exceed the 2^32 - 1 that a kernel index covers");
}

void launch(Device& device, const std::string& name, const std::string& glsl,
            std::span<const BufferView> buffers, std::span<const std::byte> push, uint64_t invocations) {
  if (invocations == 0) return;
  // At most 65535 workgroups (the grid-stride loops cover any n); measured on the H200, more
  // groups made unary ops slower.
  const uint64_t groups = std::min<uint64_t>((invocations + kWorkgroupSize - 1) / kWorkgroupSize,
                                             std::min<uint32_t>(device.caps().max_workgroup_count[0], 65535u));
  const uint32_t spec[] = {kWorkgroupSize};
  Kernel kernel{name, glsl, static_cast<uint32_t>(buffers.size())};
  device.dispatch(kernel, buffers, push, {static_cast<uint32_t>(groups)}, spec);
}

}  // namespace nxvk::gen
