// The NIF library of nx_vulkan (module Elixir.Nx.Vulkan.Native): load, the tensor resource,
// device information and memory NIFs. The op NIFs are in ops_nif.cpp; conversions in terms.cpp.
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "nif_list.hpp"
#include "terms.hpp"

namespace nxnif {
namespace {

void tensor_destructor(ErlNifEnv*, void* obj) {
  // Dropping the tensor returns its buffer to the device's cache (after pending work completes).
  static_cast<TensorResource*>(obj)->~TensorResource();
}

// load_info 1: `config :nx_vulkan, validation: true` (the Vulkan instance is created later, at
// first use, so the request is in time).
int load(ErlNifEnv* env, void**, ERL_NIF_TERM info) {
  int validation = 0;
  if (enif_get_int(env, info, &validation) && validation == 1) nxvk::request_validation_layer();
  tensor_resource_type = enif_open_resource_type(env, nullptr, "nx_vulkan_tensor", tensor_destructor,
                                                 ERL_NIF_RT_CREATE, nullptr);
  return tensor_resource_type ? 0 : 1;
}

int upgrade(ErlNifEnv* env, void** priv, void**, ERL_NIF_TERM info) {
  tensor_resource_type = enif_open_resource_type(env, nullptr, "nx_vulkan_tensor", tensor_destructor,
                                                 ERL_NIF_RT_TAKEOVER, nullptr);
  (void)priv;
  (void)info;
  return tensor_resource_type ? 0 : 1;
}

// A map with atom keys.
class MapBuilder {
 public:
  explicit MapBuilder(ErlNifEnv* env) : env_(env) {}
  MapBuilder& put(const char* key, ERL_NIF_TERM value) {
    keys_.push_back(make_atom(env_, key));
    values_.push_back(value);
    return *this;
  }
  MapBuilder& u64(const char* key, uint64_t v) { return put(key, enif_make_uint64(env_, v)); }
  MapBuilder& flag(const char* key, bool v) { return put(key, make_atom(env_, v ? "true" : "false")); }
  MapBuilder& str(const char* key, const std::string& v) { return put(key, make_string(env_, v)); }
  ERL_NIF_TERM build() {
    ERL_NIF_TERM map;
    if (!enif_make_map_from_arrays(env_, keys_.data(), values_.data(), keys_.size(), &map))
      throw nxvk::Error(nxvk::ErrorKind::Internal, "map with duplicate keys");
    return map;
  }

