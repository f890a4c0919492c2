#include "terms.hpp"

#include <cstring>
#include <limits>
#include <cstdlib>
#include <new>
#include <unordered_set>

namespace nxnif {

ErlNifResourceType* tensor_resource_type = nullptr;

namespace {
// Every live tensor resource. Heap-allocated and never freed: it must outlive static teardown.
struct LiveTensors {
  std::mutex mutex;
  std::unordered_set<TensorResource*> set;
  std::vector<std::weak_ptr<nxvk::Device>> devices;  // every device the NIF has used
};
LiveTensors& live() {
  static auto* l = new LiveTensors();
  return *l;
}

void release_all() {
  auto& l = live();
  std::lock_guard lock(l.mutex);
  for (auto* res : l.set) {
    std::lock_guard slot(res->mutex);
    res->tensor.reset();
  }
  // Pending submissions hold their buffers (and so their device) until they are waited for.
  for (auto& weak : l.devices)
    if (auto device = weak.lock()) {
      try {
        device->sync();
      } catch (...) {
        // At exit a lost device has nothing left to wait for.
      }
    }
}
}  // namespace

TensorResource::TensorResource() {
  auto& l = live();
  std::lock_guard lock(l.mutex);
  l.set.insert(this);
}

TensorResource::~TensorResource() {
  auto& l = live();
  std::lock_guard lock(l.mutex);
  l.set.erase(this);
}

void release_at_exit(const std::shared_ptr<nxvk::Device>& device) {
  // Registered after the runtime's instance exists, so it runs before the instance's destructor.
  static std::once_flag once;
  std::call_once(once, [] { std::atexit(release_all); });
  auto& l = live();
  std::lock_guard lock(l.mutex);
  for (auto& weak : l.devices)
    if (weak.lock() == device) return;
  l.devices.push_back(device);
}

namespace {
using nxvk::ErrorKind;

std::string show(ErlNifEnv*, ERL_NIF_TERM term) {
  char buf[160];
  int n = enif_snprintf(buf, sizeof buf, "%T", term);
  if (n < 0) return "<term>";
  std::string s(buf);
  if (n >= static_cast<int>(sizeof buf)) s += "...";
  return s;
}

bool get_atom(ErlNifEnv* env, ERL_NIF_TERM term, std::string& out) {
  unsigned len = 0;
  if (!enif_get_atom_length(env, term, &len, ERL_NIF_LATIN1)) return false;
  out.assign(len + 1, '\0');
  if (!enif_get_atom(env, term, out.data(), len + 1, ERL_NIF_LATIN1)) return false;
  out.resize(len);
  return true;
}

bool get_int64(ErlNifEnv* env, ERL_NIF_TERM term, int64_t& out) {
  ErlNifSInt64 v;
  if (!enif_get_int64(env, term, &v)) return false;
  out = static_cast<int64_t>(v);
  return true;
}

// A float component of a scalar: a number or :nan / :infinity / :neg_infinity.
bool get_float(ErlNifEnv* env, ERL_NIF_TERM term, double& out) {
  ErlNifSInt64 i;
  if (enif_get_double(env, term, &out)) return true;
  if (enif_get_int64(env, term, &i)) {
    out = static_cast<double>(i);
    return true;
  }
  std::string a;
  if (!get_atom(env, term, a)) return false;
  if (a == "nan") out = std::numeric_limits<double>::quiet_NaN();
  else if (a == "infinity") out = std::numeric_limits<double>::infinity();
  else if (a == "neg_infinity") out = -std::numeric_limits<double>::infinity();
  else return false;
  return true;
}
}  // namespace

void Call::bad(int arg, const char* name, const std::string& expected) const {
  std::string got = arg < argc ? show(env, argv[arg]) : "nothing";
  throw nxvk::Error(ErrorKind::InvalidArgument, std::string(fn) + ": argument " + std::to_string(arg + 1) +
                                                    " (" + name + ") must be " + expected + ", got: " + got);
}

ERL_NIF_TERM Call::atom(const char* name) const { return make_atom(env, name); }

nxvk::Tensor Call::tensor(int arg, const char* name) const {
  TensorResource* res = nullptr;
  if (!enif_get_resource(env, argv[arg], tensor_resource_type, reinterpret_cast<void**>(&res)))
    bad(arg, name, "a Vulkan tensor reference");
  std::lock_guard lock(res->mutex);
  if (!res->tensor)
    throw nxvk::Error(ErrorKind::InvalidArgument,
                      std::string(fn) + ": argument " + std::to_string(arg + 1) + " (" + name +
                          "): tensor was deallocated");
  return *res->tensor;
}

std::vector<nxvk::Tensor> Call::tensors(int arg, const char* name) const {
  unsigned len = 0;
  if (!enif_get_list_length(env, argv[arg], &len)) bad(arg, name, "a list of Vulkan tensor references");
  std::vector<nxvk::Tensor> out;
  out.reserve(len);
  ERL_NIF_TERM head, tail = argv[arg];
  while (enif_get_list_cell(env, tail, &head, &tail)) {
    TensorResource* res = nullptr;
    if (!enif_get_resource(env, head, tensor_resource_type, reinterpret_cast<void**>(&res)))
      bad(arg, name, "a list of Vulkan tensor references");
    std::lock_guard lock(res->mutex);
    if (!res->tensor)
      throw nxvk::Error(ErrorKind::InvalidArgument, std::string(fn) + ": argument " + std::to_string(arg + 1) +
                                                        " (" + name + "): tensor was deallocated");
    out.push_back(*res->tensor);
  }
  return out;
}

nxvk::DType Call::type(int arg, const char* name) const {
  const char* expected = "an Nx type such as {:f, 32}";
  int arity = 0;
  const ERL_NIF_TERM* elems = nullptr;
  if (!enif_get_tuple(env, argv[arg], &arity, &elems) || arity != 2) bad(arg, name, expected);
  std::string kind;
  unsigned bits = 0;
  if (!get_atom(env, elems[0], kind) || !enif_get_uint(env, elems[1], &bits) || bits > 1024)
    bad(arg, name, expected);
  // Every Nx type has a row in the type table (nxvk/types.hpp).
  if (auto t = nxvk::parse_nx_type(kind, bits)) return *t;
  bad(arg, name, expected);
}

nxvk::Shape Call::shape(int arg, const char* name) const {
  const char* expected = "a shape (a tuple of non-negative integers)";
  int arity = 0;
  const ERL_NIF_TERM* elems = nullptr;
  if (!enif_get_tuple(env, argv[arg], &arity, &elems)) bad(arg, name, expected);
  nxvk::Shape shape(static_cast<size_t>(arity));
  // Sizes stay far from int64 overflow: element counts times element bytes must fit.
  constexpr int64_t kMax = int64_t{1} << 56;
  int64_t total = 1;
  for (int i = 0; i < arity; ++i) {
    if (!get_int64(env, elems[i], shape[i]) || shape[i] < 0) bad(arg, name, expected);
    if (shape[i] > kMax || (shape[i] > 0 && total > kMax / shape[i])) bad(arg, name, "a shape of fewer than 2^56 elements");
    total *= shape[i] == 0 ? 1 : shape[i];
  }
  return shape;
}

int64_t Call::int64(int arg, const char* name) const {
  int64_t v = 0;
  if (!get_int64(env, argv[arg], v)) bad(arg, name, "an integer");
  return v;
}

std::optional<int64_t> Call::optional_int64(int arg, const char* name) const {
  std::string a;
  if (get_atom(env, argv[arg], a) && a == "nil") return std::nullopt;
  int64_t v = 0;
  if (!get_int64(env, argv[arg], v)) bad(arg, name, "an integer or nil");
  return v;
}

std::vector<int64_t> Call::int64_list(int arg, const char* name) const {
  unsigned len = 0;
  if (!enif_get_list_length(env, argv[arg], &len)) bad(arg, name, "a list of integers");
  std::vector<int64_t> out(len);
  ERL_NIF_TERM head, tail = argv[arg];
  for (unsigned i = 0; enif_get_list_cell(env, tail, &head, &tail); ++i)
    if (!get_int64(env, head, out[i])) bad(arg, name, "a list of integers");
  return out;
}

bool Call::boolean(int arg, const char* name) const {
  std::string a;
  if (get_atom(env, argv[arg], a)) {
    if (a == "true") return true;
    if (a == "false") return false;
  }
  bad(arg, name, "a boolean");
}

std::string Call::atom_name(int arg, const char* name) const {
  std::string a;
  if (!get_atom(env, argv[arg], a)) bad(arg, name, "an atom");
  return a;
}

nxvk::Scalar Call::scalar(int arg, const char* name) const {
  const char* expected = "a number, :nan, :infinity, :neg_infinity or {re, im}";
  ERL_NIF_TERM t = argv[arg];
  ErlNifSInt64 s;
  ErlNifUInt64 u;
  double d;
  if (enif_get_int64(env, t, &s)) return nxvk::Scalar::of_signed(static_cast<int64_t>(s));
  if (enif_get_uint64(env, t, &u)) return nxvk::Scalar::of_unsigned(static_cast<uint64_t>(u));
  if (enif_is_number(env, t) && !enif_get_double(env, t, &d)) bad(arg, name, "an integer within 64 bits");
  if (get_float(env, t, d)) return nxvk::Scalar::of_float(d);
  int arity = 0;
  const ERL_NIF_TERM* elems = nullptr;
  double re, im;
  if (enif_get_tuple(env, t, &arity, &elems) && arity == 2 && get_float(env, elems[0], re) &&
      get_float(env, elems[1], im))
    return nxvk::Scalar::of_complex(re, im);
  bad(arg, name, expected);
}

std::vector<nxvk::PadConfig> Call::pad_config(int arg, const char* name) const {
  const char* expected = "a list of {low, high, interior} integer tuples";
  unsigned len = 0;
  if (!enif_get_list_length(env, argv[arg], &len)) bad(arg, name, expected);
  std::vector<nxvk::PadConfig> out(len);
  ERL_NIF_TERM head, tail = argv[arg];
  for (unsigned i = 0; enif_get_list_cell(env, tail, &head, &tail); ++i) {
    int arity = 0;
    const ERL_NIF_TERM* e = nullptr;
    if (!enif_get_tuple(env, head, &arity, &e) || arity != 3 || !get_int64(env, e[0], out[i].low) ||
        !get_int64(env, e[1], out[i].high) || !get_int64(env, e[2], out[i].interior))
      bad(arg, name, expected);
  }
  return out;
}

ErlNifBinary Call::binary(int arg, const char* name) const {
  ErlNifBinary bin;
  if (!enif_inspect_binary(env, argv[arg], &bin)) bad(arg, name, "a binary");
  return bin;
}

std::shared_ptr<nxvk::Device> Call::device(int arg, const char* name) const {
  std::string a;
  if (get_atom(env, argv[arg], a) && a == "nil") {
    auto device = nxvk::Device::open("");
    release_at_exit(device);
    return device;
  }
  unsigned index = 0;
  if (!enif_get_uint(env, argv[arg], &index)) bad(arg, name, "a device index (a non-negative integer) or nil");
  const auto& devices = nxvk::list_devices();
  if (index >= devices.size())
    throw nxvk::Error(ErrorKind::InvalidArgument, std::string(fn) + ": no Vulkan device " + std::to_string(index) +
                                                      " (" + std::to_string(devices.size()) + " devices)");
  auto device = nxvk::Device::open(std::to_string(index));
  release_at_exit(device);
  return device;
}

void same_device(const Call& call, const std::vector<const nxvk::Tensor*>& tensors) {
  for (const auto* t : tensors)
    if (&t->device() != &tensors.front()->device())
      throw nxvk::Error(ErrorKind::InvalidArgument,
                        std::string(call.fn) + ": tensors are on different devices (" +
                            std::to_string(tensors.front()->device().caps().index) + " and " +
                            std::to_string(t->device().caps().index) + "); transfer them first");
}

ERL_NIF_TERM make_tensor(ErlNifEnv* env, nxvk::Tensor tensor) {
  void* mem = enif_alloc_resource(tensor_resource_type, sizeof(TensorResource));
  if (!mem) throw std::bad_alloc();
  auto* res = new (mem) TensorResource();
  res->tensor = std::move(tensor);
  ERL_NIF_TERM term = enif_make_resource(env, res);
  enif_release_resource(res);  // the term holds the only reference now
  return term;
}

ERL_NIF_TERM make_pinning_binary(ErlNifEnv* env, nxvk::Tensor tensor, std::string text) {
  void* mem = enif_alloc_resource(tensor_resource_type, sizeof(TensorResource));
  if (!mem) throw std::bad_alloc();
  auto* res = new (mem) TensorResource();
  res->tensor = std::move(tensor);
  res->text = std::move(text);
  // The binary's bytes live in the resource, which the binary keeps alive.
  ERL_NIF_TERM term = enif_make_resource_binary(env, res, res->text.data(), res->text.size());
  enif_release_resource(res);
  return term;
}

ERL_NIF_TERM make_type(ErlNifEnv* env, nxvk::DType type) {
  const nxvk::TypeInfo& t = nxvk::type_info(type);
  return enif_make_tuple2(env, make_atom(env, t.nx_kind), enif_make_uint(env, t.bits));
}

ERL_NIF_TERM make_shape(ErlNifEnv* env, const nxvk::Shape& shape) {
  std::vector<ERL_NIF_TERM> dims;
  for (int64_t d : shape) dims.push_back(enif_make_int64(env, d));
  return enif_make_tuple_from_array(env, dims.data(), static_cast<unsigned>(dims.size()));
}

ERL_NIF_TERM make_string(ErlNifEnv* env, std::string_view text) {
  ERL_NIF_TERM term;
  unsigned char* data = enif_make_new_binary(env, text.size(), &term);
  if (!data) throw std::bad_alloc();
  if (!text.empty()) std::memcpy(data, text.data(), text.size());
  return term;
}

ERL_NIF_TERM make_atom(ErlNifEnv* env, const char* name) {
  ERL_NIF_TERM atom;
  if (enif_make_existing_atom(env, name, &atom, ERL_NIF_LATIN1)) return atom;
  return enif_make_atom(env, name);
}

}  // namespace nxnif

