// The NIF functions: X(name, arity, flags). nif.cpp builds the function table from this list;
// ops_nif.cpp and nif.cpp define them. Anything that may touch the device (allocation, dispatch,
// waiting for a read, enumeration) runs on a dirty CPU scheduler, so a normal BEAM scheduler is
// never blocked; only pure term work runs on a normal one.
#pragma once

#include <erl_nif.h>

#define NXNIF_DIRTY ERL_NIF_DIRTY_JOB_CPU_BOUND
#define NXNIF_FUNCTIONS(X)                                                                         \
  /* device and library information */                                                           \
  X(built_functions, 0, 0) X(devices, 0, NXNIF_DIRTY) X(default_device, 0, NXNIF_DIRTY)           \
  X(memory_stats, 1, NXNIF_DIRTY) X(release_cached_memory, 1, NXNIF_DIRTY) X(sync, 1, NXNIF_DIRTY) \
  X(validation_report, 0, NXNIF_DIRTY) X(tensor_info, 1, 0) X(deallocate, 1, NXNIF_DIRTY)          \
  X(set_f32_math, 1, 0)                                                                          \
  /* creation and transfer */                                                                    \
  X(from_binary, 4, NXNIF_DIRTY) X(to_binary, 2, NXNIF_DIRTY) X(constant, 4, NXNIF_DIRTY)         \
  X(iota, 4, NXNIF_DIRTY) X(eye, 3, NXNIF_DIRTY)                                                 \
  /* casts and elementwise */                                                                    \
  X(as_type, 2, NXNIF_DIRTY) X(bitcast, 2, NXNIF_DIRTY) X(unary, 3, NXNIF_DIRTY)                  \
  X(binary, 5, NXNIF_DIRTY) X(select, 5, NXNIF_DIRTY) X(clip, 4, NXNIF_DIRTY)                     \
  /* shape */                                                                                    \
  X(reshape, 2, NXNIF_DIRTY) X(squeeze, 2, NXNIF_DIRTY) X(broadcast, 3, NXNIF_DIRTY)              \
  X(transpose, 2, NXNIF_DIRTY) X(pad, 4, NXNIF_DIRTY) X(reverse, 2, NXNIF_DIRTY)                  \
  X(slice, 4, NXNIF_DIRTY) X(slice_dynamic, 4, NXNIF_DIRTY) X(put_slice, 4, NXNIF_DIRTY)          \
  X(put_slice_dynamic, 4, NXNIF_DIRTY) X(concatenate, 3, NXNIF_DIRTY) X(stack, 3, NXNIF_DIRTY)    \
  /* reductions */                                                                               \
  X(reduce, 5, NXNIF_DIRTY) X(arg_reduce, 6, NXNIF_DIRTY) X(cumulative, 5, NXNIF_DIRTY)            \
  /* pointers (Nx.to_pointer / Nx.from_pointer) */                                                \
  X(to_pointer, 2, NXNIF_DIRTY) X(from_pointer, 6, NXNIF_DIRTY)

namespace nxnif {
#define NXNIF_DECLARE(name, arity, flags) ERL_NIF_TERM name(ErlNifEnv*, int, const ERL_NIF_TERM[]);
NXNIF_FUNCTIONS(NXNIF_DECLARE)
#undef NXNIF_DECLARE
}  // namespace nxnif
