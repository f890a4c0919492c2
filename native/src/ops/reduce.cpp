// Reductions (sum, product, reduce_max, reduce_min, all, any) and argmax/argmin.
//
// The tensor is collapsed to one of three layouts and reduced by kernels whose order of
// combination is fixed by the shape alone (never by workgroup size, subgroup size or the number
// of workgroups), so results are bit-identical on every run and every device:
//  - [K, R] rows (reduced axes innermost): R <= kSequentialRow: one invocation per row, in
//    sequence; else blocks of up to kBlock elements, fewer for shorter rows (per_lane; coalesced:
//    lane l reads l, l + 256, ...; then a fixed pairwise tree), partial states per block,
//    repeated until one state per row;
//  - [B, R, N] columns (reduced axes between kept ones): one invocation per output column walks
//    kColumnChunk rows in sequence (coalesced across invocations), partials repeated;
//  - anything else is transposed (a bit copy) to [K, R] first.
// Partial states are kept in the accumulator type (f32 sums in f64 where the device has f64)
// and rounded to the output type once, at the end. max/min of floats and argmax/argmin carry
// the element index, so ties (-0.0 vs 0.0, equal values) resolve exactly as Nx's sequential
// scan does, whatever the tree: the combination is then associative and commutative.
#include <algorithm>
#include <atomic>

#include "nxvk/ops.hpp"
#include "ops/codegen.hpp"
#include "ops/reduce_internal.hpp"