 private:
  ErlNifEnv* env_;
  std::vector<ERL_NIF_TERM> keys_, values_;
};

std::string version_string(uint32_t v) {
  return std::to_string(v >> 22) + "." + std::to_string((v >> 12) & 0x3ff) + "." + std::to_string(v & 0xfff);
}

ERL_NIF_TERM describe(ErlNifEnv* env, const nxvk::Capabilities& caps) {
  std::vector<ERL_NIF_TERM> disabled;
  for (const auto& d : caps.disabled) disabled.push_back(make_string(env, d));
  std::vector<ERL_NIF_TERM> subgroup_ops;
  for (const auto& s : caps.subgroup_operation_names()) subgroup_ops.push_back(make_string(env, s));
  ERL_NIF_TERM capabilities =
      MapBuilder(env)
          .flag("float64", caps.float64)
          .flag("int64", caps.int64)
          .flag("int16", caps.int16)
          .flag("int8", caps.int8)
          .flag("float16", caps.float16)
          .flag("storage_buffer_8bit", caps.storage_buffer_8bit)
          .flag("storage_buffer_16bit", caps.storage_buffer_16bit)
          .u64("subgroup_size", caps.subgroup_size)
          .put("subgroup_operations", enif_make_list_from_array(env, subgroup_ops.data(), subgroup_ops.size()))
          .flag("atomic_float32_add", caps.atomic_float32_add)
          .flag("cooperative_matrix", caps.cooperative_matrix_khr || caps.cooperative_matrix_nv)
          .flag("unified_memory", caps.unified_memory)
          .flag("push_descriptor", caps.push_descriptor)
          .flag("external_memory_fd", caps.external_memory_fd)
          .flag("external_memory_host", caps.external_memory_host)
          .u64("min_imported_host_pointer_alignment", caps.min_imported_host_pointer_alignment)
          .flag("timeline_semaphore", caps.timeline_semaphore)
          .flag("pipeline_statistics", caps.pipeline_statistics)
          .u64("max_storage_buffer_range", caps.max_storage_buffer_range)
          .u64("max_memory_allocation_size", caps.max_memory_allocation_size)
          .u64("max_buffer_size", caps.max_buffer_size)
          .u64("max_shared_memory", caps.max_shared_memory)
          .u64("max_workgroup_invocations", caps.max_workgroup_invocations)
          .u64("device_local_heap_size", caps.device_local_heap_size)
          .put("disabled", enif_make_list_from_array(env, disabled.data(), disabled.size()))
          .build();
  return MapBuilder(env)
      .u64("index", caps.index)
      .str("name", caps.name)
      .put("type", make_atom(env, nxvk::device_type_name(caps.type)))
      .u64("vendor_id", caps.vendor_id)
      .u64("device_id", caps.device_id)
      .str("api_version", version_string(caps.api_version))
      .str("driver_name", caps.driver_name)
      .str("driver_info", caps.driver_info)
      .put("capabilities", capabilities)
      .build();
}

}  // namespace

NXNIF_DEFINE(devices) {
  std::vector<ERL_NIF_TERM> out;
  for (const auto& caps : nxvk::list_devices()) out.push_back(describe(c.env, caps));
  return enif_make_list_from_array(c.env, out.data(), out.size());
}

NXNIF_DEFINE(default_device) { return enif_make_uint(c.env, nxvk::default_device_index()); }

NXNIF_DEFINE(memory_stats) {
  auto s = c.device(0, "device")->memory_stats();
  return MapBuilder(c.env)
      .u64("bytes_in_use", s.bytes_in_use)
      .u64("bytes_requested", s.bytes_requested)
      .u64("bytes_cached", s.bytes_cached)
      .u64("live_buffers", s.live_buffers)
      .u64("cached_buffers", s.cached_buffers)
      .u64("peak_bytes_in_use", s.peak_bytes_in_use)
      .u64("allocations", s.allocations)
      .u64("cache_hits", s.cache_hits)
      .u64("constant_buffers", s.constant_buffers)
      .u64("constant_bytes", s.constant_bytes)
      .build();
}

NXNIF_DEFINE(release_cached_memory) {
  c.device(0, "device")->release_cached_memory();
  return c.atom("ok");
}

NXNIF_DEFINE(sync) {
  c.device(0, "device")->sync();
  return c.atom("ok");
}

NXNIF_DEFINE(set_f32_math) {
  nxvk::set_f32_math(c.atom_name(0, "mode"));
  return c.atom("ok");
}

NXNIF_DEFINE(validation_report) {
  auto r = nxvk::validation_report();
  return MapBuilder(c.env)
      .flag("enabled", r.enabled)
      .u64("messages", r.messages)
      .str("last_message", r.last_message)
      .build();
}

NXNIF_DEFINE(tensor_info) {
  auto t = c.tensor(0, "tensor");
  return enif_make_tuple3(c.env, make_type(c.env, t.type), make_shape(c.env, t.shape),
                          enif_make_uint(c.env, t.device().caps().index));
}

NXNIF_DEFINE(deallocate) {
  TensorResource* res = nullptr;
  if (!enif_get_resource(c.env, c.argv[0], tensor_resource_type, reinterpret_cast<void**>(&res)))
    c.bad(0, "tensor", "a Vulkan tensor reference");
  nxvk::Tensor dropped;
  {
    std::lock_guard lock(res->mutex);
    if (!res->tensor) return c.atom("already_deallocated");
    dropped = std::move(*res->tensor);
    res->tensor.reset();
  }
  dropped.buffer.reset();  // frees the buffer now (outside the slot's lock)
  return c.atom("ok");
}

}  // namespace nxnif

namespace {
ErlNifFunc nif_functions[] = {
#define NXNIF_ENTRY(name, arity, flags) {#name, arity, nxnif::name, flags},
    NXNIF_FUNCTIONS(NXNIF_ENTRY)
#undef NXNIF_ENTRY
};
}  // namespace

ERL_NIF_INIT(Elixir.Nx.Vulkan.Native, nif_functions, nxnif::load, nullptr, nxnif::upgrade, nullptr)