namespace nxnif {
namespace {
const char* kind_atom(nxvk::ErrorKind kind) {
  switch (kind) {
    case nxvk::ErrorKind::InvalidArgument: return "invalid_argument";
    case nxvk::ErrorKind::Unsupported: return "unsupported";
    case nxvk::ErrorKind::OutOfDeviceMemory: return "out_of_device_memory";
    case nxvk::ErrorKind::DeviceLost: return "device_lost";
    case nxvk::ErrorKind::NoDevice: return "no_device";
    case nxvk::ErrorKind::Internal: return "internal";
  }
  return "internal";
}
}  // namespace

ERL_NIF_TERM raise_error(ErlNifEnv* env, const char* kind, std::string_view message) {
  bool argument = std::string_view(kind) == "invalid_argument";
  ERL_NIF_TERM keys[4] = {make_atom(env, "__struct__"), make_atom(env, "__exception__"),
                          make_atom(env, "message"), make_atom(env, "kind")};
  ERL_NIF_TERM values[4] = {make_atom(env, argument ? "Elixir.ArgumentError" : "Elixir.Nx.Vulkan.Error"),
                            make_atom(env, "true"), make_string(env, message), make_atom(env, kind)};
  ERL_NIF_TERM map;
  if (!enif_make_map_from_arrays(env, keys, values, argument ? 3 : 4, &map)) return enif_make_badarg(env);
  return enif_raise_exception(env, map);
}

ERL_NIF_TERM raise_error(ErlNifEnv* env, nxvk::ErrorKind kind, std::string_view message) {
  return raise_error(env, kind_atom(kind), message);
}

ERL_NIF_TERM guarded(const Call& call, ERL_NIF_TERM (*body)(const Call&)) {
  try {
    return body(call);
  } catch (const nxvk::Error& e) {
    return raise_error(call.env, e.kind(), e.what());
  } catch (const std::bad_alloc&) {
    return raise_error(call.env, "out_of_memory", std::string(call.fn) + ": out of host memory");
  } catch (const std::exception& e) {
    return raise_error(call.env, "internal", std::string(call.fn) + ": " + e.what());
  } catch (...) {
    return raise_error(call.env, "internal", std::string(call.fn) + ": unknown native exception");
  }
}

}  // namespace nxnif
