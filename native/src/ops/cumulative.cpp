// Cumulative sum/product/min/max along any axis, forward or reverse.
//
// Nx 0.13 defines these (Nx.Block.Cumulative*) by its default implementation, a work-efficient
// associative scan whose association is fixed by the axis length. We run exactly that tree, one
// kernel per level (up: pairs = f(odd, even); down: evens from the scanned pairs), each result
// rounded to the tensor type as each Nx op does, so float results match Nx.BinaryBackend bit
// for bit (not merely a sequential scan within rounding). Deterministic by construction.
// With x of length n along the axis, T0 = x (reversed for reverse), T(k+1)[j] = f(Tk[2j+1], Tk[2j])
// with length floor(n_k / 2), and the scan Sk of Tk is Sk[0] = Tk[0], Sk[m odd] = S(k+1)[(m-1)/2],
// Sk[m even] = f(S(k+1)[m/2 - 1], Tk[m]); the last level (length < 2) is its own scan.
#include <algorithm>

#include "nxvk/ops.hpp"
#include "ops/codegen.hpp"

namespace nxvk {
namespace {

struct Scan {
  std::string op;
  CumulativeOp cop;
  Device& device;
  const Capabilities& caps;
  DType type;
  uint64_t O, I;

  // GLSL type the combine is computed in and the combine expression f(a, b).
  std::string compute_type() const {
    const bool arith = cop == CumulativeOp::cumulative_sum || cop == CumulativeOp::cumulative_product;
    if (arith && type_info(type).is_float() && type != DType::F64) return gen::float_compute_type(caps);
    // min/max of f16/bf16/f8 on their f32 values (exact), by the f32 helpers below.
    if (type_info(type).is_float() && type != DType::F64) return "float";
    return gen::value_type(type);
  }
  // Declares `<ct> <r>` = f(a, b). In f32, by the helpers that keep subnormals and compare -0.0
  // and +0.0 as equal (codegen's preamble): devices may flush f32 subnormals, and NVIDIA's
  // compiler made (b < a ? b : a) a min instruction that ranks -0 below +0.
  std::string fun(const std::string& r = "v") const {
    const std::string ct = compute_type() + " " + r;
    const bool flt = type_info(type).is_float();
    if (compute_type() == "float" && flt) {
      switch (cop) {
        case CumulativeOp::cumulative_sum: return ct + " = nx_add_f32(a, b);";
        case CumulativeOp::cumulative_product: return ct + " = nx_mul_f32(a, b);";
        case CumulativeOp::cumulative_max: return ct + " = nx_max_f32(a, b);";
        case CumulativeOp::cumulative_min: return ct + " = nx_min_f32(a, b);";
      }
    }
    switch (cop) {
      case CumulativeOp::cumulative_sum: return "precise " + ct + " = a + b;";
      case CumulativeOp::cumulative_product: return "precise " + ct + " = a * b;";
      // Nx.max/min: NaN wins; on equal values the first operand (matters for -0.0 and 0.0).
      case CumulativeOp::cumulative_max:
        return flt ? ct + " = (isnan(a) || isnan(b)) ? a + b : (b > a ? b : a);" : ct + " = max(a, b);";
      case CumulativeOp::cumulative_min:
        return flt ? ct + " = (isnan(a) || isnan(b)) ? a + b : (b < a ? b : a);" : ct + " = min(a, b);";
    }
    return "";
  }
  std::string load(const std::string& buf, const std::string& idx) const { return widen(gen::load(type, buf, idx)); }
  // A value held as value_type(type) in the compute type; an f32 one widened exactly (the
  // driver's conversion may flush a subnormal).
  std::string widen(const std::string& x) const {
    if (compute_type() == "double" && gen::value_type(type) == "float") return "nx_f32_to_f64(" + x + ")";
    return compute_type() + "(" + x + ")";
  }
  // An element the scan passes on unchanged, as a value that stores back to the same bits. Nx
  // reads an f8 byte of exponent 0 as 2^-15 (1 + m/4), which writes back as another byte (0x01
  // reads as 1.25 * 2^-15, written 0x02): copy such bytes by their IEEE value (the f16 of the
  // byte), as Nx's scan copies them by slicing.
  std::string copy(const std::string& buf, const std::string& idx) const {
    if (type == DType::F8) return widen("nx_half_to_float(" + gen::load(DType::U8, buf, idx) + " << 8u)");
    return load(buf, idx);
  }