namespace nxvk {
namespace reduce_internal {
namespace {
std::atomic<uint32_t> g_workgroup{0};
}
void set_workgroup_size(uint32_t size) { g_workgroup = size; }
uint32_t workgroup_size() {
  uint32_t s = g_workgroup;
  return s ? s : gen::kWorkgroupSize;
}
}  // namespace reduce_internal

namespace {
using namespace reduce_internal;

enum class Kind { Sum, Product, Max, Min, All, Any, ArgMax, ArgMin };

// What a reduction carries and how it combines, as GLSL.
struct StateSpec {
  Kind kind;
  DType in, out;
  std::string acc;    // GLSL accumulator type
  DType acc_store;    // how partial values are stored
  bool has_idx = false;
  bool tie_high = false;
  std::string glsl;   // struct S, identity(), combine(), from_value()
  std::string final_expr;  // expression of S s giving the output value
  std::string final_type;  // GLSL type of final_expr
};

DType store_type_of(const std::string& acc) {
  if (acc == "double") return DType::F64;
  if (acc == "float") return DType::F32;
  if (acc == "int") return DType::S32;
  if (acc == "uint64_t") return DType::U64;
  if (acc == "int64_t") return DType::S64;
  return DType::U32;
}

// The identity of max (highest = false) or min as a GLSL value_type(t) literal: the type's lowest
// or highest value (floats: -inf or +inf, which packed float types store as Nx does).
std::string lowest(DType t, bool highest) {
  const TypeInfo& ti = type_info(t);
  switch (t) {
    case DType::U64: return highest ? "uint64_t(0xffffffffffffffffUL)" : "uint64_t(0)";
    case DType::S64: return highest ? "int64_t(0x7fffffffffffffffL)" : "(int64_t(-0x7fffffffffffffffL) - int64_t(1))";
    case DType::F64: return highest ? "packDouble2x32(uvec2(0u, 0x7ff00000u))" : "packDouble2x32(uvec2(0u, 0xfff00000u))";
    default: break;
  }
  if (ti.is_float()) return highest ? "uintBitsToFloat(0x7f800000u)" : "uintBitsToFloat(0xff800000u)";
  const uint32_t b = ti.bits;
  if (ti.is_signed()) {
    const int64_t hi = (int64_t(1) << (b - 1)) - 1;
    return highest ? std::to_string(hi) : "(" + std::to_string(-hi) + " - 1)";
  }
  return highest ? std::to_string((uint64_t(1) << b) - 1) + "u" : "0u";
}

StateSpec make_spec(Kind kind, DType in, DType out, const Capabilities& caps, bool tie_high) {
  StateSpec s{kind, in, out};
  s.tie_high = tie_high;
  const TypeInfo& ti = type_info(in);
  const std::string vt = gen::value_type(in);
  // Floats held as f32 compare by the subnormal-safe helpers (codegen's preamble): devices may
  // flush subnormals in float comparisons, and rank -0.0 below +0.0 in a min/max instruction.
  const bool f32v = ti.is_float() && vt == "float";
  // x ranks above y for max (mx) or min (below), NaN aside.
  auto beats = [&](bool mx, const std::string& x, const std::string& y) {
    const std::string& lo = mx ? y : x, & hi = mx ? x : y;
    return f32v ? "nx_lt_f32(" + lo + ", " + hi + ")" : lo + " < " + hi;
  };
  std::string identity, combine, from, from_exact;
  switch (kind) {
    case Kind::Sum:
    case Kind::Product: {
      const bool sum = kind == Kind::Sum;
      if (type_info(out).is_float()) s.acc = out == DType::F64 ? "double" : gen::float_compute_type(caps);
      else s.acc = gen::value_type(out);
      identity = "s.v = " + s.acc + (sum ? "(0)" : "(1)") + ";";
      if (s.acc == "float")  // without f64: f32 arithmetic that keeps subnormals
        combine = std::string("a.v = ") + (sum ? "nx_add_f32" : "nx_mul_f32") + "(a.v, b.v); return a;";
      else
        combine = std::string("precise ") + s.acc + " r = a.v " + (sum ? "+" : "*") + " b.v; a.v = r; return a;";
      from = "s.v = " + s.acc + "(x);";
      // f32 into a double: the driver's conversion (one instruction; exact but for subnormals,
      // which NVIDIA's flushes), noting any nonzero subnormal read (the minimum of 2|x|bits - 1:
      // below 2^24 - 2 exactly for those), so that a lane that read one redoes its elements with
      // the exact widening (read_in_exact). The exact widening on every element made the H200's
      // sums compute-bound (their kernel's binary 2.5 times the size): 39-48% of copy, not 72-97%.
      if (s.acc == "double" && f32v) {
        from = "s.v = double(x); nx_small = min(nx_small, (floatBitsToUint(x) << 1) - 1u);";
        from_exact = "s.v = nx_f32_to_f64(x);";
      }
      s.final_expr = "s.v";
      s.final_type = s.acc;
      break;
    }
    case Kind::Max:
    case Kind::Min: {
      const bool mx = kind == Kind::Max;
      s.acc = vt;
      identity = "s.v = " + lowest(in, !mx) + ";";
      if (ti.is_float()) {
        s.has_idx = true;
        combine = "if (isnan(a.v)) return a; if (isnan(b.v)) return b;\n  if (" + beats(mx, "b.v", "a.v") +
                  ") return b; if (" + beats(mx, "a.v", "b.v") + ") return a;\n  return b.i < a.i ? b : a;";
      } else {
        combine = std::string("a.v = ") + (mx ? "max" : "min") + "(a.v, b.v); return a;";
      }
      from = "s.v = x;";
      s.final_expr = "s.v";
      s.final_type = vt;
      break;
    }
    case Kind::All:
    case Kind::Any: {
      s.acc = "uint";
      identity = std::string("s.v = ") + (kind == Kind::All ? "1u;" : "0u;");
      combine = std::string("a.v = a.v ") + (kind == Kind::All ? "&" : "|") + " b.v; return a;";
      from = "s.v = " + gen::nonzero(in, "x") + " ? 1u : 0u;";
      s.final_expr = "s.v";
      s.final_type = "uint";
      break;
    }
    case Kind::ArgMax:
    case Kind::ArgMin: {
      const bool mx = kind == Kind::ArgMax;
      s.acc = vt;
      s.has_idx = true;
      identity = "s.v = " + vt + "(0);";
      combine = "if (a.i == 0xffffffffu) return b; if (b.i == 0xffffffffu) return a;\n";
      if (ti.is_float())
        combine += "  bool an = isnan(a.v), bn = isnan(b.v);\n"
                   "  if (an || bn) { if (an && bn) return a.i > b.i ? a : b; return an ? a : b; }\n";
      combine += "  if (" + beats(mx, "b.v", "a.v") + ") return b; if (" + beats(mx, "a.v", "b.v") + ") return a;\n";
      combine += tie_high ? "  return b.i > a.i ? b : a;" : "  return b.i < a.i ? b : a;";
      from = "s.v = x;";
      s.final_type = gen::value_type(out);
      s.final_expr = s.final_type + "(s.i)";
      break;
    }
  }
  s.acc_store = store_type_of(s.acc);
  s.glsl = "struct S { " + s.acc + " v; uint i; };\n"
           "S identity() { S s; " + identity + " s.i = 0xffffffffu; return s; }\n"
           "S combine(S a, S b) {\n  " + combine + "\n}\n"
           "uint nx_small = 0xffffffffu;\n"
           "bool nx_redo() { bool r = nx_small < 0x00fffffeu; nx_small = 0xffffffffu; return r; }\n"
           "S from_value(" + vt + " x, uint idx) { S s; " + from + " s.i = idx; return s; }\n"
           "S from_value_exact(" + vt + " x, uint idx) { S s; " + (from_exact.empty() ? from : from_exact) +
           " s.i = idx; return s; }\n";
  return s;
}

// Where a reduction pass reads from: the input tensor, or the partial states of a previous pass.
struct PassInput {
  Tensor values;                 // input (its own type) or partial values (acc_store)
  std::optional<Tensor> idx;     // partial indices (u32), when the state has them
  bool partial = false;
};

// Bindings: 0 values in, 1 idx in, 2 values out (or final output), 3 idx out, as needed.
std::string io_glsl(const StateSpec& s, const PassInput& in, bool final_direct) {
  std::string g = gen::buffer(0, "src", in.partial ? s.acc_store : s.in, true);
  g += gen::buffer(1, "srci", DType::U32, true);
  if (final_direct) g += gen::buffer(2, "dst", s.out, false);
  else g += gen::buffer(2, "dst", s.acc_store, false);
  g += gen::buffer(3, "dsti", DType::U32, false);
  for (const char* exact : {"", "_exact"}) {
    g += std::string("S read_in") + exact + "(uint e, uint idx) {\n";
    if (in.partial) {
      g += "  S s; s.v = " + gen::load(s.acc_store, "src", "e") + "; s.i = " + (s.has_idx ? "srci.w[e]" : "idx") +
           "; return s;\n";
    } else {
      g += std::string("  return from_value") + exact + "(" + gen::load(s.in, "src", "e") + ", idx);\n";
    }
    g += "}\n";
  }
  g += "void write_out(uint o, S s) {\n";
  if (final_direct) {
    g += "  dst.w[o] = " + gen::store_value(s.out, s.final_expr, s.final_type) + ";\n";
  } else {
    g += "  dst.w[o] = " + gen::store_value(s.acc_store, "s.v", s.acc, false) + ";\n";
    if (s.has_idx) g += "  dsti.w[o] = s.i;\n";
  }
  g += "}\n";
  return g;
}

struct Reducer {
  std::string op;
  Device& device;
  const Capabilities& caps;
  StateSpec spec;

