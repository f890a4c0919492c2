// Term conversion for the NIF: Erlang terms in, nxvk values out, and back. Every getter checks
// every enif_get_* result and throws nxvk::Error(InvalidArgument) naming the NIF function and the
// argument, so a malformed term becomes an ArgumentError and never reaches the op library.
#pragma once

#include <erl_nif.h>

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nxvk/ops.hpp"

namespace nxnif {

// One tensor resource: the tensor, or nothing once deallocated. The mutex guards the slot only;
// ops copy the tensor out (a shared buffer reference) and run without holding it.
struct TensorResource {
  TensorResource();
  ~TensorResource();
  std::mutex mutex;
  std::optional<nxvk::Tensor> tensor;
  // The bytes of a resource binary made over this resource (an :ipc handle, see to_pointer):
  // while that binary lives, so do this resource and its tensor's exported memory.
  std::string text;
};

// Called for each device the NIF uses: at process exit, before the runtime's static teardown,
// releases every tensor the VM never garbage collected (the BEAM does not destroy resources
// when it halts) and waits for the devices' pending work, so each device is destroyed with no
// live children and the validation layer reports no leaks.
void release_at_exit(const std::shared_ptr<nxvk::Device>& device);

extern ErlNifResourceType* tensor_resource_type;

// Context of one NIF call: its name, for messages.
struct Call {
  ErlNifEnv* env;
  const char* fn;
  const ERL_NIF_TERM* argv;
  int argc;

  [[noreturn]] void bad(int arg, const char* name, const std::string& expected) const;
  ERL_NIF_TERM atom(const char* name) const;

  nxvk::Tensor tensor(int arg, const char* name) const;
  std::vector<nxvk::Tensor> tensors(int arg, const char* name) const;
  nxvk::DType type(int arg, const char* name) const;
  nxvk::Shape shape(int arg, const char* name) const;
  int64_t int64(int arg, const char* name) const;
  std::optional<int64_t> optional_int64(int arg, const char* name) const;
  std::vector<int64_t> int64_list(int arg, const char* name) const;
  bool boolean(int arg, const char* name) const;
  std::string atom_name(int arg, const char* name) const;
  nxvk::Scalar scalar(int arg, const char* name) const;
  std::vector<nxvk::PadConfig> pad_config(int arg, const char* name) const;
  ErlNifBinary binary(int arg, const char* name) const;
  // A device index (non-negative integer) or nil for the default device.
  std::shared_ptr<nxvk::Device> device(int arg, const char* name) const;
};

// Throws InvalidArgument unless every tensor lives on one device (kernels cannot mix devices).
void same_device(const Call& call, const std::vector<const nxvk::Tensor*>& tensors);

ERL_NIF_TERM make_tensor(ErlNifEnv* env, nxvk::Tensor tensor);
// A binary holding `text` that keeps `tensor` alive for as long as the binary (or any reference
// to it) lives: a resource binary over a new tensor resource.
ERL_NIF_TERM make_pinning_binary(ErlNifEnv* env, nxvk::Tensor tensor, std::string text);
ERL_NIF_TERM make_type(ErlNifEnv* env, nxvk::DType type);
ERL_NIF_TERM make_shape(ErlNifEnv* env, const nxvk::Shape& shape);
ERL_NIF_TERM make_string(ErlNifEnv* env, std::string_view text);
ERL_NIF_TERM make_atom(ErlNifEnv* env, const char* name);

// Raises the exception Elixir expects: ArgumentError for invalid arguments, else
// Nx.Vulkan.Error with :kind (an atom such as :unsupported or :out_of_device_memory).
ERL_NIF_TERM raise_error(ErlNifEnv* env, nxvk::ErrorKind kind, std::string_view message);
ERL_NIF_TERM raise_error(ErlNifEnv* env, const char* kind_atom, std::string_view message);
// Runs one NIF body, turning every exception into an Elixir exception: nothing escapes.
ERL_NIF_TERM guarded(const Call& call, ERL_NIF_TERM (*body)(const Call&));

// Defines NIF `name` (declared in nif_list.hpp) with a body taking `const Call& c`.
#define NXNIF_DEFINE(name)                                                      \
  static ERL_NIF_TERM name##_body(const Call& c);                               \
  ERL_NIF_TERM name(ErlNifEnv* env, int argc, const ERL_NIF_TERM argv[]) {      \
    return guarded(Call{env, #name, argv, argc}, name##_body);                  \
  }                                                                             \
  static ERL_NIF_TERM name##_body(const Call& c)

}  // namespace nxnif