  // Position of element m of a level-0 row in the tensor (reversed when pc.rev != 0).
  static constexpr const char* kHelpers = R"GLSL(
uint at(uint o, uint m, uint len, uint i) { return (o * len + m) * pc.I + i; }
uint at0(uint o, uint m, uint i) { return at(o, pc.rev != 0u ? pc.n0 - 1u - m : m, pc.n0, i); }
)GLSL";

  void launch(const std::string& name, const std::string& body_src, std::vector<BufferView> views, uint64_t n,
              uint32_t nk, uint32_t nk1, uint32_t rev, uint32_t level0_len, uint32_t out_len) {
    std::string g;
    for (size_t b = 0; b + 1 < views.size(); ++b) g += gen::buffer(static_cast<uint32_t>(b), "s" + std::to_string(b), type, true);
    g += gen::buffer(static_cast<uint32_t>(views.size() - 1), "dst", type, false);
    g += "layout(push_constant) uniform Push { uint n; uint I; uint nk; uint nk1; uint rev; uint n0; uint len; } pc;\n";
    g += kHelpers;
    g += gen::elementwise_main(type, "dst",
                               "uint ii = i % pc.I, m = (i / pc.I) % pc.len, o = i / (pc.I * pc.len);\n" + body_src,
                               compute_type());
    struct { uint32_t n, I, nk, nk1, rev, n0, len; } push{static_cast<uint32_t>(n), static_cast<uint32_t>(I), nk, nk1,
                                                          rev, level0_len, out_len};
    gen::launch(device, gen::kernel(caps, op + "_" + name, g), views, gen::bytes_of(push), gen::elementwise_invocations(type, n));
  }

  Tensor run(const Tensor& x, uint64_t n, bool reverse, const Shape& shape) {
    // Up-sweep: T[0] = x, T[k+1] from T[k].
    std::vector<Tensor> T{x};
    std::vector<uint64_t> len{n};
    while (len.back() >= 2) {
      const uint64_t nk = len.back(), nk1 = nk / 2;
      Tensor t = empty_tensor(device, type, {static_cast<int64_t>(O * nk1 * I)}, op);
      const bool l0 = T.size() == 1;
      const std::string a = l0 ? "at0(o, 2u * m + 1u, ii)" : "at(o, 2u * m + 1u, pc.nk, ii)";
      const std::string b = l0 ? "at0(o, 2u * m, ii)" : "at(o, 2u * m, pc.nk, ii)";
      std::string body = "uint ia = " + a + ", ib = " + b + ";\n" + compute_type() + " a = " + load("s0", "ia") +
                         ", b = " + load("s0", "ib") + ";\n" + fun();
      launch(l0 ? "up0" : "up", body, {{T.back().buffer}, {t.buffer}}, O * nk1 * I, static_cast<uint32_t>(nk),
             static_cast<uint32_t>(nk1), reverse, static_cast<uint32_t>(n), static_cast<uint32_t>(nk1));
      T.push_back(t);
      len.push_back(nk1);
    }
    // Down-sweep: S[last] = T[last]; S[k] from S[k+1] and T[k]; S[0] written to the output.
    Tensor S = T.back();
    for (size_t k = T.size() - 1; k-- > 0;) {
      const uint64_t nk = len[k];
      const bool l0 = k == 0;
      Tensor s = l0 ? empty_tensor(device, type, shape, op) : empty_tensor(device, type, {static_cast<int64_t>(O * nk * I)}, op);
      // s0 = T[k], s1 = S[k+1]. At level 0 the output index is the tensor position: map it back.
      std::string body;
      if (l0) body = "if (pc.rev != 0u) m = pc.n0 - 1u - m;\n";
      const std::string tk = l0 ? "at0(o, m, ii)" : "at(o, m, pc.nk, ii)";
      body += compute_type() + " v;\n"
              "if (m == 0u) v = " + copy("s0", tk) + ";\n"
              "else if ((m & 1u) != 0u) { uint is = at(o, (m - 1u) / 2u, pc.nk1, ii); v = " + copy("s1", "is") + "; }\n"
              "else { uint is = at(o, m / 2u - 1u, pc.nk1, ii), it = " + tk + "; " + compute_type() + " a = " +
              load("s1", "is") + ", b = " + load("s0", "it") + "; " + fun("f") + " v = f; }\n";
      launch(l0 ? "down0" : "down", body, {{T[k].buffer}, {S.buffer}, {s.buffer}}, O * nk * I,
             static_cast<uint32_t>(nk), static_cast<uint32_t>(len[k + 1]), reverse, static_cast<uint32_t>(n),
             static_cast<uint32_t>(nk));
      S = s;
    }
    if (type_info(type).is_float()) keep_first_nan_bits(x, S, n, reverse);
    return S;
  }

