// Shape ops: reshape and squeeze share the buffer; everything else is one generic gather kernel
// (ops/gather.hpp) with per-axis index maps, plus a tiled kernel for the last-two-axes transpose.
// Data moves copy bits, so NaN payloads and -0.0 survive as in Nx.BinaryBackend.
#include <algorithm>
#include <numeric>

#include "nxvk/ops.hpp"
#include "ops/codegen.hpp"
#include "ops/gather.hpp"
#include "ops/shape_internal.hpp"

namespace nxvk {
namespace {

using gather::AxisMap;
using gather::Source;

int64_t normalize_axis(const std::string& op, int64_t axis, int64_t rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    fail(ErrorKind::InvalidArgument, op + ": axis " + std::to_string(axis) + " out of range for rank " +
                                         std::to_string(rank));
  return a;
}

std::vector<int64_t> unique_axes(const std::string& op, const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    int64_t n = normalize_axis(op, a, rank);
    if (std::find(out.begin(), out.end(), n) != out.end())
      fail(ErrorKind::InvalidArgument, op + ": axis " + std::to_string(a) + " given more than once");
    out.push_back(n);
  }
  return out;
}

void check_rank(const std::string& op, const Tensor& x, size_t n, const char* what) {
  if (static_cast<size_t>(x.rank()) != n)
    fail(ErrorKind::InvalidArgument, op + ": expected " + std::to_string(x.rank()) + " " + what + " for shape " +
                                         shape_string(x.shape) + ", got " + std::to_string(n));
}

void check_same_device(const std::string& op, const Tensor& a, const Tensor& b) {
  if (&a.device() != &b.device()) fail(ErrorKind::InvalidArgument, op + ": operands are on different devices");
}

Tensor concat_group(const std::vector<Tensor>& xs, int64_t axis, DType out_type, const Shape& out_shape) {
  std::vector<Source> sources;
  int64_t off = 0;
  for (const auto& x : xs) {
    if (x.shape[axis] == 0) continue;
    Source s{x, gather::identity_maps(x.shape), 0};
    s.axes[axis].b = -off;
    off += x.shape[axis];
    sources.push_back(std::move(s));
  }
  if (sources.empty()) return empty_tensor(xs[0].device(), out_type, out_shape, "concatenate");
  return gather::run("concatenate", out_type, out_shape, sources);
}

}  // namespace

Tensor reshape(const Tensor& x, const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0) fail(ErrorKind::InvalidArgument, "reshape: negative dimension in shape " + shape_string(shape));
  if (shape_size(shape) != x.size())
    fail(ErrorKind::InvalidArgument, "reshape: cannot reshape " + shape_string(x.shape) + " (" +
                                         std::to_string(x.size()) + " elements) to " + shape_string(shape));
  return Tensor{x.buffer, x.type, shape};
}

Tensor squeeze(const Tensor& x, const std::vector<int64_t>& axes) {
  auto as = unique_axes("squeeze", axes, x.rank());
  Shape shape;
  for (int64_t d = 0; d < x.rank(); ++d) {
    const bool drop = std::find(as.begin(), as.end(), d) != as.end();
    if (drop && x.shape[d] != 1)
      fail(ErrorKind::InvalidArgument, "squeeze: axis " + std::to_string(d) + " of shape " + shape_string(x.shape) +
                                           " has size " + std::to_string(x.shape[d]) + ", not 1");
    if (!drop) shape.push_back(x.shape[d]);
  }
  return Tensor{x.buffer, x.type, shape};
}

Tensor broadcast(const Tensor& x, const Shape& shape, const std::vector<int64_t>& axes) {
  const std::string op = "broadcast";
  check_rank(op, x, axes.size(), "axes");
  const int64_t rank = static_cast<int64_t>(shape.size());
  auto as = unique_axes(op, axes, rank);
  for (int64_t d : shape)
    if (d < 0) fail(ErrorKind::InvalidArgument, op + ": negative dimension in shape " + shape_string(shape));
  std::vector<AxisMap> maps(shape.size());
  for (auto& m : maps) m.bound = std::numeric_limits<int32_t>::max();
  auto strides = gen::contiguous_strides(x.shape);
  for (size_t i = 0; i < as.size(); ++i) {
    const int64_t in = x.shape[i], out = shape[as[i]];
    if (in != 1 && in != out)
      fail(ErrorKind::InvalidArgument, op + ": cannot broadcast " + shape_string(x.shape) + " to " +
                                           shape_string(shape) + " with axes: input axis " + std::to_string(i) +
                                           " has size " + std::to_string(in) + " but output axis " +
                                           std::to_string(as[i]) + " has size " + std::to_string(out));
    maps[as[i]].stride = in == 1 ? 0 : strides[i];
  }
  return gather::run(op, x.type, shape, {Source{x, maps, 0}});
}