  bool direct_final() const { return !type_info(spec.out).packed(); }

  Tensor u32_or_dummy(int64_t n, bool need) {
    return empty_tensor(device, DType::U32, {need ? std::max<int64_t>(n, 1) : 1}, op);
  }

  // Dispatches `units` units of work in chunks whose input range fits one binding.
  // unit_elems(u0, u1) gives the input element range [e0, e1) that units [u0, u1) read.
  template <class Range>
  void dispatch_chunked(const std::string& name, const std::string& glsl, const PassInput& in, const Tensor& out,
                        const Tensor& outi, uint64_t units, uint64_t units_per_chunk_hint, Range unit_elems,
                        std::vector<uint32_t> push_head, uint64_t invocations_per_unit, uint64_t group_units) {
    const uint64_t ebits = type_info(in.values.type).bits;
    const uint64_t range = caps.max_storage_buffer_range;
    const uint64_t align = std::max<uint64_t>(caps.min_storage_buffer_offset_alignment, 4);
    uint64_t per = units;
    if (in.values.bytes() > range) per = units_per_chunk_hint;
    for (uint64_t u0 = 0; u0 < units; u0 += per) {
      const uint64_t u1 = std::min(units, u0 + per);
      auto [e0, e1] = unit_elems(u0, u1);
      uint64_t off = e0 * ebits / 8, len = ((e1 - e0) * ebits + 7) / 8;
      if (in.values.bytes() <= range) {
        off = 0;
        len = 0;
        e0 = 0;
      } else if (e0 * ebits % 8 != 0 || off % align != 0 || len > range || per == 0) {
        fail(ErrorKind::Unsupported, op + ": input of " + std::to_string(in.values.bytes()) +
                                         " bytes exceeds maxStorageBufferRange (" + std::to_string(range) +
                                         " bytes) and this layout cannot be split into bindable chunks");
      }
      len = (len + 3) / 4 * 4;
      if (off + len > in.values.buffer->size()) len = 0;
      std::vector<uint32_t> push = push_head;
      push.push_back(static_cast<uint32_t>(u0));
      push.push_back(static_cast<uint32_t>(u1));
      push.push_back(static_cast<uint32_t>(e0));
      Tensor idx = in.idx ? *in.idx : u32_or_dummy(1, false);
      BufferView views[] = {{in.values.buffer, off, len}, {idx.buffer}, {out.buffer}, {outi.buffer}};
      const uint32_t wg = workgroup_size();
      const uint64_t inv = (u1 - u0) * invocations_per_unit;
      uint64_t groups = group_units ? std::min<uint64_t>(u1 - u0, 65535) : (inv + wg - 1) / wg;
      groups = std::max<uint64_t>(1, std::min<uint64_t>(groups, std::min<uint32_t>(caps.max_workgroup_count[0], 65535u)));
      const uint32_t spec_consts[] = {wg};
      Kernel kernel = gen::kernel(caps, op + "_" + name, glsl);
      kernel.bindings = 4;
      device.dispatch(kernel, views,
                      std::as_bytes(std::span<const uint32_t>(push.data(), push.size())),
                      {static_cast<uint32_t>(groups)}, spec_consts);
    }
  }

