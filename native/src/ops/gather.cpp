#include "ops/gather.hpp"

#include "nxvk/ops.hpp"
#include "ops/codegen.hpp"

namespace nxvk::gather {
namespace {

constexpr uint32_t kWordsPerAxis = 7;  // stride, a, b, q, bound, dyn, dyn_sign

uint32_t word(const std::string& op, int64_t v) {
  if (v < std::numeric_limits<int32_t>::min() || v > int64_t(0xffffffffll))
    fail(ErrorKind::Unsupported, op + ": index value " + std::to_string(v) + " does not fit the 32-bit kernel index");
  return static_cast<uint32_t>(v);
}

// GLSL: `uint src_index(uint i, uint o, out bool inside)`: the element index of the source whose
// maps start at params word o (its base, then kWordsPerAxis words per axis).
std::string index_function(bool with_dyn) {
  std::string s =
      "uint src_index(uint i, uint o, out bool inside) {\n"
      "  uint rank = params.p[0];\n"
      "  uint idx = params.p[o];\n"
      "  inside = true;\n"
      "  for (uint d = rank; d > 0u; --d) {\n"
      "    uint dim = params.p[d];\n"
      "    uint c = i % dim;\n"
      "    i /= dim;\n"
      "    uint w = o + 1u + (d - 1u) * 7u;\n"
      "    int p = int(c) * int(params.p[w + 1u]) + int(params.p[w + 2u]);\n";
  if (with_dyn)
    s += "    int dsel = int(params.p[w + 5u]);\n"
         "    if (dsel >= 0) p += int(params.p[w + 6u]) * int(dyn.w[dsel]);\n";
  s += "    if (p < 0) { inside = false; return 0u; }\n"
       "    uint q = params.p[w + 3u];\n"
       "    uint up = uint(p);\n"
       "    if (q > 1u) { if (up % q != 0u) { inside = false; return 0u; } up /= q; }\n"
       "    if (up >= params.p[w + 4u]) { inside = false; return 0u; }\n"
       "    idx += up * params.p[w];\n"
       "  }\n"
       "  return idx;\n"
       "}\n";
  return s;
}

}  // namespace

std::vector<AxisMap> identity_maps(const Shape& shape) {
  std::vector<AxisMap> maps(shape.size());
  auto strides = gen::contiguous_strides(shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    maps[d].stride = strides[d];
    maps[d].bound = shape[d];
  }
  return maps;
}

Tensor run(const std::string& op, DType out_type, const Shape& out_shape, const std::vector<Source>& sources,
           const Tensor* dyn) {
  Device& device = sources.at(0).tensor.device();
  Tensor out = empty_tensor(device, out_type, out_shape, op);
  const int64_t n = out.size();
  if (n == 0) return out;
  gen::check_index_range(op, n);
  const Capabilities& caps = device.caps();
  const DType bt = gen::bits_type(out_type, caps);
  for (const auto& s : sources) {
    if (type_info(s.tensor.type).bits != type_info(out_type).bits)
      fail(ErrorKind::Internal, op + ": gather source of type " + type_name(s.tensor.type) + " for output " +
                                    type_name(out_type));
    if (&s.tensor.device() != &device)
      fail(ErrorKind::InvalidArgument, op + ": operands are on different devices");
    gen::check_index_range(op, s.tensor.size());
  }

  // Params: rank, output dims, then per source its base and axis maps.
  std::vector<uint32_t> params;
  params.push_back(static_cast<uint32_t>(out_shape.size()));
  for (int64_t d : out_shape) params.push_back(word(op, d));
  std::vector<uint32_t> offsets;
  for (const auto& s : sources) {
    offsets.push_back(static_cast<uint32_t>(params.size()));
    params.push_back(word(op, s.base));
    for (const auto& m : s.axes) {
      params.push_back(word(op, m.stride));
      params.push_back(word(op, m.a));
      params.push_back(word(op, m.b));
      params.push_back(word(op, m.q));
      params.push_back(word(op, m.bound));
      params.push_back(static_cast<uint32_t>(m.dyn));
      params.push_back(static_cast<uint32_t>(m.dyn_sign));
    }
  }

  const uint32_t ns = static_cast<uint32_t>(sources.size());
  std::string src;
  for (uint32_t k = 0; k < ns; ++k) src += gen::buffer(k, "s" + std::to_string(k), bt, true);
  src += gen::buffer(ns, "dst", bt, false);
  src += gen::params_buffer(ns + 1);
  if (dyn) src += gen::buffer(ns + 2, "dyn", DType::U32, true);
  src += "layout(push_constant) uniform Push { uint n; } pc;\n";
  src += index_function(dyn != nullptr);
  const std::string vt = gen::value_type(bt);
  std::string body = vt + " v;\n";
  std::string close;
  for (uint32_t k = 0; k < ns; ++k) {
    const std::string ks = std::to_string(k);
    if (k + 1 < ns) {
      body += "{ bool in" + ks + "; uint k" + ks + " = src_index(i, " + std::to_string(offsets[k]) + "u, in" + ks +
              ");\n if (in" + ks + ") v = " + gen::load(bt, "s" + ks, "k" + ks) + "; else ";
      close += "}";
    } else {
      body += "{ bool in" + ks + "; uint k" + ks + " = src_index(i, " + std::to_string(offsets[k]) + "u, in" + ks +
              "); v = " + gen::load(bt, "s" + ks, "k" + ks) + "; }";
    }
  }
  body += close + "\n";
  src += gen::elementwise_main(bt, "dst", body, vt, false);

  std::vector<BufferView> views;
  for (const auto& s : sources) views.push_back({s.tensor.buffer});
  views.push_back({out.buffer});
  views.push_back(device.params(params.data(), params.size() * 4));
  if (dyn) views.push_back({dyn->buffer});
  const uint32_t nn = static_cast<uint32_t>(n);
  gen::launch(device, gen::kernel(caps, op + "_gather_" + type_name(bt), src), views, gen::bytes_of(nn),
              gen::elementwise_invocations(bt, static_cast<uint64_t>(n)));
  return out;
}

Tensor clamped_starts(const std::string& op, const std::vector<Tensor>& starts, const Shape& dims,
                      const std::vector<int64_t>& lengths) {
  if (starts.size() != dims.size())
    fail(ErrorKind::InvalidArgument, op + ": expected " + std::to_string(dims.size()) + " start indices, got " +
                                         std::to_string(starts.size()));
  Device& device = starts.empty() ? *Device::open("") : starts[0].device();
  Tensor out = empty_tensor(device, DType::U32, {static_cast<int64_t>(std::max<size_t>(1, dims.size()))}, op);
  const Capabilities& caps = device.caps();
  for (size_t k = 0; k < starts.size(); ++k) {
    const Tensor& s = starts[k];
    if (!type_info(s.type).is_integer())
      fail(ErrorKind::InvalidArgument, op + ": start index " + std::to_string(k) + " must be an integer tensor, got " +
                                           type_name(s.type));
    if (s.size() != 1 || s.rank() != 0)
      fail(ErrorKind::InvalidArgument, op + ": start index " + std::to_string(k) + " must be a scalar, got shape " +
                                           shape_string(s.shape));
    if (&s.device() != &device) fail(ErrorKind::InvalidArgument, op + ": start indices are on different devices");
    const int64_t hi = dims[k] - lengths[k];
    // Clamp in a type wide enough for the start's type (Nx: min(max(start, 0), dim - length)).
    const std::string t = gen::value_type(s.type), load = gen::load(s.type, "s", "0u");
    const bool is_unsigned = !type_info(s.type).is_signed();
    std::string src = gen::buffer(0, "s", s.type, true) + gen::buffer(1, "o", DType::U32, false) +
                      "layout(push_constant) uniform Push { uint d; uint hi; } pc;\n"
                      "void main() {\n  if (gl_GlobalInvocationID.x != 0u) return;\n  " +
                      t + " v = " + t + "(" + load + ");\n" +
                      (is_unsigned ? "" : "  if (v < " + t + "(0)) v = " + t + "(0);\n") + "  if (v > " + t +
                      "(pc.hi)) v = " + t + "(pc.hi);\n  o.w[pc.d] = uint(v);\n}\n";
    struct { uint32_t d, hi; } push{static_cast<uint32_t>(k), static_cast<uint32_t>(hi)};
    BufferView views[] = {{s.buffer}, {out.buffer}};
    gen::launch(device, gen::kernel(caps, op + "_start_" + type_name(s.type), src), views, gen::bytes_of(push), 1);
  }
  return out;
}

std::vector<Tensor> to_out_type(const std::string& op, DType out_type, const std::vector<Tensor>& xs) {
  std::vector<Tensor> out;
  for (const auto& x : xs) {
    if (type_info(x.type).is_complex() != type_info(out_type).is_complex() && x.type != out_type)
      fail(ErrorKind::Unsupported, op + ": converting " + std::string(type_name(x.type)) + " to " +
                                       type_name(out_type) + " is not supported yet");
    // Nx's as_type rules (ops/cast.cpp); a same-type operand is passed through with its bits.
    out.push_back(x.type == out_type ? x : as_type(x, out_type));
  }
  return out;
}

}  // namespace nxvk::gather
