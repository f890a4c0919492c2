// Shared by every embedded kernel: the workgroup size is specialization constant 0, and
// elementwise kernels walk their range with a grid-stride loop so that any element count fits in
// a bounded dispatch.
#extension GL_EXT_control_flow_attributes : enable
layout(local_size_x_id = 0) in;

uint grid_stride() { return gl_NumWorkGroups.x * gl_WorkGroupSize.x; }
