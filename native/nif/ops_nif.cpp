// The op NIFs: each converts its terms and calls one op-library function, which validates and
// does the work. One NIF serves each op family (unary, binary, reduce, ...), dispatched by the
// op's name through the op tables of nxvk/ops.hpp.
//
// The op library is being filled in family by family, so its functions are referenced weakly:
// the NIF loads whatever exists, `built_functions/0` tells Elixir which do, and calling a missing
// one raises Nx.Vulkan.Error with kind :not_built (the backend then runs the op on the host,
// counted as a fallback).
#include <string>

#include "nif_list.hpp"
#include "terms.hpp"

namespace nxvk {
#define NXNIF_WEAK [[gnu::weak]]
NXNIF_WEAK Tensor constant(Device&, DType, const Shape&, const Scalar&);
NXNIF_WEAK Tensor iota(Device&, DType, const Shape&, std::optional<int64_t>);
NXNIF_WEAK Tensor eye(Device&, DType, const Shape&);
NXNIF_WEAK Tensor as_type(const Tensor&, DType);
NXNIF_WEAK Tensor bitcast(const Tensor&, DType);
NXNIF_WEAK Tensor unary(UnaryOp, const Tensor&, DType);
NXNIF_WEAK Tensor binary(BinaryOp, const Tensor&, const Tensor&, DType, const Shape&);
NXNIF_WEAK Tensor select(const Tensor&, const Tensor&, const Tensor&, DType, const Shape&);
NXNIF_WEAK Tensor clip(const Tensor&, const Tensor&, const Tensor&, DType);
NXNIF_WEAK Tensor reshape(const Tensor&, const Shape&);
NXNIF_WEAK Tensor squeeze(const Tensor&, const std::vector<int64_t>&);
NXNIF_WEAK Tensor broadcast(const Tensor&, const Shape&, const std::vector<int64_t>&);
NXNIF_WEAK Tensor transpose(const Tensor&, const std::vector<int64_t>&);
NXNIF_WEAK Tensor pad(const Tensor&, const Tensor&, const std::vector<PadConfig>&, DType);
NXNIF_WEAK Tensor reverse(const Tensor&, const std::vector<int64_t>&);
NXNIF_WEAK Tensor slice(const Tensor&, const std::vector<int64_t>&, const std::vector<int64_t>&,
                        const std::vector<int64_t>&);
NXNIF_WEAK Tensor slice_dynamic(const Tensor&, const std::vector<Tensor>&, const std::vector<int64_t>&,
                                const std::vector<int64_t>&);
NXNIF_WEAK Tensor put_slice(const Tensor&, const std::vector<int64_t>&, const Tensor&, DType);
NXNIF_WEAK Tensor put_slice_dynamic(const Tensor&, const std::vector<Tensor>&, const Tensor&, DType);
NXNIF_WEAK Tensor concatenate(const std::vector<Tensor>&, int64_t, DType);
NXNIF_WEAK Tensor stack(const std::vector<Tensor>&, int64_t, DType);
NXNIF_WEAK Tensor reduce(ReduceOp, const Tensor&, const std::vector<int64_t>&, bool, DType);
NXNIF_WEAK Tensor arg_reduce(ArgReduceOp, const Tensor&, std::optional<int64_t>, bool, TieBreak, DType);
NXNIF_WEAK Tensor cumulative(CumulativeOp, const Tensor&, int64_t, bool, DType);
NXNIF_WEAK Pointer to_pointer(Tensor&, PointerKind);
NXNIF_WEAK Tensor from_pointer(Device&, DType, const Shape&, const Pointer&);
#undef NXNIF_WEAK
}  // namespace nxvk

