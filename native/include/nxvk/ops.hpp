// The op library: one entry per Nx.Backend operation. Every function validates its arguments
// (types, shapes, axes, options) and throws nxvk::Error naming the op, so the C++ API, the CLI
// and the NIF share the same checks and messages. Results are new tensors on the inputs' device;
// Nx computes output types and shapes and passes them in (`out_type`, `out_shape`), as the
// backend callbacks receive them in the `out` template.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nxvk/tensor.hpp"

namespace nxvk {

// ---- The op tables: the one list of names the library, the NIF and the tests iterate. ----

#define NXVK_UNARY_OPS(X)                                                                      \
  X(exp) X(expm1) X(log) X(log1p) X(sigmoid) X(cos) X(sin) X(tan) X(cosh) X(sinh) X(tanh)      \
  X(acos) X(asin) X(atan) X(acosh) X(asinh) X(atanh) X(sqrt) X(rsqrt) X(cbrt) X(erf) X(erfc)   \
  X(erf_inv) X(abs) X(bitwise_not) X(ceil) X(conjugate) X(floor) X(negate) X(round) X(sign)    \
  X(count_leading_zeros) X(population_count) X(real) X(imag) X(is_nan) X(is_infinity)

#define NXVK_BINARY_OPS(X)                                                                     \
  X(add) X(subtract) X(multiply) X(pow) X(remainder) X(divide) X(atan2) X(min) X(max)          \
  X(quotient) X(bitwise_and) X(bitwise_or) X(bitwise_xor) X(left_shift) X(right_shift)         \
  X(equal) X(not_equal) X(greater) X(less) X(greater_equal) X(less_equal) X(logical_and)       \
  X(logical_or) X(logical_xor)

#define NXVK_REDUCE_OPS(X) X(sum) X(product) X(reduce_max) X(reduce_min) X(all) X(any)
#define NXVK_ARG_REDUCE_OPS(X) X(argmax) X(argmin)
#define NXVK_CUMULATIVE_OPS(X) X(cumulative_sum) X(cumulative_product) X(cumulative_min) X(cumulative_max)

enum class UnaryOp {
#define NXVK_ENUM(name) name,
  NXVK_UNARY_OPS(NXVK_ENUM)
};
enum class BinaryOp { NXVK_BINARY_OPS(NXVK_ENUM) };
enum class ReduceOp { NXVK_REDUCE_OPS(NXVK_ENUM) };
enum class ArgReduceOp { NXVK_ARG_REDUCE_OPS(NXVK_ENUM) };
enum class CumulativeOp { NXVK_CUMULATIVE_OPS(NXVK_ENUM) };
#undef NXVK_ENUM

const char* op_name(UnaryOp op);
const char* op_name(BinaryOp op);
const char* op_name(ReduceOp op);
const char* op_name(ArgReduceOp op);
const char* op_name(CumulativeOp op);
std::optional<UnaryOp> parse_unary_op(std::string_view name);

// The f32 math mode: "exact" (the default: correctly rounded f32 results, Nx.BinaryBackend's
// bits) or "fast" (f32 arithmetic within 1 ulp of them, for the functions docs/CAPABILITIES.md
// lists). NX_VULKAN_F32_MATH sets it, read per op; set_f32_math overrides the variable for the
// process ("" goes back to it), which a VM's own environment cannot (Erlang keeps its own copy).
// Another value fails with InvalidArgument.
void set_f32_math(const std::string& mode);
std::optional<BinaryOp> parse_binary_op(std::string_view name);
std::optional<ReduceOp> parse_reduce_op(std::string_view name);
std::optional<ArgReduceOp> parse_arg_reduce_op(std::string_view name);
std::optional<CumulativeOp> parse_cumulative_op(std::string_view name);

// A number of any Nx type: integers exactly, floats with ±inf and NaN, complex as two doubles.
struct Scalar {
  enum class Kind { Signed, Unsigned, Float, Complex } kind = Kind::Signed;
  int64_t s = 0;
  uint64_t u = 0;
  double re = 0, im = 0;
  static Scalar of_signed(int64_t v) { return {Kind::Signed, v, 0, 0, 0}; }
  static Scalar of_unsigned(uint64_t v) { return {Kind::Unsigned, 0, v, 0, 0}; }
  static Scalar of_float(double v) { return {Kind::Float, 0, 0, v, 0}; }
  static Scalar of_complex(double re, double im) { return {Kind::Complex, 0, 0, re, im}; }
};

// ---- Creation and transfer ----
// `data` is Nx's binary of the tensor: storage_bytes(type, n) bytes; for the sub-byte types
// (u2, u4, s2, s4) Nx's bitstring padded with zero bits to a whole byte.
Tensor from_binary(Device& device, DType type, const Shape& shape, std::span<const std::byte> data);
// Row-major bytes of the first `limit` elements (all when limit < 0), as Nx's to_binary; for the
// sub-byte types Nx's bitstring padded with zero bits to a whole byte.
std::vector<std::byte> to_binary(const Tensor& tensor, int64_t limit = -1);
// A tensor filled with `value` converted to `type` by Nx's rules.
Tensor constant(Device& device, DType type, const Shape& shape, const Scalar& value);
// Counting along `axis` (0, 1, ... along that axis), or over the flat index when no axis.
Tensor iota(Device& device, DType type, const Shape& shape, std::optional<int64_t> axis);
// 1 where the indices of the last two axes are equal, else 0 (batched over leading axes).
Tensor eye(Device& device, DType type, const Shape& shape);

// ---- Pointers (Nx.to_pointer / Nx.from_pointer; see docs/ARCHITECTURE.md, "Pointers") ----
enum class PointerKind { Local, Ipc };
struct Pointer {
  PointerKind kind = PointerKind::Local;
  uint64_t address = 0;    // Local: host address of the tensor's first byte
  std::string handle;      // Ipc: "nx_vulkan:fd:v1:..." naming an exported opaque fd
  uint64_t data_size = 0;  // bytes of the tensor (elements x element size)
};
// Local: the host-mapped address of the tensor's memory (devices whose tensors are host-visible;
// Unsupported elsewhere), after its pending writes; valid while the tensor's buffer lives, which
// is then never recycled. Ipc: the tensor's memory as an opaque fd (external_memory_fd); the
// first export moves the tensor into a dedicated exportable buffer (a device copy; `tensor.buffer`
// is replaced, its bytes are unchanged), later ones return the same handle. The fd stays open,
// owned by that buffer, until the buffer is freed.
Pointer to_pointer(Tensor& tensor, PointerKind kind);
// A tensor over the memory `pointer` names, aliasing it (no copy). data_size must equal the
// bytes of `type` x `shape`. Local: a host allocation (external_memory_host), aligned to
// min_imported_host_pointer_alignment, that must outlive the tensor and not change while it
// lives. Ipc: an export of this physical device and driver, from this process or another one
// (whose fd is duplicated with pidfd_getfd, which needs ptrace permission over it).
Tensor from_pointer(Device& device, DType type, const Shape& shape, const Pointer& pointer);

// ---- Casts ----
Tensor as_type(const Tensor& x, DType out_type);
Tensor bitcast(const Tensor& x, DType out_type);  // same element size; bits unchanged

// ---- Elementwise ----
Tensor unary(UnaryOp op, const Tensor& x, DType out_type);
// Operands of any types and broadcast-compatible shapes (read in place through strides).
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, DType out_type, const Shape& out_shape);
Tensor select(const Tensor& pred, const Tensor& on_true, const Tensor& on_false, DType out_type,
              const Shape& out_shape);