  // Reduces rows [K, R] of `in`. Returns the partial states (or the output when final).
  std::pair<Tensor, std::optional<Tensor>> rows(const PassInput& in, uint64_t K, uint64_t R, const Shape& out_shape,
                                                bool& produced_final) {
    const bool sequential = R <= kSequentialRow;
    const uint64_t per = per_lane(R), block = kLanes * per;
    const uint64_t nb = sequential ? 1 : (R + block - 1) / block;
    const bool last = nb == 1;
    const bool direct = last && direct_final();
    produced_final = direct;
    Tensor out = direct ? empty_tensor(device, spec.out, out_shape, op)
                        : empty_tensor(device, spec.acc_store, {static_cast<int64_t>(K * nb)}, op);
    Tensor outi = u32_or_dummy(static_cast<int64_t>(K * nb), spec.has_idx && !direct);
    std::string g = spec.glsl + io_glsl(spec, in, direct);
    g += "layout(push_constant) uniform Push { uint R; uint nb; uint u0; uint u1; uint base; } pc;\n";
    if (sequential) {
      g += R"GLSL(
void main() {
  for (uint k = pc.u0 + gl_GlobalInvocationID.x; k < pc.u1; k += grid_stride()) {
    S s = identity();
    for (uint r = 0u; r < pc.R; ++r) s = combine(s, read_in(k * pc.R + r - pc.base, r));
    if (nx_redo()) {
      s = identity();
      for (uint r = 0u; r < pc.R; ++r) s = combine(s, read_in_exact(k * pc.R + r - pc.base, r));
    }
    write_out(k, s);
  }
}
)GLSL";
    } else {
      g += "const uint LANES = " + std::to_string(kLanes) + "u;\nconst uint PER = " + std::to_string(per) +
           "u;\nshared S lane[LANES];\n";
      g += R"GLSL(
void main() {
  uint lid = gl_LocalInvocationID.x;
  for (uint g = pc.u0 + gl_WorkGroupID.x; g < pc.u1; g += gl_NumWorkGroups.x) {
    uint k = g / pc.nb, start = (g % pc.nb) * (LANES * PER);
    uint row = k * pc.R - pc.base;
    for (uint l = lid; l < LANES; l += gl_WorkGroupSize.x) {
      S s = identity();
      [[unroll]] for (uint t = 0u; t < PER; ++t) {
        uint r = start + l + t * LANES;
        if (r < pc.R) s = combine(s, read_in(row + r, r));
      }
      if (nx_redo()) {
        s = identity();
        [[dont_unroll]] for (uint t = 0u; t < PER; ++t) {
          uint r = start + l + t * LANES;
          if (r < pc.R) s = combine(s, read_in_exact(row + r, r));
        }
      }
      lane[l] = s;
    }
    barrier();
    for (uint width = LANES / 2u; width > 0u; width /= 2u) {
      for (uint l = lid; l < width; l += gl_WorkGroupSize.x) lane[l] = combine(lane[l], lane[l + width]);
      barrier();
    }
    if (lid == 0u) write_out(g, lane[0]);
    barrier();
  }
}
)GLSL";
    }
    const uint64_t units = sequential ? K : K * nb;
    // Chunks: whole rows when K > 1, whole blocks of the single row when K == 1.
    const uint64_t range_bits = caps.max_storage_buffer_range * 8, ebits = type_info(in.values.type).bits;
    uint64_t hint;
    if (K == 1 && !sequential) hint = std::max<uint64_t>(1, range_bits / (block * ebits));
    else hint = std::max<uint64_t>(1, range_bits / std::max<uint64_t>(1, R * ebits)) * (sequential ? 1 : nb);
    auto elems = [&](uint64_t u0, uint64_t u1) {
      if (sequential) return std::pair<uint64_t, uint64_t>(u0 * R, u1 * R);
      const uint64_t k0 = u0 / nb, j0 = u0 % nb, k1 = (u1 - 1) / nb, j1 = (u1 - 1) % nb;
      return std::pair<uint64_t, uint64_t>(k0 * R + j0 * block, std::min(k1 * R + (j1 + 1) * block, k1 * R + R));
    };
    dispatch_chunked(sequential ? "rows_seq" : "rows_tree", g, in, out, outi, units, hint, elems,
                     {static_cast<uint32_t>(R), static_cast<uint32_t>(nb)}, sequential ? 1 : kLanes, sequential ? 0 : 1);
    if (spec.has_idx && !direct) return {out, outi};
    return {out, std::nullopt};
  }

