#include <algorithm>
#include "nxvk/ops.hpp"
#include "ops/codegen.hpp"
#include "ops/shape_internal.hpp"

namespace nxvk::shape_internal {

std::optional<Tensor> tiled_transpose(const Tensor& x, const std::vector<int64_t>& perm, const Shape& out_shape) {
  if (type_info(x.type).packed() || x.size() == 0) return std::nullopt;
  // Merge input axes that stay adjacent and in order in the output; drop size-1 axes first.
  std::vector<int64_t> axes;  // perm without size-1 axes
  for (int64_t a : perm)
    if (x.shape[a] != 1) axes.push_back(a);
  std::vector<std::vector<int64_t>> groups;  // output-ordered groups of consecutive input axes
  for (int64_t a : axes) {
    if (!groups.empty() && groups.back().back() + 1 == a) groups.back().push_back(a);
    else groups.push_back({a});
  }
  // Input order of the groups.
  std::vector<size_t> order(groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return groups[a][0] < groups[b][0]; });
  auto group_size = [&](size_t g) {
    int64_t n = 1;
    for (int64_t a : groups[g]) n *= x.shape[a];
    return n;
  };
  int64_t batch = 1, m = 0, n = 0;
  if (groups.size() == 2 && order[0] == 1 && order[1] == 0) {
    m = group_size(1);
    n = group_size(0);
  } else if (groups.size() == 3 && order[0] == 0 && order[1] == 2 && order[2] == 1) {
    batch = group_size(0);
    m = group_size(2);
    n = group_size(1);
  } else {
    return std::nullopt;
  }
  // Input viewed as [batch, m, n]; output [batch, n, m].
  Device& device = x.device();
  const Capabilities& caps = device.caps();
  Tensor out = empty_tensor(device, x.type, out_shape, "transpose");
  gen::check_index_range("transpose", x.size());
  const DType bt = gen::bits_type(x.type, caps);
  const std::string vt = gen::value_type(bt);
  std::string src = gen::buffer(0, "src", bt, true) + gen::buffer(1, "dst", bt, false) +
                    "layout(push_constant) uniform Push { uint batch; uint m; uint n; uint tm; uint tn; } pc;\n"
                    "shared " + vt + " tile[32][33];\n"
                    R"GLSL(
// Fixed 256 invocations: 32 columns x 8 rows, each invocation moving 4 rows of a 32x32 tile.
void main() {
  uint lx = gl_LocalInvocationID.x & 31u, ly = gl_LocalInvocationID.x >> 5u;
  for (uint b = gl_WorkGroupID.z; b < pc.batch; b += gl_NumWorkGroups.z)
  for (uint ti = gl_WorkGroupID.y; ti < pc.tm; ti += gl_NumWorkGroups.y)
  for (uint tj = gl_WorkGroupID.x; tj < pc.tn; tj += gl_NumWorkGroups.x) {
    uint base = b * pc.m * pc.n;
    [[unroll]] for (uint k = 0u; k < 4u; ++k) {
      uint r = ti * 32u + ly + 8u * k, c = tj * 32u + lx;
      if (r < pc.m && c < pc.n) tile[ly + 8u * k][lx] = src.w[base + r * pc.n + c];
    }
    barrier();
    [[unroll]] for (uint k = 0u; k < 4u; ++k) {
      uint r = tj * 32u + ly + 8u * k, c = ti * 32u + lx;
      if (r < pc.n && c < pc.m) dst.w[base + r * pc.m + c] = tile[lx][ly + 8u * k];
    }
    barrier();
  }
}
)GLSL";
  struct { uint32_t batch, m, n, tm, tn; } push{static_cast<uint32_t>(batch), static_cast<uint32_t>(m),
                                                 static_cast<uint32_t>(n), static_cast<uint32_t>((m + 31) / 32),
                                                 static_cast<uint32_t>((n + 31) / 32)};
  auto lim = [&](uint64_t v, int i) {
    return static_cast<uint32_t>(std::min<uint64_t>(v, std::min<uint32_t>(caps.max_workgroup_count[i], 65535u)));
  };
  WorkgroupCount grid{lim(push.tn, 0), lim(push.tm, 1), lim(push.batch, 2)};
  BufferView views[] = {{x.buffer}, {out.buffer}};
  const uint32_t spec[] = {256};
  Kernel kernel = gen::kernel(caps, std::string("transpose_tiled_") + type_name(bt), src);
  kernel.bindings = 2;
  device.dispatch(kernel, views, gen::bytes_of(push),
                  grid, spec);
  return out;
}

}  // namespace nxvk::shape_internal
