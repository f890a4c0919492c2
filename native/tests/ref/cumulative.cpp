#include "ref/cumulative.hpp"

#include <cmath>

namespace nxvk::ref {
namespace {

struct Fun {
  CumulativeOp op;
  DType type;
  // f(a, b) as the Nx op computes it, rounded to `type`.
  uint64_t operator()(uint64_t a_bits, uint64_t b_bits) const {
    HostTensor t = make(type, {3});
    set_bits(t, 0, a_bits);
    set_bits(t, 1, b_bits);
    const Value a = get(t, 0), b = get(t, 1);
    const bool flt = type_info(type).is_float(), sgn = type_info(type).is_signed();
    Value r;
    switch (op) {
      case CumulativeOp::cumulative_sum: r = flt ? of_double(a.f + b.f) : of_uint(a.u + b.u); break;
      case CumulativeOp::cumulative_product: r = flt ? of_double(a.f * b.f) : of_uint(a.u * b.u); break;
      case CumulativeOp::cumulative_max:
      case CumulativeOp::cumulative_min: {
        const bool mx = op == CumulativeOp::cumulative_max;
        if (flt) r = of_double(std::isnan(a.f) || std::isnan(b.f) ? NAN : (mx ? (b.f > a.f ? b.f : a.f) : (b.f < a.f ? b.f : a.f)));
        else if (sgn) r = of_int(mx ? std::max(a.s, b.s) : std::min(a.s, b.s));
        else r = of_uint(mx ? std::max(a.u, b.u) : std::min(a.u, b.u));
        break;
      }
    }
    set(t, 2, r);
    return get_bits(t, 2);
  }
};

// Nx's do_associative_scan on one row (element bits).
std::vector<uint64_t> scan(const std::vector<uint64_t>& t, const Fun& f) {
  const size_t n = t.size();
  if (n < 2) return t;
  std::vector<uint64_t> pairs(n / 2);
  for (size_t j = 0; j < n / 2; ++j) pairs[j] = f(t[2 * j + 1], t[2 * j]);
  std::vector<uint64_t> s1 = scan(pairs, f), s(n);
  s[0] = t[0];
  for (size_t m = 1; m < n; ++m) s[m] = (m & 1) ? s1[(m - 1) / 2] : f(s1[m / 2 - 1], t[m]);
  return s;
}

}  // namespace

HostTensor cumulative(CumulativeOp op, const HostTensor& x, int64_t axis, bool reverse) {
  HostTensor out = make(x.type, x.shape);
  if (x.size() == 0) return out;
  if (x.shape.empty()) return x;
  const int64_t n = x.shape[axis];
  int64_t O = 1, I = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(x.shape.size()); ++d) {
    if (d < axis) O *= x.shape[d];
    if (d > axis) I *= x.shape[d];
  }
  Fun f{op, x.type};
  for (int64_t o = 0; o < O; ++o)
    for (int64_t i = 0; i < I; ++i) {
      std::vector<uint64_t> row(n);
      for (int64_t m = 0; m < n; ++m) row[m] = get_bits(x, (o * n + (reverse ? n - 1 - m : m)) * I + i);
      auto s = scan(row, f);
      for (int64_t m = 0; m < n; ++m) set_bits(out, (o * n + (reverse ? n - 1 - m : m)) * I + i, s[m]);
    }
  return out;
}

}  // namespace nxvk::ref
