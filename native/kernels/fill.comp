#version 450
#include "common.glsl"
// out[i] = value for i < n (32-bit words).
layout(std430, binding = 0) writeonly buffer Out { uint data[]; } dst;
layout(push_constant) uniform Push { uint n; uint value; } pc;
void main() {
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += grid_stride()) dst.data[i] = pc.value;
}
