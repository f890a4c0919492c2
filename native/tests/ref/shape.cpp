#include "ref/shape.hpp"

#include <algorithm>

namespace nxvk::ref {

HostTensor convert(const HostTensor& x, DType type) {
  if (x.type == type) return x;
  HostTensor out = make(type, x.shape);
  for (int64_t i = 0; i < x.size(); ++i) set(out, i, get(x, i));
  return out;
}

HostTensor broadcast(const HostTensor& x, const Shape& shape, const std::vector<int64_t>& axes) {
  HostTensor out = make(x.type, shape);
  auto st = strides(x.shape);
  for (int64_t i = 0; i < out.size(); ++i) {
    auto c = coords(shape, i);
    int64_t k = 0;
    for (size_t d = 0; d < axes.size(); ++d) k += (x.shape[d] == 1 ? 0 : c[axes[d]]) * st[d];
    copy_elem(out, i, x, k);
  }
  return out;
}

HostTensor transpose(const HostTensor& x, const std::vector<int64_t>& axes) {
  Shape shape(axes.size());
  for (size_t d = 0; d < axes.size(); ++d) shape[d] = x.shape[axes[d]];
  HostTensor out = make(x.type, shape);
  auto st = strides(x.shape);
  for (int64_t i = 0; i < out.size(); ++i) {
    auto c = coords(shape, i);
    int64_t k = 0;
    for (size_t d = 0; d < axes.size(); ++d) k += c[d] * st[axes[d]];
    copy_elem(out, i, x, k);
  }
  return out;
}

HostTensor pad(const HostTensor& x_in, const HostTensor& value, const std::vector<PadConfig>& config, DType out_type) {
  HostTensor x = convert(x_in, out_type), v = convert(value, out_type);
  Shape shape(config.size());
  for (size_t d = 0; d < config.size(); ++d)
    shape[d] = config[d].low + config[d].high + x.shape[d] + std::max<int64_t>(0, x.shape[d] - 1) * config[d].interior;
  HostTensor out = make(out_type, shape);
  auto st = strides(x.shape);
  for (int64_t i = 0; i < out.size(); ++i) {
    auto c = coords(shape, i);
    int64_t k = 0;
    bool inside = true;
    for (size_t d = 0; d < config.size() && inside; ++d) {
      int64_t p = c[d] - config[d].low;
      const int64_t q = config[d].interior + 1;
      if (p < 0 || p % q != 0 || p / q >= x.shape[d]) inside = false;
      else k += (p / q) * st[d];
    }
    if (inside) copy_elem(out, i, x, k);
    else copy_elem(out, i, v, 0);
  }
  return out;
}

HostTensor reverse(const HostTensor& x, const std::vector<int64_t>& axes) {
  HostTensor out = make(x.type, x.shape);
  auto st = strides(x.shape);
  for (int64_t i = 0; i < out.size(); ++i) {
    auto c = coords(x.shape, i);
    for (int64_t a : axes) c[a] = x.shape[a] - 1 - c[a];
    int64_t k = 0;
    for (size_t d = 0; d < c.size(); ++d) k += c[d] * st[d];
    copy_elem(out, i, x, k);
  }
  return out;
}

HostTensor slice(const HostTensor& x, std::vector<int64_t> start, const std::vector<int64_t>& lengths,
                 const std::vector<int64_t>& stride) {
  Shape shape(lengths.size());
  for (size_t d = 0; d < lengths.size(); ++d) {
    start[d] = std::min(std::max<int64_t>(start[d], 0), x.shape[d] - lengths[d]);  // Nx clamps
    shape[d] = (lengths[d] + stride[d] - 1) / stride[d];
  }
  HostTensor out = make(x.type, shape);
  auto st = strides(x.shape);
  for (int64_t i = 0; i < out.size(); ++i) {
    auto c = coords(shape, i);
    int64_t k = 0;
    for (size_t d = 0; d < c.size(); ++d) k += (start[d] + c[d] * stride[d]) * st[d];
    copy_elem(out, i, x, k);
  }
  return out;
}

HostTensor put_slice(const HostTensor& x_in, std::vector<int64_t> start, const HostTensor& update_in, DType out_type) {
  HostTensor out = convert(x_in, out_type), u = convert(update_in, out_type);
  for (size_t d = 0; d < start.size(); ++d) start[d] = std::min(std::max<int64_t>(start[d], 0), x_in.shape[d] - u.shape[d]);
  auto st = strides(out.shape);
  for (int64_t i = 0; i < u.size(); ++i) {
    auto c = coords(u.shape, i);
    int64_t k = 0;
    for (size_t d = 0; d < c.size(); ++d) k += (start[d] + c[d]) * st[d];
    copy_elem(out, k, u, i);
  }
  return out;
}

HostTensor concatenate(const std::vector<HostTensor>& xs, int64_t axis, DType out_type) {
  Shape shape = xs[0].shape;
  shape[axis] = 0;
  for (const auto& x : xs) shape[axis] += x.shape[axis];
  HostTensor out = make(out_type, shape);
  auto ost = strides(shape);
  int64_t off = 0;
  for (const auto& x_in : xs) {
    HostTensor x = convert(x_in, out_type);
    for (int64_t i = 0; i < x.size(); ++i) {
      auto c = coords(x.shape, i);
      c[axis] += off;
      int64_t k = 0;
      for (size_t d = 0; d < c.size(); ++d) k += c[d] * ost[d];
      copy_elem(out, k, x, i);
    }
    off += x.shape[axis];
  }
  return out;
}

HostTensor stack(const std::vector<HostTensor>& xs, int64_t axis, DType out_type) {
  std::vector<HostTensor> e = xs;
  for (auto& x : e) x.shape.insert(x.shape.begin() + axis, 1);
  return concatenate(e, axis, out_type);
}

}  // namespace nxvk::ref