  std::pair<Tensor, std::optional<Tensor>> columns(const PassInput& in, uint64_t B, uint64_t R, uint64_t N,
                                                   const Shape& out_shape, bool& produced_final) {
    const uint64_t C = std::min<uint64_t>(R, kColumnChunk);
    const uint64_t nc = (R + C - 1) / C;
    const bool direct = nc == 1 && direct_final();
    produced_final = direct;
    Tensor out = direct ? empty_tensor(device, spec.out, out_shape, op)
                        : empty_tensor(device, spec.acc_store, {static_cast<int64_t>(B * nc * N)}, op);
    Tensor outi = u32_or_dummy(static_cast<int64_t>(B * nc * N), spec.has_idx && !direct);
    std::string g = spec.glsl + io_glsl(spec, in, direct);
    g += "layout(push_constant) uniform Push { uint R; uint N; uint C; uint nc; uint u0; uint u1; uint base; } pc;\n";
    g += R"GLSL(
void main() {
  for (uint t = pc.u0 + gl_GlobalInvocationID.x; t < pc.u1; t += grid_stride()) {
    uint n = t % pc.N, bc = t / pc.N, c = bc % pc.nc, b = bc / pc.nc;
    uint r0 = c * pc.C, r1 = min(pc.R, r0 + pc.C);
    uint e = b * pc.R * pc.N + r0 * pc.N + n - pc.base;
    S s = identity();
    for (uint r = r0, f = e; r < r1; ++r, f += pc.N) s = combine(s, read_in(f, r));
    if (nx_redo()) {
      s = identity();
      for (uint r = r0; r < r1; ++r, e += pc.N) s = combine(s, read_in_exact(e, r));
    }
    write_out(t, s);
  }
}
)GLSL";
    const uint64_t units = B * nc * N;
    const uint64_t range_bits = caps.max_storage_buffer_range * 8, ebits = type_info(in.values.type).bits;
    // Chunks: whole row-chunks (C rows) when B == 1, whole batches otherwise.
    uint64_t hint = B == 1 ? std::max<uint64_t>(1, range_bits / (C * N * ebits)) * N
                           : std::max<uint64_t>(1, range_bits / (R * N * ebits)) * nc * N;
    if (B == 1 && C * N * ebits > range_bits) hint = 0;
    auto elems = [&](uint64_t u0, uint64_t u1) {
      const uint64_t c0 = u0 / N, c1 = (u1 - 1) / N;  // (b, c) pairs
      const uint64_t b0 = c0 / nc, b1 = c1 / nc;
      const uint64_t e0 = b0 * R * N + (c0 % nc) * C * N;
      const uint64_t e1 = b1 * R * N + std::min(R, (c1 % nc + 1) * C) * N;
      return std::pair<uint64_t, uint64_t>(e0, e1);
    };
    dispatch_chunked("columns", g, in, out, outi, units, hint, elems,
                     {static_cast<uint32_t>(R), static_cast<uint32_t>(N), static_cast<uint32_t>(C),
                      static_cast<uint32_t>(nc)},
                     1, 0);
    if (spec.has_idx && !direct) return {out, outi};
    return {out, std::nullopt};
  }

  // Converts final states [K] to the output type (narrow outputs are packed whole words).
  Tensor finalize(const PassInput& in, const Shape& out_shape) {
    Tensor out = empty_tensor(device, spec.out, out_shape, op);
    const int64_t n = out.size();
    std::string g = spec.glsl + gen::buffer(0, "src", spec.acc_store, true) +
                    gen::buffer(1, "srci", DType::U32, true) + gen::buffer(2, "dst", spec.out, false) +
                    "layout(push_constant) uniform Push { uint n; } pc;\n";
    std::string body = "S s; s.v = " + gen::load(spec.acc_store, "src", "i") + "; s.i = " +
                       (spec.has_idx ? "srci.w[i]" : "0u") + "; " + spec.final_type + " v = " + spec.final_expr + ";";
    g += gen::elementwise_main(spec.out, "dst", body, spec.final_type);
    Tensor idx = in.idx ? *in.idx : u32_or_dummy(1, false);
    BufferView views[] = {{in.values.buffer}, {idx.buffer}, {out.buffer}};
    const uint32_t nn = static_cast<uint32_t>(n);
    gen::launch(device, gen::kernel(caps, op + "_finalize", g), views, gen::bytes_of(nn),
                gen::elementwise_invocations(spec.out, static_cast<uint64_t>(n)));
    return out;
  }

  // Fills an output whose reduced extent is empty with the identity.
  Tensor identity_fill(const Shape& out_shape) {
    Tensor out = empty_tensor(device, spec.out, out_shape, op);
    const int64_t n = out.size();
    if (n == 0) return out;
    std::string g = spec.glsl + gen::buffer(0, "dst", spec.out, false) +
                    "layout(push_constant) uniform Push { uint n; } pc;\n";
    std::string body = "S s = identity(); " + spec.final_type + " v = " + spec.final_expr + ";";
    g += gen::elementwise_main(spec.out, "dst", body, spec.final_type);
    BufferView views[] = {{out.buffer}};
    const uint32_t nn = static_cast<uint32_t>(n);
    gen::launch(device, gen::kernel(caps, op + "_identity", g), views, gen::bytes_of(nn),
                gen::elementwise_invocations(spec.out, static_cast<uint64_t>(n)));
    return out;
  }

  // Full reduction of x viewed as [B, R, N] (B == 1 and N == 1 for rows [K, R] use K = B).
  Tensor run(const Tensor& x, uint64_t B, uint64_t R, uint64_t N, const Shape& out_shape) {
    if (shape_size(out_shape) == 0) return empty_tensor(device, spec.out, out_shape, op);
    if (R == 0) return identity_fill(out_shape);
    gen::check_index_range(op, x.size());
    PassInput in{x, std::nullopt, false};
    bool final_done = false;
    if (N > 1) {
      auto [v, i] = columns(in, B, R, N, out_shape, final_done);
      in = PassInput{v, i, true};
      R = (R + kColumnChunk - 1) / kColumnChunk;
      while (!final_done && R > 1) {
        auto [v2, i2] = columns(in, B, R, N, out_shape, final_done);
        in = PassInput{v2, i2, true};
        R = (R + kColumnChunk - 1) / kColumnChunk;
      }
    } else {
      const uint64_t K = B;
      while (true) {
        const uint64_t block = kLanes * per_lane(R);  // the pass's block, as rows() takes it
        auto [v, i] = rows(in, K, R, out_shape, final_done);
        in = PassInput{v, i, true};
        if (final_done || R <= kSequentialRow) break;
        R = (R + block - 1) / block;
        if (R == 1) break;
      }
    }
    if (final_done) return in.values;
    return finalize(in, out_shape);
  }
};