Tensor transpose(const Tensor& x, const std::vector<int64_t>& axes) {
  const std::string op = "transpose";
  check_rank(op, x, axes.size(), "axes");
  auto as = unique_axes(op, axes, x.rank());
  Shape shape(as.size());
  for (size_t d = 0; d < as.size(); ++d) shape[d] = x.shape[as[d]];
  if (auto t = shape_internal::tiled_transpose(x, as, shape)) return *t;
  auto strides = gen::contiguous_strides(x.shape);
  std::vector<AxisMap> maps(as.size());
  for (size_t d = 0; d < as.size(); ++d) {
    maps[d].stride = strides[as[d]];
    maps[d].bound = x.shape[as[d]];
  }
  return gather::run(op, x.type, shape, {Source{x, maps, 0}});
}

Tensor pad(const Tensor& x, const Tensor& value, const std::vector<PadConfig>& config, DType out_type) {
  const std::string op = "pad";
  check_rank(op, x, config.size(), "padding configs");
  check_same_device(op, x, value);
  if (value.rank() != 0)
    fail(ErrorKind::InvalidArgument, op + ": the pad value must be a scalar, got shape " + shape_string(value.shape));
  auto ops = gather::to_out_type(op, out_type, {x, value});
  Shape shape(config.size());
  std::vector<AxisMap> maps = gather::identity_maps(x.shape);
  for (size_t d = 0; d < config.size(); ++d) {
    const auto& c = config[d];
    if (c.interior < 0)
      fail(ErrorKind::InvalidArgument, op + ": interior padding must be >= 0, got " + std::to_string(c.interior));
    const int64_t n = x.shape[d];
    shape[d] = c.low + c.high + n + std::max<int64_t>(0, n - 1) * c.interior;
    if (shape[d] < 0)
      fail(ErrorKind::InvalidArgument, op + ": padding {" + std::to_string(c.low) + ", " + std::to_string(c.high) +
                                           ", " + std::to_string(c.interior) + "} of axis " + std::to_string(d) +
                                           " (size " + std::to_string(n) + ") gives a negative size");
    maps[d].b = -c.low;
    maps[d].q = c.interior + 1;
  }
  std::vector<AxisMap> scalar(config.size());
  return gather::run(op, out_type, shape, {Source{ops[0], maps, 0}, Source{ops[1], scalar, 0}});
}

Tensor reverse(const Tensor& x, const std::vector<int64_t>& axes) {
  const std::string op = "reverse";
  auto as = unique_axes(op, axes, x.rank());
  std::vector<AxisMap> maps = gather::identity_maps(x.shape);
  for (int64_t a : as) {
    maps[a].a = -1;
    maps[a].b = x.shape[a] - 1;
  }
  return gather::run(op, x.type, x.shape, {Source{x, maps, 0}});
}

namespace {

// Checks lengths and strides and returns the output shape of a slice.
Shape slice_shape(const std::string& op, const Tensor& x, size_t starts, const std::vector<int64_t>& lengths,
                  const std::vector<int64_t>& strides) {
  check_rank(op, x, starts, "start indices");
  check_rank(op, x, lengths.size(), "lengths");
  check_rank(op, x, strides.size(), "strides");
  Shape shape(lengths.size());
  for (size_t d = 0; d < lengths.size(); ++d) {
    if (lengths[d] < 0 || lengths[d] > x.shape[d])
      fail(ErrorKind::InvalidArgument, op + ": length " + std::to_string(lengths[d]) + " of axis " +
                                           std::to_string(d) + " is out of range for shape " + shape_string(x.shape));
    if (strides[d] < 1)
      fail(ErrorKind::InvalidArgument, op + ": stride " + std::to_string(strides[d]) + " of axis " +
                                           std::to_string(d) + " must be >= 1");
    shape[d] = (lengths[d] + strides[d] - 1) / strides[d];
  }
  return shape;
}

int64_t clamp_start(int64_t start, int64_t dim, int64_t len) { return std::min(std::max<int64_t>(start, 0), dim - len); }

}  // namespace

Tensor slice(const Tensor& x, const std::vector<int64_t>& start, const std::vector<int64_t>& lengths,
             const std::vector<int64_t>& strides) {
  const std::string op = "slice";
  Shape shape = slice_shape(op, x, start.size(), lengths, strides);
  std::vector<AxisMap> maps = gather::identity_maps(x.shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    maps[d].a = strides[d];
    maps[d].b = clamp_start(start[d], x.shape[d], lengths[d]);
  }
  return gather::run(op, x.type, shape, {Source{x, maps, 0}});
}

Tensor slice_dynamic(const Tensor& x, const std::vector<Tensor>& start, const std::vector<int64_t>& lengths,
                     const std::vector<int64_t>& strides) {
  const std::string op = "slice_dynamic";
  Shape shape = slice_shape(op, x, start.size(), lengths, strides);
  for (const auto& s : start) check_same_device(op, x, s);
  Tensor dyn = gather::clamped_starts(op, start, x.shape, lengths);
  std::vector<AxisMap> maps = gather::identity_maps(x.shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    maps[d].a = strides[d];
    maps[d].dyn = static_cast<int32_t>(d);
  }
  return gather::run(op, x.type, shape, {Source{x, maps, 0}}, &dyn);
}

