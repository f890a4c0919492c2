// Building blocks for the GLSL that op kernels are generated from at run time (compiled by
// shaderc, cached by source hash). One place decides how each Nx type is stored and held:
//  - types of fewer than 32 bits (2, 4, 8, 16) are stored packed in 32-bit words (no 8/16-bit
//    storage feature needed); a kernel writing them produces whole words, so no two invocations
//    share a word and no atomics are needed;
//  - f16, bf16, f8 and f8_e4m3fn are converted by integer code, by Nx.BinaryBackend's rules
//    (f16 round to nearest even; bf16 and f8 truncated from f32 and f16), never by the driver;
//  - 64-bit types use uint64_t / int64_t / double arrays and need int64 / float64.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nxvk/tensor.hpp"

namespace nxvk::gen {

constexpr uint32_t kWorkgroupSize = 256;

// GLSL type that holds a value of `type` in registers (the type table's glsl column).
std::string value_type(DType type);
// Elements of `type` per 32-bit word (1 for types of 32 bits or more).
uint32_t elements_per_word(DType type);
// GLSL uint expression: the bit offset in its word of the packed element at word position `pos`
// (little-endian bytes; below 8 bits the first element of a byte in its most significant bits,
// as in Nx's bitstrings).
std::string packed_shift(DType type, const std::string& pos);
// Floating-point arithmetic for float ops: "double" where the device has f64 (so f32, f16 and
// bf16 results are rounded once from a far more precise value, as Nx.BinaryBackend does), else
// "float".
std::string float_compute_type(const Capabilities& caps);

// `#version`, extensions, the workgroup size (specialization constant 0) and conversion helpers:
//   float nx_half_to_float(uint bits)      uint nx_float_to_half(float v)   (RNE, exact bits)
//   float nx_bf16_to_float(uint bits)      uint nx_float_to_bf16(float v)   (RNE, NaN kept quiet)
//   uint nx_double_to_half(double), uint nx_double_to_bf16(double), float nx_double_to_float(double)
//   and the same three for each packed float format of the type table (f8, f8e4m3fn)
// (the double helpers only where the device has f64).
std::string preamble(const Capabilities& caps);

// `layout(std430, binding = B) buffer NAME_t { <elem> w[]; } NAME;` for elements of `type`.
std::string buffer(uint32_t binding, const std::string& name, DType type, bool read_only);
// Params block at `binding`: `layout(...) readonly buffer Params_t { uint p[]; } params;`
std::string params_buffer(uint32_t binding);

// Expression reading element `index` (a uint expression, evaluated more than once: pass a
// variable) of buffer `name` as value_type(type).
std::string load(DType type, const std::string& name, const std::string& index);

// GLSL bool: x (held as value_type(t)) is nonzero (NaN is nonzero, -0.0 is zero); an f32 value
// tested by its bits (a device may flush a subnormal to zero in a comparison).
std::string nonzero(DType t, const std::string& x);

// Expression converting `expr`, held as value_type(from) (or as `double`/`float` when `from` is a
// float computed in float_compute_type), to value_type(to) by Nx's as_type rules, for
// store_value to write. (An f8 result is held as its f16 value, from which Nx writes f8: see
// cast.cpp.) Declared here so every kernel converts the same way; implemented with the casts.
std::string convert(const Capabilities& caps, DType from, DType to, const std::string& expr,
                    const std::string& from_glsl_type = "");
// The GLSL functions convert's expressions call (part of preamble(); defined in cast.cpp).
std::string convert_helpers(const Capabilities& caps);

// A `void main()` that writes all `n` (push constant pc.n) elements of output buffer `out` of
// type `out_type`. `body` is GLSL statements that, given `uint i` (the flat output index),
// declare `<v_type> v` holding element i. For float outputs v may be "double" or "float" and is
// rounded to the output type here, once, to nearest even (bf16: as Nx.BinaryBackend, the f32
// value truncated), with NaN written as Nx's canonical quiet NaN; for other outputs v_type must
// be value_type(out_type). Narrow types are packed into whole words; the loop is grid-stride,
// so any n fits in a bounded dispatch. `canonical_nan=false` keeps f32/f64 NaN bits. `setup`
// runs first (every invocation: filling shared memory).
std::string elementwise_main(DType out_type, const std::string& out, const std::string& body,
                             const std::string& v_type, bool canonical_nan = true, const std::string& setup = "");

// Expression giving the stored bits of `v` (held as `v_type`) for the output type: a uint for
// types of 32 bits or less, else the 64-bit storage value. Used by elementwise_main and by
// kernels that store by themselves (reductions).
std::string store_value(DType out_type, const std::string& v, const std::string& v_type,
                        bool canonical_nan = true);

// The unsigned type of the same size, for kernels that move elements without computing on them
// (transpose, slice, pad, ...): they copy bits, so NaN payloads and -0.0 survive as in Nx.
// 8-byte types use u64 where the device has int64, else f64 (a double load/store keeps bits).
DType bits_type(DType type, const Capabilities& caps);

// Number of invocations elementwise_main needs for n elements of `out_type`.
uint64_t elementwise_invocations(DType out_type, uint64_t n);

// Strided reads: a GLSL function `uint NAME(uint i)` mapping the flat output index i to the
// element index of an operand, from params p[offset...]: rank r, then r output dims, then r
// operand strides (0 for a broadcast axis). `param_words` appends those words.
std::string strided_index_function(const std::string& name, uint32_t offset);
void append_strided_params(std::vector<uint32_t>& params, const Shape& out_shape,
                           const std::vector<int64_t>& strides);
// Row-major strides of `shape` (in elements).
std::vector<int64_t> contiguous_strides(const Shape& shape);

// A generated kernel: the preamble for `caps`, then `glsl`. The preamble is the pipeline's prefix
// (Kernel::prefix), so a call whose pipeline exists neither builds nor hashes it.
Kernel kernel(const Capabilities& caps, std::string name, std::string glsl);
// Dispatches a generated kernel over `invocations` invocations, with `buffers` at bindings
// 0..n-1 (kernel.bindings is set from them) and `push` as push constants.
void launch(Device& device, Kernel kernel, std::span<const BufferView> buffers, std::span<const std::byte> push,
            uint64_t invocations);

// Elements must fit a 32-bit index in kernels.
void check_index_range(const std::string& op, int64_t elements);

template <class T>
std::span<const std::byte> bytes_of(const T& value) {
  return std::as_bytes(std::span<const T>(&value, 1));
}

}  // namespace nxvk::gen
