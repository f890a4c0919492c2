// unary, binary, select and clip: one generated kernel per (op, types, access pattern). Operands
// are read in place through broadcast strides; dims are collapsed on the host so that the common
// cases (same shape, scalar, [N, M] with [M] or [N, 1]) need no index arithmetic or one division.
#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "ops/codegen.hpp"
#include "ops/elementwise_internal.hpp"
#include "ops/math_library.hpp"

namespace nxvk {
namespace elementwise {

std::vector<Access> plan_access(const Shape& out_shape, const std::vector<const Shape*>& operands,
                                std::vector<uint32_t>& params) {
  const size_t rank = out_shape.size(), k = operands.size();
  // Per output dim (size > 1 only): its size and each operand's stride (0 when broadcast).
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides(k);
  std::vector<std::vector<int64_t>> op_strides(k);
  for (size_t o = 0; o < k; ++o) op_strides[o] = gen::contiguous_strides(*operands[o]);
  for (size_t d = 0; d < rank; ++d) {
    if (out_shape[d] == 1) continue;
    dims.push_back(out_shape[d]);
    for (size_t o = 0; o < k; ++o) {
      const Shape& s = *operands[o];
      const int64_t od = static_cast<int64_t>(d) - static_cast<int64_t>(rank - s.size());
      strides[o].push_back(od >= 0 && s[od] == out_shape[d] ? op_strides[o][od] : 0);
    }
  }
  // Collapse dim j into the dim before it where every operand walks them as one.
  std::vector<int64_t> cd;
  std::vector<std::vector<int64_t>> cs(k);
  for (size_t j = 0; j < dims.size(); ++j) {
    bool merge = !cd.empty();
    for (size_t o = 0; o < k && merge; ++o) merge = cs[o].back() == strides[o][j] * dims[j];
    if (merge) {
      cd.back() *= dims[j];
      for (size_t o = 0; o < k; ++o) cs[o].back() = strides[o][j];
    } else {
      cd.push_back(dims[j]);
      for (size_t o = 0; o < k; ++o) cs[o].push_back(strides[o][j]);
    }
  }
  const std::vector<int64_t> contiguous = gen::contiguous_strides(cd);
  std::vector<Access> out(k);
  for (size_t o = 0; o < k; ++o) {
    const std::string fn = "nx_index" + std::to_string(o);
    const uint32_t offset = static_cast<uint32_t>(params.size());
    out[o].param_offset = offset;
    if (std::all_of(cs[o].begin(), cs[o].end(), [](int64_t s) { return s == 0; })) {
      out[o].kind = Access::Kind::scalar;
      out[o].index = "0u";
    } else if (cs[o] == contiguous) {
      out[o].kind = Access::Kind::same;
      out[o].index = "i";
    } else if (cd.size() == 2) {
      out[o].kind = Access::Kind::rank2;
      out[o].inner = cd[1];
      out[o].outer_stride = cs[o][0];
      out[o].inner_stride = cs[o][1];
      params.push_back(static_cast<uint32_t>(cd[1]));
      params.push_back(static_cast<uint32_t>(cs[o][0]));
      params.push_back(static_cast<uint32_t>(cs[o][1]));
      const std::string p = std::to_string(offset);
      out[o].functions = "uint " + fn + "(uint i) {\n  uint d1 = params.p[" + p + "];\n  uint row = i / d1;\n" +
                         "  return row * params.p[" + p + " + 1u] + (i - row * d1) * params.p[" + p + " + 2u];\n}\n";
      out[o].index = fn + "(i)";
    } else {
      out[o].kind = Access::Kind::strided;
      gen::append_strided_params(params, cd, cs[o]);
      out[o].functions = gen::strided_index_function(fn, offset);
      out[o].index = fn + "(i)";
    }
  }
  return out;
}

namespace {

void check_real(DType t, const std::string& op) {
  if (type_info(t).is_complex()) fail(ErrorKind::Unsupported, op + ": complex types are not supported yet");
}

void check_device(const Tensor& a, const Tensor& b, const std::string& op) {
  if (&a.device() != &b.device())
    fail(ErrorKind::InvalidArgument, op + ": operands are on different devices");
}

void check_broadcast(const Shape& operand, const Shape& out, const std::string& op, const char* what) {
  bool ok = operand.size() <= out.size();
  for (size_t i = 0; ok && i < operand.size(); ++i) {
    const int64_t d = operand[operand.size() - 1 - i], o = out[out.size() - 1 - i];
    ok = d == o || d == 1;
  }
  if (!ok)
    fail(ErrorKind::InvalidArgument, op + ": " + what + " shape " + shape_string(operand) +
                                         " does not broadcast to the output shape " + shape_string(out));
}

std::string vec4_decl(size_t binding, const std::string& name) {
  return "layout(std430, binding = " + std::to_string(binding) + ") readonly buffer " + name + "4_t { uvec4 w[]; } " +
         name + "4;\n";
}

// The body's statements with v settled (its slow statements run in place where needed).
std::string settled(const elementwise::Body& body) {
  return body.slow.empty() ? body.statements : body.statements + " if (slow) { " + body.slow + " }";
}

bool word_type(DType t) { return t == DType::U32 || t == DType::S32 || t == DType::F32; }

// Whether a body's unsettled lanes are settled by a second kernel (else in place). The accurate
// function's code in a kernel slows its fast path even where it never runs: on lavapipe 2-8x
// (sinh 317 ms against 39 without it); on an H100 (fifteenth session, 256M f32) the second kernel
// gave log 97% of the copy against 91%, log1p 96/88, sinh 89-94/74, atan 72/67-68,
// erfc 53/47, and no function lost more than the spread of identical runs (docs/BENCHMARKS.md).
// So a second kernel on every device; NX_VULKAN_SETTLE=inline keeps them in place (the tests run
// both ways).
bool settle_in_second_kernel() {
  const char* mode = std::getenv("NX_VULKAN_SETTLE");
  return !(mode && std::string_view(mode) == "inline");
}

// What a two-kernel body without a table binds in the table's place (a binding must exist).
constexpr uint32_t kNoTableWord[] = {0};

// The value of a 32-bit element from its storage word.
std::string from_word(DType t, const std::string& w) {
  if (t == DType::F32) return "uintBitsToFloat(" + w + ")";
  if (t == DType::S32) return "int(" + w + ")";
  return w;
}

// The list of what a second kernel settles: a count, then indices (elements, or words of packed
// outputs); an index past the capacity is not stored, and the second kernel then settles every
// one instead (a count above the capacity says so).
std::string slow_list(size_t inputs) {
  return "layout(std430, binding = " + std::to_string(table_binding(inputs) + 1) +
         ") buffer NxSlow_t { uint count; uint index[]; } nx_slow;\n"
         "void nx_defer(uint i) {\n  uint slot = atomicAdd(nx_slow.count, 1u);\n"
         "  if (slot < uint(nx_slow.index.length())) nx_slow.index[slot] = i;\n}\n";
}

// main() for packed outputs (f16, bf16, 8-bit and 16-bit integers: 32 / bits elements per word)
// with a deferring body (the math fast paths): a word with an unsettled lane is listed, and the
// second kernel (*second) recomputes that whole word, settling its lanes, and writes it again, so
// no two invocations write halves of one word. `lane` loads the operands of element i.
std::string packed_main(DType out_type, const Body& body, const std::string& lane, size_t inputs,
                        std::string* second) {
  const std::string per = std::to_string(32 / type_info(out_type).bits) + "u";
  const std::string store = gen::store_value(out_type, "v", body.v_type);
  auto word_loop = [&](const std::string& statements) {
    return "    uint packed = 0u;\n    [[unroll]] for (uint e = 0u; e < " + per + "; ++e) {\n      uint i = word * " + per +
           " + e;\n      if (i >= pc.n) break;\n      " + lane + "\n      " + statements + "\n      packed |= " + store +
           " << " + gen::packed_shift(out_type, "e") + ";\n    }\n    dst.w[word] = packed;\n";
  };
  const std::string words = "  uint words = (pc.n + " + per + " - 1u) / " + per + ";\n";
  *second = slow_list(inputs) + "void main() {\n  " + body.setup + "\n" + words +
            "  uint listed = nx_slow.count;\n  bool every = listed > uint(nx_slow.index.length());\n"
            "  uint m = every ? words : listed;\n"
            "  for (uint k = gl_GlobalInvocationID.x; k < m; k += grid_stride()) {\n"
            "    uint word = every ? k : nx_slow.index[k];\n" +
            word_loop(settled(body)) + "  }\n}\n";
  return slow_list(inputs) + "void main() {\n  " + body.setup + "\n" + words +
         "  for (uint word = gl_GlobalInvocationID.x; word < words; word += grid_stride()) {\n    bool any_slow = false;\n" +
         word_loop(body.statements + " any_slow = any_slow || slow;") + "    if (any_slow) nx_defer(word);\n  }\n}\n";
}

// main() for 32-bit outputs: each invocation computes four consecutive elements, reading
// same-shape 32-bit operands and writing the output as one 16-byte vector (a warp then moves
// 512 contiguous bytes per access, which the scalar loop cannot keep in flight), a rank-2
// broadcast operand by stepping its row and column instead of dividing per element, and a
// scalar operand once. The last n % 4 elements are done one per invocation.
// With `second`, where the body can defer (slow statements, no operand stepped per lane), the lanes
// the fast statements leave unsettled are not settled here: their indices are appended to a list
// (nx_slow, bound after the table), and *second receives the declarations and main() of the
// kernel that settles them; else *second stays empty and they settle here.
std::string vector_main(const std::vector<const Tensor*>& inputs, const std::vector<Access>& access, DType out_type,
                        const Body& body, bool unroll, std::string* second = nullptr) {
  std::string decls, per_quad, per_lane, step, tail, prologue;
  // A heavy body (one with slow statements: the math fast paths) keeps the next quad's load in
  // flight while it computes this one's.
  const bool prefetch = !body.slow.empty();
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::string var(1, static_cast<char>('a' + k)), name = "in_" + var;
    const DType t = inputs[k]->type;
    const std::string vt = gen::value_type(t);
    const Access& ac = access[k];
    tail += "uint i_" + var + " = " + ac.index + "; " + vt + " " + var + " = " + gen::load(t, name, "i_" + var) + "; ";
    switch (ac.kind) {
      case Access::Kind::same:
        if (word_type(t)) {
          decls += vec4_decl(k, name);
          if (prefetch) {
            prologue += "uvec4 next_" + var + " = q0 < quads ? " + name + "4.w[q0] : uvec4(0u); ";
            per_quad += "uvec4 r_" + var + " = next_" + var + "; if (q + grid_stride() < quads) next_" + var + " = " +
                        name + "4.w[q + grid_stride()]; ";
          } else {
            per_quad += "uvec4 r_" + var + " = " + name + "4.w[q]; ";
          }
          per_lane += vt + " " + var + " = " + from_word(t, "nx_lane(r_" + var + ", e)") + "; ";
        } else {
          per_lane += vt + " " + var + " = " + gen::load(t, name, "i") + "; ";
        }
        break;
      case Access::Kind::scalar:
        per_quad += vt + " " + var + "_0 = " + gen::load(t, name, "0u") + "; ";
        per_lane += vt + " " + var + " = " + var + "_0; ";
        break;
      case Access::Kind::rank2: {
        const std::string o = std::to_string(ac.param_offset);
        if (ac.inner % 4 == 0) {
          // Quads start at multiples of 4 and never wrap a row: one division per quad, and one
          // load when the operand is constant along the row or contiguous and aligned.
          per_quad += "uint row_" + var + " = (q * 4u) / params.p[" + o + "]; uint col_" + var + " = q * 4u - row_" +
                      var + " * params.p[" + o + "]; uint base_" + var + " = row_" + var + " * params.p[" + o +
                      " + 1u] + col_" + var + " * params.p[" + o + " + 2u]; ";
          if (ac.inner_stride == 0) {
            per_quad += vt + " " + var + "_0 = " + gen::load(t, name, "base_" + var) + "; ";
            per_lane += vt + " " + var + " = " + var + "_0; ";
          } else if (ac.inner_stride == 1 && ac.outer_stride % 4 == 0 && word_type(t)) {
            decls += vec4_decl(k, name);
            per_quad += "uvec4 r_" + var + " = " + name + "4.w[base_" + var + " >> 2]; ";
            per_lane += vt + " " + var + " = " + from_word(t, "nx_lane(r_" + var + ", e)") + "; ";
          } else {
            per_lane += vt + " " + var + " = " + gen::load(t, name, "base_" + var + " + e * params.p[" + o + " + 2u]") + "; ";
          }
          break;
        }
        per_quad += "uint d1_" + var + " = params.p[" + o + "]; uint row_" + var + " = (q * 4u) / d1_" + var +
                    "; uint col_" + var + " = q * 4u - row_" + var + " * d1_" + var + "; ";
        per_lane += vt + " " + var + " = " + gen::load(t, name, "row_" + var + " * params.p[" + o + " + 1u] + col_" +
                                                     var + " * params.p[" + o + " + 2u]") + "; ";
        step += "if (++col_" + var + " == d1_" + var + ") { col_" + var + " = 0u; ++row_" + var + "; } ";
        break;
      }
      case Access::Kind::strided:
        per_lane += vt + " " + var + " = " + gen::load(t, name, ac.index) + "; ";
        break;
    }
  }
  // Lanes the fast statements leave unsettled (body.slow) are redone after the four, in one
  // rolled loop; operands stepped per lane (step) cannot be re-read, so those settle in place.
  const bool defer = !body.slow.empty() && step.empty();
  if (!defer) second = nullptr;
  const std::string list = !second ? std::string() : slow_list(inputs.size());
  const std::string store = gen::store_value(out_type, "v", body.v_type);
  // Lanes by selects, not by dynamic indexing (which a loop left rolled would put in memory).
  std::string s = list + decls +
                  "uint nx_lane(uvec4 r, uint e) { return e == 0u ? r.x : (e == 1u ? r.y : (e == 2u ? r.z : r.w)); }\n"
                  "uvec4 nx_set_lane(uvec4 r, uint e, uint v) {\n"
                  "  return uvec4(e == 0u ? v : r.x, e == 1u ? v : r.y, e == 2u ? v : r.z, e == 3u ? v : r.w);\n}\n";
  s += "layout(std430, binding = " + std::to_string(inputs.size()) + ") writeonly buffer dst4_t { uvec4 w[]; } dst4;\n";
  s += "void main() {\n  " + body.setup + "\n  uint quads = pc.n / 4u;\n";
  s += "  uint q0 = gl_GlobalInvocationID.x; " + prologue + "\n";
  s += "  for (uint q = q0; q < quads; q += grid_stride()) {\n";
  // Lanes that settle in place carry the slow statements (a math function's accurate code) in
  // every copy: keep those rolled.
  if (!defer && !body.slow.empty()) unroll = false;
  const std::string statements = defer ? body.statements + " if (slow) slowmask |= 1u << e;" : settled(body);
  s += "    " + per_quad + "\n    uvec4 outv = uvec4(0u);" + (defer ? " uint slowmask = 0u;" : "") + "\n";
  const std::string lane = "      uint i = q * 4u + e;\n      " + per_lane + "\n      " + statements + "\n" +
                           "      outv = nx_set_lane(outv, e, " + store + ");\n      " + step + "\n    }\n";
  if (unroll) {
    // Four copies written out, not [[unroll]]: SPIRV-Tools' loop unroller (Debian 12's) drops
    // the NoContraction decorations of the copies, and the exact float code needs them.
    for (int e = 0; e < 4; ++e) s += "    {\n      const uint e = " + std::to_string(e) + "u;\n" + lane;
  } else {
    s += "    [[dont_unroll]] for (uint e = 0u; e < 4u; ++e) {\n" + lane;
  }
  if (second)
    s += "    if (slowmask != 0u) {\n      for (uint e = 0u; e < 4u; ++e)\n"
         "        if ((slowmask & (1u << e)) != 0u) nx_defer(q * 4u + e);\n    }\n";
  else if (defer)
    s += "    if (slowmask != 0u) {\n      [[dont_unroll]] for (uint e = 0u; e < 4u; ++e) {\n"
         "        if ((slowmask & (1u << e)) == 0u) continue;\n        uint i = q * 4u + e;\n        " + per_lane +
         "\n        " + body.statements + "\n        " + body.slow + "\n        outv = nx_set_lane(outv, e, " + store +
         ");\n      }\n    }\n";
  s += "    dst4.w[q] = outv;\n  }\n";
  s += "  uint i = quads * 4u + gl_GlobalInvocationID.x;\n";
  if (second) {
    s += "  if (i < pc.n) {\n    " + tail + "\n    " + body.statements + "\n    if (slow) nx_defer(i);\n    dst.w[i] = " +
         store + ";\n  }\n}\n";
    // The second kernel: the listed indices, or, where the list overflowed, every element.
    *second = list + decls + "void main() {\n  " + body.setup +
              "\n  uint listed = nx_slow.count;\n  bool every = listed > uint(nx_slow.index.length());\n"
              "  uint m = every ? pc.n : listed;\n"
              "  for (uint k = gl_GlobalInvocationID.x; k < m; k += grid_stride()) {\n"
              "    uint i = every ? k : nx_slow.index[k];\n    " + tail + "\n    " + body.statements +
              "\n    if (slow) {\n      " + body.slow + "\n      dst.w[i] = " + store + ";\n    }\n  }\n}\n";
    return s;
  }
  s += "  if (i < pc.n) {\n    " + tail + "\n    " + settled(body) + "\n    dst.w[i] = " + store + ";\n  }\n}\n";
  return s;
}

// Generates and runs one elementwise kernel over `inputs` (named a, b, c, ... in `body`).
Tensor run(const std::string& label, const std::vector<const Tensor*>& inputs, DType out_type, const Shape& out_shape,
           const elementwise::Body& body, bool math) {
  Device& device = inputs[0]->device();
  for (const Tensor* t : inputs) require_type(device.caps(), t->type, label);
  require_type(device.caps(), out_type, label);
  Capabilities caps = device.caps();  // the kernel's
  if (body.without_f64) caps.float64 = false;
  const int64_t n64 = shape_size(out_shape);
  gen::check_index_range(label, n64);
  Tensor out = empty_tensor(device, out_type, out_shape, label);
  if (n64 == 0) return out;
  std::vector<uint32_t> params;
  std::vector<const Shape*> shapes;
  for (const Tensor* t : inputs) shapes.push_back(&t->shape);
  std::vector<Access> access = plan_access(out_shape, shapes, params);
  if (params.empty()) params.push_back(0);
  // The libraries (180 KB with the math library) depend only on the kernel's capabilities: they
  // are the pipeline's prefix, named by what sets those, and built only when it is created.
  Kernel kernel{label};
  kernel.prefix_key = std::string(math ? "elementwise+math" : "elementwise") + (body.without_f64 ? "/no-f64" : "");
  kernel.prefix = [caps, math] {
    return gen::preamble(caps) + (math ? gen::math_library_glsl(caps) : std::string()) + helpers(caps);
  };
  std::string src = body.functions;
  std::string loads;
  std::vector<BufferView> views;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::string var(1, static_cast<char>('a' + k));
    src += gen::buffer(static_cast<uint32_t>(k), "in_" + var, inputs[k]->type, true);
    loads += gen::value_type(inputs[k]->type) + " " + var + " = " + gen::load(inputs[k]->type, "in_" + var, "i_" + var) + "; ";
    views.push_back({inputs[k]->buffer});
  }
  const uint32_t nb = static_cast<uint32_t>(inputs.size());
  src += gen::buffer(nb, "dst", out_type, false) + gen::params_buffer(nb + 1) +
         "layout(push_constant) uniform Push { uint n; } pc;\n";
  std::string index_decls;
  for (size_t k = 0; k < inputs.size(); ++k) {
    src += access[k].functions;
    index_decls += "uint i_" + std::string(1, static_cast<char>('a' + k)) + " = " + access[k].index + "; ";
  }
  const uint32_t n = static_cast<uint32_t>(n64);
  uint64_t invocations = gen::elementwise_invocations(out_type, n);
  // A body with slow statements (an accurate math function behind a fast path) settles its rare
  // unsettled lanes in place, or in a second kernel over a list of their indices
  // (settle_in_second_kernel; vector_main says whether the body can: `second` non-empty).
  std::string second;
  const std::string common = src;  // what both kernels declare
  if (word_type(out_type)) {
    const bool try_second = !body.slow.empty() && settle_in_second_kernel();
    src += vector_main(inputs, access, out_type, body, !body.large, try_second ? &second : nullptr);
    invocations = std::max<uint64_t>(n / 4, n % 4);
    // A body whose setup reads a table into shared memory (the math functions' exp and piece
    // tables, up to 2.4 KB) does so once per workgroup: each invocation covers at least 16
    // elements, so a workgroup reads its table once per 4K elements or more (32 KB of traffic).
    // At 256M that is the launch's usual 65535 workgroups: on the H100 a cap of 8192 cost 4-5
    // points of the copy for most table functions (likely its tail: 7.76 waves if each of the
    // 132 SMs holds 8 workgroups) and gained 2-3 for erfc and sigmoid (docs/BENCHMARKS.md).
    if (!body.setup.empty()) invocations = std::min<uint64_t>(invocations, (uint64_t(n) + 15) / 16);
  } else {
    if (!body.slow.empty() && settle_in_second_kernel())
      src += packed_main(out_type, body, index_decls + loads, inputs.size(), &second);
    else
      src += gen::elementwise_main(out_type, "dst", index_decls + loads + "\n      " + settled(body), body.v_type,
                                   true, body.setup);
    // As above: each invocation covers at least 16 elements where a workgroup reads a table.
    if (!body.setup.empty()) invocations = std::min<uint64_t>(invocations, (uint64_t(n) + 15) / 16);
  }
  views.push_back({out.buffer});
  views.push_back(device.params(params.data(), params.size() * sizeof(uint32_t)));
  if (!body.table.empty()) {
    if (views.size() != table_binding(inputs.size()))
      fail(ErrorKind::Internal, label + ": the table's binding is not after the params block");
    // In device memory (params blocks are host memory, which every workgroup would read), once
    // per device.
    views.push_back({device.constant(std::as_bytes(body.table), label.c_str())});
  }
  if (second.empty()) {
    kernel.glsl = std::move(src);
    gen::launch(device, std::move(kernel), views, gen::bytes_of(n), invocations);
    return out;
  }
  if (body.table.empty()) views.push_back({device.constant(std::as_bytes(std::span(kNoTableWord)), label.c_str())});
  // Room for n / 64 + 1024 indices (the fast paths leave about 1 in 30,000), n at most.
  const uint64_t capacity = std::min<uint64_t>(n, n / 64 + 1024);
  auto list = device.allocate(4 * (capacity + 1), label.c_str());
  device.fill(*list, 0, 4, 0);
  views.push_back({list});
  Kernel settle = kernel;
  settle.name = label + "_unsettled";
  settle.glsl = common + second;
  kernel.glsl = std::move(src);
  gen::launch(device, std::move(kernel), views, gen::bytes_of(n), invocations);
  // At least 64 workgroups, and one invocation per 256 elements (most find the list short and
  // return at once), so that where it overflowed a large tensor is redone by that many, not by 64
  // workgroups. (One per slot of the list cost lavapipe 5-8% at 4M elements, in empty workgroups.)
  gen::launch(device, std::move(settle), views, gen::bytes_of(n),
              std::min<uint64_t>(n, std::max<uint64_t>(64 * gen::kWorkgroupSize, n / 256)));
  return out;
}

std::string types_label(const std::string& op, const std::vector<const Tensor*>& in, DType out) {
  std::string s = op;
  for (const Tensor* t : in) s += std::string("_") + type_name(t->type);
  return s + "_" + type_name(out);
}

}  // namespace
}  // namespace elementwise

