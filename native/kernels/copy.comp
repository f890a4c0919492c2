#version 450
#include "common.glsl"
// out[i] = in[i] for i < n (32-bit words).
layout(std430, binding = 0) readonly buffer In { uint data[]; } src;
layout(std430, binding = 1) writeonly buffer Out { uint data[]; } dst;
layout(push_constant) uniform Push { uint n; } pc;
void main() {
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += grid_stride()) dst.data[i] = src.data[i];
}