// Collapses `shape` with reduced axis set `red` into [B, R, N] when possible (runs of kept and
// reduced axes, size-1 axes dropped); else returns false.
bool collapse(const Shape& shape, const std::vector<bool>& red, uint64_t& B, uint64_t& R, uint64_t& N) {
  std::vector<std::pair<bool, uint64_t>> runs;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!runs.empty() && runs.back().first == red[d]) runs.back().second *= shape[d];
    else runs.push_back({red[d], static_cast<uint64_t>(shape[d])});
  }
  B = 1, R = 1, N = 1;
  if (runs.empty()) return true;
  size_t i = 0;
  if (!runs[i].first) B = runs[i++].second;
  if (i < runs.size() && runs[i].first) R = runs[i++].second;
  if (i < runs.size() && !runs[i].first) N = runs[i++].second;
  return i == runs.size();
}

Kind kind_of(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return Kind::Sum;
    case ReduceOp::product: return Kind::Product;
    case ReduceOp::reduce_max: return Kind::Max;
    case ReduceOp::reduce_min: return Kind::Min;
    case ReduceOp::all: return Kind::All;
    case ReduceOp::any: return Kind::Any;
  }
  return Kind::Sum;
}

void check_types(const std::string& op, const Tensor& x, DType out_type) {
  const Capabilities& caps = x.device().caps();
  require_type(caps, x.type, op);
  require_type(caps, out_type, op);
  if (type_info(x.type).is_complex() || type_info(out_type).is_complex())
    fail(ErrorKind::Unsupported, op + ": complex not supported yet");
}

