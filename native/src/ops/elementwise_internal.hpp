// Shared by the elementwise ops (elementwise.cpp, elementwise_expr.cpp): operand access through
// broadcast strides, and the GLSL expressions of Nx's elementwise semantics.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nxvk/ops.hpp"

namespace nxvk::elementwise {

// How a kernel reads one operand at flat output index `i`, after the output's dims were
// collapsed on the host: the same index (same shape, contiguous), element 0 (a scalar or a fully
// broadcast operand), a rank-2 walk (one division by a uniform), or the general strided walk.
struct Access {
  enum class Kind { same, scalar, rank2, strided };
  Kind kind = Kind::same;
  std::string functions;  // GLSL index functions this operand needs
  std::string index;      // GLSL uint expression of `i`
  uint32_t param_offset = 0;  // rank2: params p[o] = inner dim, p[o+1], p[o+2] = the two strides
  int64_t inner = 0, outer_stride = 0, inner_stride = 0;  // rank2: the same, known on the host
};

// Plans the reads of `operands` (shapes broadcast-compatible with `out_shape`, Nx's right-aligned
// broadcasting) and appends their parameters to `params`.
std::vector<Access> plan_access(const Shape& out_shape, const std::vector<const Shape*>& operands,
                                std::vector<uint32_t>& params);

// A compute type for float math: F64 where the device has it, else F32.
DType float_compute_dtype(const Capabilities& caps);

// `x` (held as value_type(t)) as the float compute type.
std::string to_compute(const Capabilities& caps, DType t, const std::string& x);

// Nx comparison of a (type ta) with b (type tb), exact for integers of any signedness, NaN false
// (true for not_equal). `op` is one of equal not_equal greater less greater_equal less_equal.
std::string compare(const Capabilities& caps, BinaryOp op, DType ta, const std::string& a, DType tb,
                    const std::string& b);

// GLSL statements declaring `v` (held as the returned type) from a and b.
struct Body {
  std::string statements;
  std::string v_type;
  bool large = false;  // calls the math library's dd functions: one copy in a kernel, not four
  std::string functions;  // GLSL functions only this body calls (emitted after helpers())
  // When set, `statements` may leave v unsettled and set `bool slow`; then these statements
  // (after `statements`, in their scope) compute v. Kernels run them once, for the lanes that need
  // them, so the rarely taken accurate path is not copied per lane.
  std::string slow;
  // Statements every invocation runs first in main() (filling shared memory from `table`), and
  // the words bound after the kernel's other buffers, as buffer nx_ff_table, for them to read.
  std::string setup;
  std::span<const uint32_t> table;
  // Generated as for a device without f64 (the statements use none): on NVIDIA's driver a kernel
  // that merely declares the Float64 capability runs slower (docs/BENCHMARKS.md).
  bool without_f64 = false;
};
// The binding of Body::table in a kernel of `inputs` operands: after them, dst and the params block.
constexpr uint32_t table_binding(size_t inputs) { return static_cast<uint32_t>(inputs) + 2; }
constexpr uint32_t kUnaryTableBinding = table_binding(1);
constexpr uint32_t kBinaryTableBinding = table_binding(2);
Body binary_body(const Capabilities& caps, BinaryOp op, DType ta, DType tb, DType out);
Body unary_body(const Capabilities& caps, UnaryOp op, DType t, DType out);

// Helper GLSL functions binary_body/unary_body may call (division, fmod).
std::string helpers(const Capabilities& caps);

bool is_float_op(UnaryOp op);  // the math-library functions

}  // namespace nxvk::elementwise