  // The element Nx's scan passes on untouched (the first along the axis; the last, reversed)
  // keeps its bits, also a NaN's sign and payload, which the kernels above make canonical (as
  // Nx does for every element it computes): rewrite those NaNs from the input's bits, found NaN
  // by the type's own load. Packed types share words between elements, so theirs go in by
  // atomicAnd and atomicOr; f64 moves as uvec2 (its bits, whatever a double copy would do).
  void keep_first_nan_bits(const Tensor& x, const Tensor& out, uint64_t n, bool reverse) {
    const TypeInfo& t = type_info(type);
    std::string g, body;
    if (type == DType::F64) {
      g += "layout(std430, binding = 0) readonly buffer Src_t { uvec2 w[]; } src;\n"
           "layout(std430, binding = 1) buffer Dst_t { uvec2 w[]; } dst;\n";
      body = "uvec2 e = src.w[i];\n    if (isnan(packDouble2x32(e))) dst.w[i] = e;";
    } else {
      g += gen::buffer(0, "src", type, true) + gen::buffer(1, "dst", type, false);  // uint words
      body = "if (!isnan(" + gen::load(type, "src", "i") + ")) continue;\n    ";
      if (!t.packed()) {
        body += "dst.w[i] = src.w[i];";
      } else {
        const std::string p = std::to_string(32 / t.bits) + "u", mask = std::to_string((1ull << t.bits) - 1) + "u";
        body += "uint sh = (i % " + p + ") * " + std::to_string(t.bits) + "u;\n    atomicAnd(dst.w[i / " + p + "], ~(" +
                mask + " << sh));\n    atomicOr(dst.w[i / " + p + "], src.w[i / " + p + "] & (" + mask + " << sh));";
      }
    }
    g += "layout(push_constant) uniform Push { uint count; uint I; uint len; uint first; } pc;\n"
         "void main() {\n  for (uint j = gl_GlobalInvocationID.x; j < pc.count; j += grid_stride()) {\n"
         "    uint i = ((j / pc.I) * pc.len + pc.first) * pc.I + j % pc.I;\n    " + body + "\n  }\n}\n";
    struct { uint32_t count, I, len, first; } push{static_cast<uint32_t>(O * I), static_cast<uint32_t>(I),
                                                   static_cast<uint32_t>(n), reverse ? static_cast<uint32_t>(n - 1) : 0u};
    gen::launch(device, gen::kernel(caps, op + "_first", g), std::vector<BufferView>{{x.buffer}, {out.buffer}}, gen::bytes_of(push), O * I);
  }
};

}  // namespace

Tensor cumulative(CumulativeOp cop, const Tensor& x, int64_t axis_in, bool reverse, DType out_type) {
  const std::string op = op_name(cop);
  Device& device = x.device();
  require_type(device.caps(), x.type, op);
  if (type_info(x.type).is_complex()) fail(ErrorKind::Unsupported, op + ": complex not supported yet");
  if (out_type != x.type)
    fail(ErrorKind::InvalidArgument, op + ": output type " + std::string(type_name(out_type)) +
                                         " must be the input type " + type_name(x.type));
  const int64_t rank = std::max<int64_t>(1, x.rank());
  const int64_t axis = axis_in < 0 ? axis_in + rank : axis_in;
  if (axis < 0 || axis >= rank || (x.rank() == 0 && axis != 0))
    fail(ErrorKind::InvalidArgument, op + ": axis " + std::to_string(axis_in) + " out of range for shape " +
                                         shape_string(x.shape));
  gen::check_index_range(op, x.size());
  uint64_t O = 1, I = 1, n = x.rank() == 0 ? 1 : static_cast<uint64_t>(x.shape[axis]);
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (d < axis) O *= x.shape[d];
    if (d > axis) I *= x.shape[d];
  }
  Scan scan{op, cop, device, device.caps(), x.type, O, I};
  if (x.size() == 0 || n < 2) {
    // Nothing to combine: the scan is the tensor itself (a copy, so the result owns its buffer).
    Tensor out = empty_tensor(device, x.type, x.shape, op);
    if (x.bytes()) device.copy(*x.buffer, 0, *out.buffer, 0, (x.bytes() + 3) / 4 * 4);
    return out;
  }
  return scan.run(x, n, reverse, x.shape);
}

}  // namespace nxvk
