#include "ref/reduce.hpp"

#include <cmath>

namespace nxvk::ref {
namespace {

// Output shape and, per input element, its output index.
Shape reduced_shape(const Shape& shape, const std::vector<bool>& red, bool keep) {
  Shape out;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!red[d]) out.push_back(shape[d]);
    else if (keep) out.push_back(1);
  return out;
}

int64_t out_index(const Shape& shape, const std::vector<bool>& red, int64_t i) {
  auto c = coords(shape, i);
  int64_t o = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!red[d]) o = o * shape[d] + c[d];
  return o;
}

// Nx's non-finite-aware max/min: NaN wins; on equal values the accumulator stays.
double fmax_nx(double acc, double v) { return std::isnan(acc) || std::isnan(v) ? NAN : (v > acc ? v : acc); }
double fmin_nx(double acc, double v) { return std::isnan(acc) || std::isnan(v) ? NAN : (v < acc ? v : acc); }

}  // namespace

HostTensor reduce(ReduceOp op, const HostTensor& x, const std::vector<int64_t>& axes, bool keep, DType out_type,
                  std::vector<double>* abs_sum) {
  std::vector<bool> red(x.shape.size(), false);
  for (int64_t a : axes) red[a < 0 ? a + x.shape.size() : a] = true;
  HostTensor out = make(out_type, reduced_shape(x.shape, red, keep));
  const int64_t n = out.size();
  const bool flt = type_info(x.type).is_float();
  std::vector<Value> acc(n);
  std::vector<bool> first(n, true);
  if (abs_sum) abs_sum->assign(n, 0.0);
  for (int64_t o = 0; o < n; ++o) {
    switch (op) {
      case ReduceOp::sum: acc[o] = flt ? of_double(0) : of_uint(0); break;
      case ReduceOp::product: acc[o] = flt ? of_double(1) : of_uint(1); break;
      case ReduceOp::all: acc[o] = of_uint(1); break;
      case ReduceOp::any: acc[o] = of_uint(0); break;
      default: {
        // Empty reduced extent: the identity (the type's lowest / highest, -inf / inf).
        const TypeInfo& ti = type_info(x.type);
        const bool mx = op == ReduceOp::reduce_max;
        if (flt) acc[o] = of_double(mx ? -INFINITY : INFINITY);
        else if (ti.is_signed()) acc[o] = of_int(mx ? -(int64_t(1) << (ti.bits - 1)) : (int64_t(1) << (ti.bits - 1)) - 1);
        else acc[o] = of_uint(mx ? 0 : (ti.bits == 64 ? ~0ull : (1ull << ti.bits) - 1));
      }
    }
  }
  for (int64_t i = 0; i < x.size(); ++i) {
    const int64_t o = out_index(x.shape, red, i);
    const Value v = get(x, i);
    Value& a = acc[o];
    if (abs_sum) (*abs_sum)[o] += std::fabs(v.is_float ? v.f : (v.is_signed ? double(v.s) : double(v.u)));
    switch (op) {
      case ReduceOp::sum: if (flt) a.f += v.f; else a = of_uint(a.u + v.u); break;
      case ReduceOp::product: if (flt) a.f *= v.f; else a = of_uint(a.u * v.u); break;
      case ReduceOp::all: if (!(flt ? v.f != 0 : v.u != 0)) a = of_uint(0); break;
      case ReduceOp::any: if (flt ? v.f != 0 : v.u != 0) a = of_uint(1); break;
      case ReduceOp::reduce_max:
      case ReduceOp::reduce_min: {
        const bool mx = op == ReduceOp::reduce_max;
        if (first[o]) a = v;
        else if (flt) a.f = mx ? fmax_nx(a.f, v.f) : fmin_nx(a.f, v.f);
        else if (type_info(x.type).is_signed()) a = of_int(mx ? std::max(a.s, v.s) : std::min(a.s, v.s));
        else a = of_uint(mx ? std::max(a.u, v.u) : std::min(a.u, v.u));
        break;
      }
    }
    first[o] = false;
  }
  for (int64_t o = 0; o < n; ++o) set(out, o, acc[o]);
  return out;
}

HostTensor arg_reduce(ArgReduceOp op, const HostTensor& x, std::optional<int64_t> axis, bool keep, TieBreak tb,
                      DType out_type) {
  std::vector<bool> red(x.shape.size(), !axis);
  Shape shape;
  if (axis) {
    red[*axis < 0 ? *axis + x.shape.size() : *axis] = true;
    shape = reduced_shape(x.shape, red, keep);
  } else if (keep) {
    shape.assign(x.shape.size(), 1);
  }
  HostTensor out = make(out_type, shape);
  const int64_t n = out.size();
  std::vector<int64_t> pos(n, 0), best(n, -1);
  std::vector<Value> bv(n);
  const bool flt = type_info(x.type).is_float(), sgn = type_info(x.type).is_signed();
  const bool mx = op == ArgReduceOp::argmax;
  // Nx: take x when it is the first, is NaN, or compares better (ties count with tie_break: :high).
  auto better = [&](const Value& v, const Value& cur) {
    if (flt) {
      if (std::isnan(v.f) || std::isnan(cur.f)) return false;
      return mx ? (v.f > cur.f || (tb == TieBreak::High && v.f == cur.f))
                : (v.f < cur.f || (tb == TieBreak::High && v.f == cur.f));
    }
    const int c = sgn ? (v.s < cur.s ? -1 : v.s > cur.s) : (v.u < cur.u ? -1 : v.u > cur.u);
    return mx ? (c > 0 || (tb == TieBreak::High && c == 0)) : (c < 0 || (tb == TieBreak::High && c == 0));
  };
  for (int64_t i = 0; i < x.size(); ++i) {
    const int64_t o = axis ? out_index(x.shape, red, i) : 0;
    const Value v = get(x, i);
    if (best[o] < 0 || (flt && std::isnan(v.f)) || better(v, bv[o])) { best[o] = pos[o]; bv[o] = v; }
    ++pos[o];
  }
  for (int64_t o = 0; o < n; ++o) set(out, o, of_int(best[o]));
  return out;
}

}  // namespace nxvk::ref
