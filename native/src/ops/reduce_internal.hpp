// Internals of the reductions shared by reduce.cpp and the tests.
#pragma once

#include <cstdint>

namespace nxvk::reduce_internal {

// Logical lanes of a block in the row kernel and elements per lane: a block of kLanes * per
// elements is reduced in an order fixed by these constants and the row length alone (lane l
// combines elements l, l + kLanes, ... in sequence, then the lanes combine in a fixed pairwise
// tree). per is kPerLane for rows of kBlock elements or more, else the least power of two that
// makes one block cover the row: a block mostly past the row's end costs its loads' predicates
// and a whole tree for few elements (the H200's 4096-wide rows: 75% of copy with 32, 97% so).
constexpr uint32_t kLanes = 256;
constexpr uint32_t kPerLane = 32;
constexpr uint32_t kBlock = kLanes * kPerLane;
constexpr uint32_t per_lane(uint64_t row_length) {
  uint32_t per = kPerLane;
  while (per > 1 && uint64_t(kLanes) * (per / 2) >= row_length) per /= 2;
  return per;
}
// Rows of at most this many elements are combined sequentially by one invocation.
constexpr uint32_t kSequentialRow = 64;
// The column kernel walks at most this many rows per invocation (then reduces the partials).
constexpr uint32_t kColumnChunk = 256;

// The workgroup size the reduction kernels are dispatched with (a specialization constant).
// Results never depend on it; tests change it to prove that. 0 restores the default.
void set_workgroup_size(uint32_t size);
uint32_t workgroup_size();

}  // namespace nxvk::reduce_internal
