#version 450
#include "common.glsl"
// out[i] = in[i] for i < n 16-byte vectors: the copy-bandwidth reference for benchmarks.
layout(std430, binding = 0) readonly buffer In { uvec4 data[]; } src;
layout(std430, binding = 1) writeonly buffer Out { uvec4 data[]; } dst;
layout(push_constant) uniform Push { uint n; } pc;
void main() {
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += grid_stride()) dst.data[i] = src.data[i];
}
