#version 450
#include "common.glsl"
// Deterministic partial sums: block j of BLOCK = 4096 elements is reduced to out[j] in an order
// fixed by BLOCK alone: lane l (of 256 logical lanes) adds elements l, l+256, ... in sequence,
// then the 256 lane sums combine in a fixed pairwise tree. The workgroup size, subgroup size and
// number of workgroups never change the result. Repeated passes reduce the partials to one value.
layout(std430, binding = 0) readonly buffer In { float data[]; } src;
layout(std430, binding = 1) writeonly buffer Out { float data[]; } dst;
layout(push_constant) uniform Push { uint n; uint blocks; } pc;
const uint LANES = 256;
const uint BLOCK = 4096;
shared float lane_sum[LANES];
void main() {
  for (uint block = gl_WorkGroupID.x; block < pc.blocks; block += gl_NumWorkGroups.x) {
    uint base = block * BLOCK;
    for (uint l = gl_LocalInvocationID.x; l < LANES; l += gl_WorkGroupSize.x) {
      precise float s = 0.0;
      for (uint k = 0; k < BLOCK / LANES; ++k) {
        uint i = base + l + k * LANES;
        if (i < pc.n) s += src.data[i];
      }
      lane_sum[l] = s;
    }
    barrier();
    for (uint width = LANES / 2; width > 0; width /= 2) {
      for (uint l = gl_LocalInvocationID.x; l < width; l += gl_WorkGroupSize.x) {
        precise float s = lane_sum[l] + lane_sum[l + width];
        lane_sum[l] = s;
      }
      barrier();
    }
    if (gl_LocalInvocationID.x == 0) dst.data[block] = lane_sum[0];
    barrier();
  }
}