namespace nxnif {
namespace {
using nxvk::ErrorKind;

// The op-library functions each NIF calls, for built_functions/0 and the not-built error.
#define NXNIF_OP_FUNCTIONS(X)                                                                    \
  X(from_binary) X(to_binary) X(constant) X(iota) X(eye) X(as_type) X(bitcast) X(unary) X(binary) \
  X(select) X(clip) X(reshape) X(squeeze) X(broadcast) X(transpose) X(pad) X(reverse) X(slice)   \
  X(slice_dynamic) X(put_slice) X(put_slice_dynamic) X(concatenate) X(stack) X(reduce)           \
  X(arg_reduce) X(cumulative) X(to_pointer) X(from_pointer)

// A missing op function raises kind :not_built (distinct from device limitations).
#define NXNIF_REQUIRE(function)                                                               \
  do {                                                                                        \
    if (!&nxvk::function)                                                                     \
      throw NotBuilt{std::string(c.fn) + ": not built: the op library has no nxvk::" #function \
                     " yet"};                                                                 \
  } while (0)

struct NotBuilt {
  std::string message;
};

template <class Parse>
auto parse_op(const Call& c, int arg, Parse parse, const char* family) {
  std::string name = c.atom_name(arg, "op");
  auto op = parse(name);
  if (!op) c.bad(arg, "op", std::string("a ") + family + " op name");
  return *op;
}

nxvk::TieBreak tie_break(const Call& c, int arg) {
  std::string name = c.atom_name(arg, "tie_break");
  if (name == "low") return nxvk::TieBreak::Low;
  if (name == "high") return nxvk::TieBreak::High;
  c.bad(arg, "tie_break", ":low or :high");
}

// Runs `body`, mapping NotBuilt to Nx.Vulkan.Error{kind: :not_built}.
template <class F>
ERL_NIF_TERM op(const Call& c, F&& body) {
  try {
    return body();
  } catch (const NotBuilt& e) {
    return raise_error(c.env, "not_built", e.message);
  }
}
}  // namespace

NXNIF_DEFINE(built_functions) {
  ERL_NIF_TERM list = enif_make_list(c.env, 0);
#define NXNIF_PRESENT(function) \
  if (&nxvk::function) list = enif_make_list_cell(c.env, c.atom(#function), list);
  NXNIF_OP_FUNCTIONS(NXNIF_PRESENT)
#undef NXNIF_PRESENT
  return list;
}

NXNIF_DEFINE(from_binary) {
  auto device = c.device(0, "device");
  auto type = c.type(1, "type");
  auto shape = c.shape(2, "shape");
  auto bin = c.binary(3, "data");
  return make_tensor(c.env, nxvk::from_binary(*device, type, shape,
                                              {reinterpret_cast<const std::byte*>(bin.data), bin.size}));
}

NXNIF_DEFINE(to_binary) {
  auto t = c.tensor(0, "tensor");
  auto limit = c.optional_int64(1, "limit");
  if (limit && *limit < 0) c.bad(1, "limit", "a non-negative integer or nil");
  auto bytes = nxvk::to_binary(t, limit ? *limit : -1);
  return make_string(c.env, {reinterpret_cast<const char*>(bytes.data()), bytes.size()});
}

NXNIF_DEFINE(constant) {
  return op(c, [&] {
    NXNIF_REQUIRE(constant);
    auto device = c.device(0, "device");
    auto type = c.type(1, "type");
    auto shape = c.shape(2, "shape");
    return make_tensor(c.env, nxvk::constant(*device, type, shape, c.scalar(3, "value")));
  });
}

NXNIF_DEFINE(iota) {
  return op(c, [&] {
    NXNIF_REQUIRE(iota);
    auto device = c.device(0, "device");
    auto type = c.type(1, "type");
    auto shape = c.shape(2, "shape");
    return make_tensor(c.env, nxvk::iota(*device, type, shape, c.optional_int64(3, "axis")));
  });
}

NXNIF_DEFINE(eye) {
  return op(c, [&] {
    NXNIF_REQUIRE(eye);
    auto device = c.device(0, "device");
    auto type = c.type(1, "type");
    return make_tensor(c.env, nxvk::eye(*device, type, c.shape(2, "shape")));
  });
}

NXNIF_DEFINE(as_type) {
  return op(c, [&] {
    NXNIF_REQUIRE(as_type);
    auto x = c.tensor(0, "tensor");
    return make_tensor(c.env, nxvk::as_type(x, c.type(1, "type")));
  });
}

NXNIF_DEFINE(bitcast) {
  return op(c, [&] {
    NXNIF_REQUIRE(bitcast);
    auto x = c.tensor(0, "tensor");
    return make_tensor(c.env, nxvk::bitcast(x, c.type(1, "type")));
  });
}

NXNIF_DEFINE(unary) {
  return op(c, [&] {
    NXNIF_REQUIRE(unary);
    auto o = parse_op(c, 0, nxvk::parse_unary_op, "unary");
    auto x = c.tensor(1, "tensor");
    return make_tensor(c.env, nxvk::unary(o, x, c.type(2, "type")));
  });
}

NXNIF_DEFINE(binary) {
  return op(c, [&] {
    NXNIF_REQUIRE(binary);
    auto o = parse_op(c, 0, nxvk::parse_binary_op, "binary");
    auto a = c.tensor(1, "left");
    auto b = c.tensor(2, "right");
    auto type = c.type(3, "type");
    auto shape = c.shape(4, "shape");
    same_device(c, {&a, &b});
    return make_tensor(c.env, nxvk::binary(o, a, b, type, shape));
  });
}

NXNIF_DEFINE(select) {
  return op(c, [&] {
    NXNIF_REQUIRE(select);
    auto p = c.tensor(0, "pred");
    auto t = c.tensor(1, "on_true");
    auto f = c.tensor(2, "on_false");
    auto type = c.type(3, "type");
    auto shape = c.shape(4, "shape");
    same_device(c, {&p, &t, &f});
    return make_tensor(c.env, nxvk::select(p, t, f, type, shape));
  });
}

NXNIF_DEFINE(clip) {
  return op(c, [&] {
    NXNIF_REQUIRE(clip);
    auto x = c.tensor(0, "tensor");
    auto lo = c.tensor(1, "min");
    auto hi = c.tensor(2, "max");
    auto type = c.type(3, "type");
    same_device(c, {&x, &lo, &hi});
    return make_tensor(c.env, nxvk::clip(x, lo, hi, type));
  });
}

NXNIF_DEFINE(reshape) {
  return op(c, [&] {
    NXNIF_REQUIRE(reshape);
    auto x = c.tensor(0, "tensor");
    return make_tensor(c.env, nxvk::reshape(x, c.shape(1, "shape")));
  });
}

NXNIF_DEFINE(squeeze) {
  return op(c, [&] {
    NXNIF_REQUIRE(squeeze);
    auto x = c.tensor(0, "tensor");
    return make_tensor(c.env, nxvk::squeeze(x, c.int64_list(1, "axes")));
  });
}

NXNIF_DEFINE(broadcast) {
  return op(c, [&] {
    NXNIF_REQUIRE(broadcast);
    auto x = c.tensor(0, "tensor");
    auto shape = c.shape(1, "shape");
    return make_tensor(c.env, nxvk::broadcast(x, shape, c.int64_list(2, "axes")));
  });
}

NXNIF_DEFINE(transpose) {
  return op(c, [&] {
    NXNIF_REQUIRE(transpose);
    auto x = c.tensor(0, "tensor");
    return make_tensor(c.env, nxvk::transpose(x, c.int64_list(1, "axes")));
  });
}

NXNIF_DEFINE(pad) {
  return op(c, [&] {
    NXNIF_REQUIRE(pad);
    auto x = c.tensor(0, "tensor");
    auto value = c.tensor(1, "pad_value");
    auto config = c.pad_config(2, "config");
    auto type = c.type(3, "type");
    same_device(c, {&x, &value});
    return make_tensor(c.env, nxvk::pad(x, value, config, type));
  });
}

NXNIF_DEFINE(reverse) {
  return op(c, [&] {
    NXNIF_REQUIRE(reverse);
    auto x = c.tensor(0, "tensor");
    return make_tensor(c.env, nxvk::reverse(x, c.int64_list(1, "axes")));
  });
}

NXNIF_DEFINE(slice) {
  return op(c, [&] {
    NXNIF_REQUIRE(slice);
    auto x = c.tensor(0, "tensor");
    auto start = c.int64_list(1, "start");
    auto lengths = c.int64_list(2, "lengths");
    return make_tensor(c.env, nxvk::slice(x, start, lengths, c.int64_list(3, "strides")));
  });
}

NXNIF_DEFINE(slice_dynamic) {
  return op(c, [&] {
    NXNIF_REQUIRE(slice_dynamic);
    auto x = c.tensor(0, "tensor");
    auto start = c.tensors(1, "start");
    auto lengths = c.int64_list(2, "lengths");
    auto strides = c.int64_list(3, "strides");
    std::vector<const nxvk::Tensor*> all{&x};
    for (const auto& s : start) all.push_back(&s);
    same_device(c, all);
    return make_tensor(c.env, nxvk::slice_dynamic(x, start, lengths, strides));
  });
}

NXNIF_DEFINE(put_slice) {
  return op(c, [&] {
    NXNIF_REQUIRE(put_slice);
    auto x = c.tensor(0, "tensor");
    auto start = c.int64_list(1, "start");
    auto update = c.tensor(2, "update");
    auto type = c.type(3, "type");
    same_device(c, {&x, &update});
    return make_tensor(c.env, nxvk::put_slice(x, start, update, type));
  });
}

NXNIF_DEFINE(put_slice_dynamic) {
  return op(c, [&] {
    NXNIF_REQUIRE(put_slice_dynamic);
    auto x = c.tensor(0, "tensor");
    auto start = c.tensors(1, "start");
    auto update = c.tensor(2, "update");
    auto type = c.type(3, "type");
    std::vector<const nxvk::Tensor*> all{&x, &update};
    for (const auto& s : start) all.push_back(&s);
    same_device(c, all);
    return make_tensor(c.env, nxvk::put_slice_dynamic(x, start, update, type));
  });
}

template <nxvk::Tensor (*Join)(const std::vector<nxvk::Tensor>&, int64_t, nxvk::DType)>
ERL_NIF_TERM join(const Call& c) {
  auto xs = c.tensors(0, "tensors");
  auto axis = c.int64(1, "axis");
  auto type = c.type(2, "type");
  std::vector<const nxvk::Tensor*> all;
  for (const auto& x : xs) all.push_back(&x);
  if (!all.empty()) same_device(c, all);
  return make_tensor(c.env, Join(xs, axis, type));
}

NXNIF_DEFINE(concatenate) {
  return op(c, [&] {
    NXNIF_REQUIRE(concatenate);
    return join<nxvk::concatenate>(c);
  });
}

NXNIF_DEFINE(stack) {
  return op(c, [&] {
    NXNIF_REQUIRE(stack);
    return join<nxvk::stack>(c);
  });
}

NXNIF_DEFINE(reduce) {
  return op(c, [&] {
    NXNIF_REQUIRE(reduce);
    auto o = parse_op(c, 0, nxvk::parse_reduce_op, "reduce");
    auto x = c.tensor(1, "tensor");
    auto axes = c.int64_list(2, "axes");
    auto keep = c.boolean(3, "keep_axes");
    return make_tensor(c.env, nxvk::reduce(o, x, axes, keep, c.type(4, "type")));
  });
}

NXNIF_DEFINE(arg_reduce) {
  return op(c, [&] {
    NXNIF_REQUIRE(arg_reduce);
    auto o = parse_op(c, 0, nxvk::parse_arg_reduce_op, "arg_reduce");
    auto x = c.tensor(1, "tensor");
    auto axis = c.optional_int64(2, "axis");
    auto keep = c.boolean(3, "keep_axis");
    auto tb = tie_break(c, 4);
    return make_tensor(c.env, nxvk::arg_reduce(o, x, axis, keep, tb, c.type(5, "type")));
  });
}

NXNIF_DEFINE(cumulative) {
  return op(c, [&] {
    NXNIF_REQUIRE(cumulative);
    auto o = parse_op(c, 0, nxvk::parse_cumulative_op, "cumulative");
    auto x = c.tensor(1, "tensor");
    auto axis = c.int64(2, "axis");
    auto rev = c.boolean(3, "reverse");
    return make_tensor(c.env, nxvk::cumulative(o, x, axis, rev, c.type(4, "type")));
  });
}

namespace {
nxvk::PointerKind pointer_kind(const Call& c, int arg, const char* name) {
  std::string kind = c.atom_name(arg, name);
  if (kind == "local") return nxvk::PointerKind::Local;
  if (kind == "ipc") return nxvk::PointerKind::Ipc;
  c.bad(arg, name, ":local or :ipc");
}
}  // namespace

// to_pointer(tensor, mode) -> {:local, address, data_size} | {:ipc, handle, data_size}.
// The first :ipc export moves the tensor into an exportable buffer: the resource is updated under
// its lock, held for the whole export so that two exports of one tensor share one buffer. The
// handle is a resource binary that holds the exported buffer: the export (its memory and fd)
// lives while the tensor or the handle does, so a handle in hand can always be imported.
NXNIF_DEFINE(to_pointer) {
  return op(c, [&] {
    NXNIF_REQUIRE(to_pointer);
    TensorResource* res = nullptr;
    if (!enif_get_resource(c.env, c.argv[0], tensor_resource_type, reinterpret_cast<void**>(&res)))
      c.bad(0, "tensor", "a Vulkan tensor reference");
    const auto kind = pointer_kind(c, 1, "mode");
    std::lock_guard lock(res->mutex);
    if (!res->tensor)
      throw nxvk::Error(ErrorKind::InvalidArgument, std::string(c.fn) + ": argument 1 (tensor): tensor was deallocated");
    nxvk::Pointer p = nxvk::to_pointer(*res->tensor, kind);
    ERL_NIF_TERM size = enif_make_uint64(c.env, p.data_size);
    if (p.kind == nxvk::PointerKind::Local)
      return enif_make_tuple3(c.env, c.atom("local"), enif_make_uint64(c.env, p.address), size);
    return enif_make_tuple3(c.env, c.atom("ipc"), make_pinning_binary(c.env, *res->tensor, p.handle), size);
  });
}

// from_pointer(device, type, shape, kind, address | handle, data_size) -> tensor.
NXNIF_DEFINE(from_pointer) {
  return op(c, [&] {
    NXNIF_REQUIRE(from_pointer);
    auto device = c.device(0, "device");
    auto type = c.type(1, "type");
    auto shape = c.shape(2, "shape");
    nxvk::Pointer p;
    p.kind = pointer_kind(c, 3, "kind");
    if (p.kind == nxvk::PointerKind::Local) {
      ErlNifUInt64 address = 0;
      if (!enif_get_uint64(c.env, c.argv[4], &address)) c.bad(4, "address", "a non-negative integer address");
      p.address = address;
    } else {
      ErlNifBinary handle = c.binary(4, "handle");
      p.handle.assign(reinterpret_cast<const char*>(handle.data), handle.size);
    }
    ErlNifUInt64 data_size = 0;
    if (!enif_get_uint64(c.env, c.argv[5], &data_size)) c.bad(5, "data_size", "a non-negative integer");
    p.data_size = data_size;
    return make_tensor(c.env, nxvk::from_pointer(*device, type, shape, p));
  });
}

}  // namespace nxnif
