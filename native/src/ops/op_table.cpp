// Names of the ops, generated from the op tables in nxvk/ops.hpp.
#include <string_view>

#include "nxvk/ops.hpp"

namespace nxvk {
namespace {
template <class Op, size_t N>
std::optional<Op> parse(const char* const (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (name == names[i]) return static_cast<Op>(i);
  return std::nullopt;
}
#define NXVK_NAME(name) #name,
const char* const kUnary[] = {NXVK_UNARY_OPS(NXVK_NAME)};
const char* const kBinary[] = {NXVK_BINARY_OPS(NXVK_NAME)};
const char* const kReduce[] = {NXVK_REDUCE_OPS(NXVK_NAME)};
const char* const kArgReduce[] = {NXVK_ARG_REDUCE_OPS(NXVK_NAME)};
const char* const kCumulative[] = {NXVK_CUMULATIVE_OPS(NXVK_NAME)};
#undef NXVK_NAME
}  // namespace

const char* op_name(UnaryOp op) { return kUnary[static_cast<int>(op)]; }
const char* op_name(BinaryOp op) { return kBinary[static_cast<int>(op)]; }
const char* op_name(ReduceOp op) { return kReduce[static_cast<int>(op)]; }
const char* op_name(ArgReduceOp op) { return kArgReduce[static_cast<int>(op)]; }
const char* op_name(CumulativeOp op) { return kCumulative[static_cast<int>(op)]; }
std::optional<UnaryOp> parse_unary_op(std::string_view n) { return parse<UnaryOp>(kUnary, n); }
std::optional<BinaryOp> parse_binary_op(std::string_view n) { return parse<BinaryOp>(kBinary, n); }
std::optional<ReduceOp> parse_reduce_op(std::string_view n) { return parse<ReduceOp>(kReduce, n); }
std::optional<ArgReduceOp> parse_arg_reduce_op(std::string_view n) { return parse<ArgReduceOp>(kArgReduce, n); }
std::optional<CumulativeOp> parse_cumulative_op(std::string_view n) { return parse<CumulativeOp>(kCumulative, n); }

}  // namespace nxvk