Tensor clip(const Tensor& x, const Tensor& min, const Tensor& max, DType out_type);

// ---- Shape ----
Tensor reshape(const Tensor& x, const Shape& shape);  // shares the buffer
Tensor squeeze(const Tensor& x, const std::vector<int64_t>& axes);
// Nx broadcast: axes[i] is the output axis that input axis i maps to.
Tensor broadcast(const Tensor& x, const Shape& shape, const std::vector<int64_t>& axes);
Tensor transpose(const Tensor& x, const std::vector<int64_t>& axes);
struct PadConfig {
  int64_t low = 0, high = 0, interior = 0;  // low/high may be negative
};
Tensor pad(const Tensor& x, const Tensor& value, const std::vector<PadConfig>& config, DType out_type);
Tensor reverse(const Tensor& x, const std::vector<int64_t>& axes);
// Nx slice: start indices are clamped so the slice fits; strides >= 1.
Tensor slice(const Tensor& x, const std::vector<int64_t>& start, const std::vector<int64_t>& lengths,
             const std::vector<int64_t>& strides);
// Dynamic variants take start indices from tensors (scalars of any integer type), as Nx allows.
Tensor slice_dynamic(const Tensor& x, const std::vector<Tensor>& start, const std::vector<int64_t>& lengths,
                     const std::vector<int64_t>& strides);
Tensor put_slice(const Tensor& x, const std::vector<int64_t>& start, const Tensor& update, DType out_type);
Tensor put_slice_dynamic(const Tensor& x, const std::vector<Tensor>& start, const Tensor& update,
                         DType out_type);
Tensor concatenate(const std::vector<Tensor>& xs, int64_t axis, DType out_type);
Tensor stack(const std::vector<Tensor>& xs, int64_t axis, DType out_type);

// ---- Reductions ----
// Over `axes` (Nx's axes: nil arrives as every axis), keeping them as size 1 if keep_axes.
Tensor reduce(ReduceOp op, const Tensor& x, const std::vector<int64_t>& axes, bool keep_axes,
              DType out_type);
enum class TieBreak { Low, High };
// Over one axis, or over the flattened tensor when axis is empty. NaN wins (its index returned).
Tensor arg_reduce(ArgReduceOp op, const Tensor& x, std::optional<int64_t> axis, bool keep_axis,
                  TieBreak tie_break, DType out_type);
Tensor cumulative(CumulativeOp op, const Tensor& x, int64_t axis, bool reverse, DType out_type);

}  // namespace nxvk