Tensor unary(UnaryOp op, const Tensor& x, DType out_type) {
  const std::string name = op_name(op);
  elementwise::check_real(x.type, name);
  if (op == UnaryOp::conjugate || type_info(out_type).is_complex())
    fail(ErrorKind::Unsupported, name + ": complex types are not supported yet");
  const elementwise::Body body = elementwise::unary_body(x.device().caps(), op, x.type, out_type);
  return elementwise::run(elementwise::types_label(name, {&x}, out_type), {&x}, out_type, x.shape, body,
                          elementwise::is_float_op(op));
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, DType out_type, const Shape& out_shape) {
  const std::string name = op_name(op);
  elementwise::check_real(a.type, name);
  elementwise::check_real(b.type, name);
  elementwise::check_real(out_type, name);
  elementwise::check_device(a, b, name);
  elementwise::check_broadcast(a.shape, out_shape, name, "left operand");
  elementwise::check_broadcast(b.shape, out_shape, name, "right operand");
  const bool comparison = op == BinaryOp::equal || op == BinaryOp::not_equal || op == BinaryOp::greater ||
                          op == BinaryOp::less || op == BinaryOp::greater_equal || op == BinaryOp::less_equal ||
                          op == BinaryOp::logical_and || op == BinaryOp::logical_or || op == BinaryOp::logical_xor;
  if (comparison && out_type != DType::U8)
    fail(ErrorKind::InvalidArgument, name + ": the output type must be u8, got " + type_name(out_type));
  const elementwise::Body body = elementwise::binary_body(a.device().caps(), op, a.type, b.type, out_type);
  return elementwise::run(elementwise::types_label(name, {&a, &b}, out_type), {&a, &b}, out_type, out_shape, body,
                          op == BinaryOp::pow || op == BinaryOp::atan2);
}