Tensor reduce_general(const std::string& op, Kind kind, const Tensor& x, const std::vector<bool>& red,
                      const Shape& out_shape, DType out_type, bool tie_high) {
  Device& device = x.device();
  Reducer r{op, device, device.caps(), make_spec(kind, x.type, out_type, device.caps(), tie_high)};
  uint64_t B, R, N;
  if (collapse(x.shape, red, B, R, N)) return r.run(x, B, R, N, out_shape);
  // Kept axes first, reduced axes last (a bit copy), then rows.
  std::vector<int64_t> perm;
  int64_t K = 1, RR = 1;
  for (size_t d = 0; d < red.size(); ++d)
    if (!red[d]) perm.push_back(static_cast<int64_t>(d)), K *= x.shape[d];
  for (size_t d = 0; d < red.size(); ++d)
    if (red[d]) perm.push_back(static_cast<int64_t>(d)), RR *= x.shape[d];
  Tensor t = transpose(x, perm);
  return r.run(t, static_cast<uint64_t>(K), static_cast<uint64_t>(RR), 1, out_shape);
}

}  // namespace

Tensor reduce(ReduceOp rop, const Tensor& x, const std::vector<int64_t>& axes, bool keep_axes, DType out_type) {
  const std::string op = op_name(rop);
  check_types(op, x, out_type);
  const Kind kind = kind_of(rop);
  if ((kind == Kind::All || kind == Kind::Any) && out_type != DType::U8)
    fail(ErrorKind::InvalidArgument, op + ": output type must be u8, got " + type_name(out_type));
  if ((kind == Kind::Max || kind == Kind::Min) && out_type != x.type)
    fail(ErrorKind::InvalidArgument, op + ": output type " + std::string(type_name(out_type)) +
                                         " must be the input type " + type_name(x.type));
  std::vector<bool> red(x.shape.size(), false);
  for (int64_t a : axes) {
    const int64_t n = a < 0 ? a + x.rank() : a;
    if (n < 0 || n >= x.rank())
      fail(ErrorKind::InvalidArgument, op + ": axis " + std::to_string(a) + " out of range for shape " +
                                           shape_string(x.shape));
    if (red[n]) fail(ErrorKind::InvalidArgument, op + ": axis " + std::to_string(a) + " given more than once");
    red[n] = true;
  }
  Shape out_shape;
  for (size_t d = 0; d < red.size(); ++d)
    if (!red[d]) out_shape.push_back(x.shape[d]);
    else if (keep_axes) out_shape.push_back(1);
  return reduce_general(op, kind, x, red, out_shape, out_type, false);
}