namespace {

Tensor put_slice_impl(const std::string& op, const Tensor& x, const std::vector<int64_t>* start,
                      const std::vector<Tensor>* dyn_start, const Tensor& update, DType out_type) {
  check_same_device(op, x, update);
  if (update.rank() != x.rank())
    fail(ErrorKind::InvalidArgument, op + ": the update of shape " + shape_string(update.shape) +
                                         " must have the rank of the tensor of shape " + shape_string(x.shape));
  check_rank(op, x, start ? start->size() : dyn_start->size(), "start indices");
  for (int64_t d = 0; d < x.rank(); ++d)
    if (update.shape[d] > x.shape[d])
      fail(ErrorKind::InvalidArgument, op + ": the update of shape " + shape_string(update.shape) +
                                           " does not fit in the tensor of shape " + shape_string(x.shape));
  auto ops = gather::to_out_type(op, out_type, {x, update});
  if (update.size() == 0) return gather::run(op, out_type, x.shape, {Source{ops[0], gather::identity_maps(x.shape), 0}});
  std::vector<AxisMap> maps = gather::identity_maps(update.shape);
  std::optional<Tensor> dyn;
  if (dyn_start) {
    for (const auto& s : *dyn_start) check_same_device(op, x, s);
    dyn = gather::clamped_starts(op, *dyn_start, x.shape, update.shape);
  }
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (start) {
      maps[d].b = -clamp_start((*start)[d], x.shape[d], update.shape[d]);
    } else {
      maps[d].dyn = static_cast<int32_t>(d);
      maps[d].dyn_sign = -1;
    }
  }
  return gather::run(op, out_type, x.shape,
                     {Source{ops[1], maps, 0}, Source{ops[0], gather::identity_maps(x.shape), 0}},
                     dyn ? &*dyn : nullptr);
}

}  // namespace

Tensor put_slice(const Tensor& x, const std::vector<int64_t>& start, const Tensor& update, DType out_type) {
  return put_slice_impl("put_slice", x, &start, nullptr, update, out_type);
}

Tensor put_slice_dynamic(const Tensor& x, const std::vector<Tensor>& start, const Tensor& update, DType out_type) {
  return put_slice_impl("put_slice_dynamic", x, nullptr, &start, update, out_type);
}

Tensor concatenate(const std::vector<Tensor>& xs_in, int64_t axis_in, DType out_type) {
  const std::string op = "concatenate";
  if (xs_in.empty()) fail(ErrorKind::InvalidArgument, op + ": needs at least one tensor");
  const Tensor& first = xs_in[0];
  const int64_t axis = normalize_axis(op, axis_in, first.rank());
  Shape shape = first.shape;
  shape[axis] = 0;
  for (size_t k = 0; k < xs_in.size(); ++k) {
    const Tensor& x = xs_in[k];
    check_same_device(op, first, x);
    bool ok = x.rank() == first.rank();
    for (int64_t d = 0; ok && d < x.rank(); ++d) ok = d == axis || x.shape[d] == first.shape[d];
    if (!ok)
      fail(ErrorKind::InvalidArgument, op + ": tensor " + std::to_string(k) + " of shape " + shape_string(x.shape) +
                                           " does not match shape " + shape_string(first.shape) +
                                           " outside axis " + std::to_string(axis));
    shape[axis] += x.shape[axis];
  }
  auto xs = gather::to_out_type(op, out_type, xs_in);
  // At most kGroup sources per kernel (each is a binding); more are concatenated in groups first.
  constexpr size_t kGroup = 6;
  while (xs.size() > kGroup) {
    std::vector<Tensor> next;
    for (size_t i = 0; i < xs.size(); i += kGroup) {
      std::vector<Tensor> group(xs.begin() + i, xs.begin() + std::min(xs.size(), i + kGroup));
      Shape gs = group[0].shape;
      gs[axis] = 0;
      for (const auto& g : group) gs[axis] += g.shape[axis];
      next.push_back(group.size() == 1 ? group[0] : concat_group(group, axis, out_type, gs));
    }
    xs = std::move(next);
  }
  return concat_group(xs, axis, out_type, shape);
}

Tensor stack(const std::vector<Tensor>& xs, int64_t axis_in, DType out_type) {
  const std::string op = "stack";
  if (xs.empty()) fail(ErrorKind::InvalidArgument, op + ": needs at least one tensor");
  const int64_t rank = xs[0].rank() + 1;
  const int64_t axis = normalize_axis(op, axis_in, rank);
  std::vector<Tensor> expanded;
  for (size_t k = 0; k < xs.size(); ++k) {
    if (xs[k].shape != xs[0].shape)
      fail(ErrorKind::InvalidArgument, op + ": tensor " + std::to_string(k) + " of shape " +
                                           shape_string(xs[k].shape) + " does not match shape " +
                                           shape_string(xs[0].shape));
    Shape s = xs[k].shape;
    s.insert(s.begin() + axis, 1);
    expanded.push_back(Tensor{xs[k].buffer, xs[k].type, s});
  }
  return concatenate(expanded, axis, out_type);
}

}  // namespace nxvk
