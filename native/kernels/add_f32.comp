#version 450
#include "common.glsl"
// out[i] = a[i] + b[i] for i < n.
layout(std430, binding = 0) readonly buffer A { float data[]; } a;
layout(std430, binding = 1) readonly buffer B { float data[]; } b;
layout(std430, binding = 2) writeonly buffer Out { float data[]; } dst;
layout(push_constant) uniform Push { uint n; } pc;
void main() {
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += grid_stride()) {
    precise float r = a.data[i] + b.data[i];
    dst.data[i] = r;
  }
}