Tensor arg_reduce(ArgReduceOp aop, const Tensor& x, std::optional<int64_t> axis, bool keep_axis, TieBreak tie_break,
                  DType out_type) {
  const std::string op = op_name(aop);
  check_types(op, x, out_type);
  if (!type_info(out_type).is_integer())
    fail(ErrorKind::InvalidArgument, op + ": output type must be an integer type, got " + type_name(out_type));
  std::vector<bool> red(x.shape.size(), !axis.has_value());
  Shape out_shape;
  if (axis) {
    const int64_t n = *axis < 0 ? *axis + x.rank() : *axis;
    if (n < 0 || n >= x.rank())
      fail(ErrorKind::InvalidArgument, op + ": axis " + std::to_string(*axis) + " out of range for shape " +
                                           shape_string(x.shape));
    red[n] = true;
    for (size_t d = 0; d < red.size(); ++d)
      if (!red[d]) out_shape.push_back(x.shape[d]);
      else if (keep_axis) out_shape.push_back(1);
  } else if (keep_axis) {
    out_shape.assign(x.shape.size(), 1);
  }
  int64_t reduced = 1;
  for (size_t d = 0; d < red.size(); ++d)
    if (red[d]) reduced *= x.shape[d];
  if (reduced == 0 && shape_size(out_shape) != 0)
    fail(ErrorKind::InvalidArgument, op + ": cannot take the " + op + " of an empty axis (shape " +
                                         shape_string(x.shape) + ")");
  const Kind kind = aop == ArgReduceOp::argmax ? Kind::ArgMax : Kind::ArgMin;
  return reduce_general(op, kind, x, red, out_shape, out_type, tie_break == TieBreak::High);
}

}  // namespace nxvk