Tensor select(const Tensor& pred, const Tensor& on_true, const Tensor& on_false, DType out_type,
              const Shape& out_shape) {
  for (DType t : {pred.type, on_true.type, on_false.type, out_type}) elementwise::check_real(t, "select");
  elementwise::check_device(pred, on_true, "select");
  elementwise::check_device(pred, on_false, "select");
  elementwise::check_broadcast(pred.shape, out_shape, "select", "predicate");
  elementwise::check_broadcast(on_true.shape, out_shape, "select", "on_true");
  elementwise::check_broadcast(on_false.shape, out_shape, "select", "on_false");
  const Capabilities& caps = pred.device().caps();
  if (type_info(out_type).is_integer() && (type_info(on_true.type).is_float() || type_info(on_false.type).is_float()))
    fail(ErrorKind::InvalidArgument, std::string("select: integer output type ") + type_name(out_type) +
                                         " for float branches");
  const std::string vt = gen::value_type(out_type);
  const elementwise::Body body{vt + " v = " + gen::nonzero(pred.type, "a") + " ? " +
                                   gen::convert(caps, on_true.type, out_type, "b") + " : " +
                                   gen::convert(caps, on_false.type, out_type, "c") + ";",
                               vt};
  return elementwise::run(elementwise::types_label("select", {&pred, &on_true, &on_false}, out_type),
                          {&pred, &on_true, &on_false}, out_type, out_shape, body, false);
}

Tensor clip(const Tensor& x, const Tensor& min, const Tensor& max, DType out_type) {
  for (DType t : {x.type, min.type, max.type, out_type}) elementwise::check_real(t, "clip");
  elementwise::check_device(x, min, "clip");
  elementwise::check_device(x, max, "clip");
  if (min.rank() != 0 || max.rank() != 0)
    fail(ErrorKind::InvalidArgument, "clip: min and max must be scalars, got shapes " + shape_string(min.shape) +
                                         " and " + shape_string(max.shape));
  const Capabilities& caps = x.device().caps();
  const bool fl = type_info(out_type).is_float();
  if (!fl && (type_info(x.type).is_float() || type_info(min.type).is_float() || type_info(max.type).is_float()))
    fail(ErrorKind::InvalidArgument, std::string("clip: integer output type ") + type_name(out_type) +
                                         " with a float operand");
  // As Nx.BinaryBackend: m = x > min ? x : min; m < max ? m : max (NaN compares false).
  const std::string vt = gen::value_type(out_type);
  auto cv = [&](DType t, const char* v) { return gen::convert(caps, t, out_type, v); };
  const std::string gt_x_min = elementwise::compare(caps, BinaryOp::greater, x.type, "a", min.type, "b");
  const std::string lt_x_max = elementwise::compare(caps, BinaryOp::less, x.type, "a", max.type, "c");
  const std::string lt_min_max = elementwise::compare(caps, BinaryOp::less, min.type, "b", max.type, "c");
  const elementwise::Body body{vt + " v = " + gt_x_min + " ? (" + lt_x_max + " ? " + cv(x.type, "a") + " : " +
                                   cv(max.type, "c") + ") : (" + lt_min_max + " ? " + cv(min.type, "b") + " : " +
                                   cv(max.type, "c") + ");",
                               vt};
  return elementwise::run(elementwise::types_label("clip", {&x, &min, &max}, out_type), {&x, &min, &max}, out_type,
                          x.shape, body, false);
}

}  // namespace nxvk
