// to_pointer / from_pointer: tensors shared with other processes and libraries through
// Nx.Pointer. Mode :ipc exports a tensor's memory as an opaque POSIX fd (VK_KHR_external_memory_fd)
// and imports one; mode :local hands out the host-mapped address of a tensor and imports host
// memory (VK_EXT_external_memory_host). The Vulkan side lives in runtime/external_memory.cpp;
// this file is the Nx contract: handles, data_size, and which fd to import.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "nxvk/ops.hpp"

namespace nxvk {
namespace {

constexpr const char* kHandlePrefix = "nx_vulkan:fd:v1";

uint64_t word_bytes(uint64_t bytes) { return std::max<uint64_t>(4, (bytes + 3) / 4 * 4); }

std::string hex(const std::array<uint8_t, 16>& bytes) { return uuid_hex(bytes); }

// <cctype> on a plain char is undefined for bytes above 0x7f, which a handle from Elixir may hold.
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string errno_text(int e) { return std::string(std::strerror(e)); }

// The handle of an export: which process holds the fd, which file it is (so a closed and reused
// fd number is caught), how the memory was allocated (an import must repeat it), and which
// physical device and driver made it (opaque fds only import there).
struct Handle {
  int64_t pid = 0;
  int64_t fd = -1;
  uint64_t st_dev = 0, st_ino = 0;
  ExportedFd layout;
  std::string device_uuid, driver_uuid;
};

std::string encode(const Handle& h) {
  std::ostringstream s;
  s << kHandlePrefix << ":pid=" << h.pid << ":fd=" << h.fd << ":dev=" << h.st_dev
    << ":ino=" << h.st_ino << ":buffer=" << h.layout.buffer_size
    << ":alloc=" << h.layout.allocation_size << ":type=" << h.layout.memory_type
    << ":dedicated=" << (h.layout.dedicated ? 1 : 0) << ":device=" << h.device_uuid
    << ":driver=" << h.driver_uuid;
  return s.str();
}

[[noreturn]] void bad_handle(const std::string& handle, const std::string& why) {
  // Printable ASCII only: the handle came from the caller and may hold any bytes.
  std::string shown = handle.substr(0, 200);
  for (char& ch : shown)
    if (ch < 0x20 || ch > 0x7e) ch = '?';
  if (handle.size() > 200) shown += "...";
  fail(ErrorKind::InvalidArgument,
       "from_pointer: " + why + " in IPC handle \"" + shown + "\" (expected " + kHandlePrefix +
           ":pid=...:fd=...:dev=...:ino=...:buffer=...:alloc=...:"
           "type=...:dedicated=0|1:device=<uuid>:driver=<uuid>, as to_pointer makes)");
}

bool parse_u64(const std::string& text, uint64_t& out) {
  if (text.empty() || text.size() > 20 || !std::all_of(text.begin(), text.end(), is_digit))
    return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

Handle decode(const std::string& handle) {
  const std::string prefix = std::string(kHandlePrefix) + ":";
  if (handle.compare(0, prefix.size(), prefix) != 0)
    bad_handle(handle, "no " + std::string(kHandlePrefix) + " prefix");
  static const char* keys[] = {"pid",   "fd",   "dev",       "ino",    "buffer",
                               "alloc", "type", "dedicated", "device", "driver"};
  std::string values[10];
  bool seen[10] = {};
  std::stringstream rest(handle.substr(prefix.size()));
  std::string field;
  while (std::getline(rest, field, ':')) {
    auto eq = field.find('=');
    if (eq == std::string::npos) bad_handle(handle, "field \"" + field + "\" without '='");
    std::string key = field.substr(0, eq);
    auto it = std::find(std::begin(keys), std::end(keys), key);
    if (it == std::end(keys)) bad_handle(handle, "unknown field \"" + key + "\"");
    size_t i = static_cast<size_t>(it - std::begin(keys));
    if (seen[i]) bad_handle(handle, "repeated field \"" + key + "\"");
    seen[i] = true;
    values[i] = field.substr(eq + 1);
  }
  for (size_t i = 0; i < 10; ++i)
    if (!seen[i]) bad_handle(handle, "missing field \"" + std::string(keys[i]) + "\"");
  uint64_t n[8];
  for (size_t i = 0; i < 8; ++i)
    if (!parse_u64(values[i], n[i]))
      bad_handle(handle, "field \"" + std::string(keys[i]) + "\" is not a number");
  if (n[0] == 0 || n[0] > static_cast<uint64_t>(std::numeric_limits<pid_t>::max()))
    bad_handle(handle, "pid out of range");
  if (n[1] > static_cast<uint64_t>(std::numeric_limits<int>::max()))
    bad_handle(handle, "fd out of range");
  if (n[6] > 31) bad_handle(handle, "memory type out of range");
  if (n[7] > 1) bad_handle(handle, "dedicated is not 0 or 1");
  for (size_t i = 8; i < 10; ++i)
    if (values[i].size() != 32 || !std::all_of(values[i].begin(), values[i].end(), is_hex))
      bad_handle(handle, "field \"" + std::string(keys[i]) + "\" is not a 32-digit hex UUID");
  Handle h;
  h.pid = static_cast<int64_t>(n[0]);
  h.fd = static_cast<int64_t>(n[1]);
  h.st_dev = n[2];
  h.st_ino = n[3];
  h.layout.buffer_size = n[4];
  h.layout.allocation_size = n[5];
  h.layout.memory_type = static_cast<uint32_t>(n[6]);
  h.layout.dedicated = n[7] == 1;
  h.device_uuid = values[8];
  h.driver_uuid = values[9];
  std::transform(h.device_uuid.begin(), h.device_uuid.end(), h.device_uuid.begin(), lower);
  std::transform(h.driver_uuid.begin(), h.driver_uuid.end(), h.driver_uuid.begin(), lower);
  return h;
}

// A new fd for the file the handle names, ours to hand to the import: dup of our own fd, or a
// copy of the exporting process's fd through pidfd_getfd (Linux 5.6; needs ptrace permission
// over that process: the same user, subject to Yama's ptrace_scope). The file is checked against
// the handle's device and inode, so a closed fd whose number was reused is refused.
int acquire_fd(const Handle& h) {
  const std::string where = "fd " + std::to_string(h.fd) + " of process " + std::to_string(h.pid);
  int fd = -1;
  if (h.pid == static_cast<int64_t>(::getpid())) {
    fd = ::fcntl(static_cast<int>(h.fd), F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
      fail(ErrorKind::InvalidArgument, "from_pointer: " + where + " (this process) is not open (" +
                                           errno_text(errno) + "): the exported tensor was freed");
  } else {
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
    int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(h.pid), 0));
    if (pidfd < 0)
      fail(ErrorKind::InvalidArgument, "from_pointer: cannot reach process " +
                                           std::to_string(h.pid) + " (" + errno_text(errno) +
                                           "): the exporting process has exited?");
    fd = static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd, static_cast<int>(h.fd), 0));
    const int e = errno;
    ::close(pidfd);
    if (fd < 0) {
      std::string why =
          e == EBADF   ? ": it is not open there (the exported tensor was freed)"
          : e == EPERM ? ": no ptrace permission over that process (another user, or Yama's "
                         "ptrace_scope); pass the fd over a Unix socket (SCM_RIGHTS) instead and "
                         "put this process's pid and fd in the handle"
                       : "";
      fail(ErrorKind::InvalidArgument,
           "from_pointer: cannot duplicate " + where + " (" + errno_text(e) + ")" + why);
    }
#else
    fail(ErrorKind::Unsupported,
         "from_pointer: unsupported on this system: importing another process's fd needs "
         "pidfd_getfd (Linux 5.6)");
#endif
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_dev) != h.st_dev ||
      static_cast<uint64_t>(st.st_ino) != h.st_ino) {
    ::close(fd);
    fail(ErrorKind::InvalidArgument,
         "from_pointer: " + where +
             " is no longer the exported memory (the exported tensor was freed and "
             "the fd number reused)");
  }
  return fd;
}

// Whether [begin, end) lies in readable mappings of this process (Linux: /proc/self/maps), so a
// wild address is refused instead of faulting in a kernel. Memory freed but still mapped passes:
// keeping the memory alive is the caller's part of the contract.
bool readable(uintptr_t begin, uintptr_t end) {
  std::ifstream maps("/proc/self/maps");
  if (!maps) return true;  // no way to tell: the driver's own checks remain
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long long lo = 0, hi = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%llx-%llx %7s", &lo, &hi, perms) != 3) continue;
    if (perms[0] == 'r')
      ranges.emplace_back(static_cast<uintptr_t>(lo), static_cast<uintptr_t>(hi));
  }
  std::sort(ranges.begin(), ranges.end());
  uintptr_t at = begin;
  for (auto [lo, hi] : ranges) {
    if (lo > at) break;
    if (hi > at) at = hi;
    if (at >= end) return true;
  }
  return at >= end;
}

}  // namespace

Pointer to_pointer(Tensor& tensor, PointerKind kind) {
  Device& device = tensor.device();
  const Capabilities& caps = device.caps();
  const uint64_t bytes = tensor.bytes();
  if (kind == PointerKind::Local) {
    if (tensor.buffer->mapped() == nullptr)
      fail(ErrorKind::Unsupported,
           "to_pointer: unsupported on this device: mode :local needs tensor memory the host can "
           "address, and " +
               caps.name +
               " keeps tensors in device memory reached through staging (unified_memory " +
               (caps.unified_memory ? "yes, but staging is forced" : "no") + "); use mode :ipc");
    device.wait_for(*tensor.buffer);
    tensor.buffer->keep_out_of_cache();
    return Pointer{PointerKind::Local, reinterpret_cast<uintptr_t>(tensor.buffer->mapped()), "",
                   bytes};
  }
  if (!caps.external_memory_fd)
    fail(ErrorKind::Unsupported,
         "to_pointer: unsupported on this device: mode :ipc needs exportable memory (" + caps.name +
             " has no VK_KHR_external_memory_fd, capability external_memory_fd)");
  if (tensor.buffer->external() != ExternalMemory::ExportedFd) {
    auto exported = device.allocate_exportable(word_bytes(bytes), "to_pointer");
    device.copy(*tensor.buffer, 0, *exported, 0, std::min(tensor.buffer->size(), exported->size()));
    tensor.buffer = std::move(exported);
  }
  // The other side reads without our semaphores: the copy (or any earlier write) must be done.
  device.wait_for(*tensor.buffer);
  Handle h;
  h.layout = device.exported_fd(*tensor.buffer, "to_pointer");
  struct stat st {};
  if (::fstat(h.layout.fd, &st) != 0)
    fail(ErrorKind::Internal,
         "to_pointer: fstat of the exported fd failed (" + errno_text(errno) + ")");
  h.pid = ::getpid();
  h.fd = h.layout.fd;
  h.st_dev = static_cast<uint64_t>(st.st_dev);
  h.st_ino = static_cast<uint64_t>(st.st_ino);
  h.device_uuid = hex(caps.device_uuid);
  h.driver_uuid = hex(caps.driver_uuid);
  return Pointer{PointerKind::Ipc, 0, encode(h), bytes};
}

Tensor from_pointer(Device& device, DType type, const Shape& shape, const Pointer& pointer) {
  const Capabilities& caps = device.caps();
  uint64_t elements = 1;
  for (int64_t d : shape) {
    if (d < 0)
      fail(ErrorKind::InvalidArgument,
           "from_pointer: negative dimension in shape " + shape_string(shape));
    if (d != 0 && elements > std::numeric_limits<uint64_t>::max() / 8 / static_cast<uint64_t>(d))
      fail(ErrorKind::InvalidArgument,
           "from_pointer: shape " + shape_string(shape) + " is too large");
    elements *= static_cast<uint64_t>(d);
  }
  require_type(caps, type, "from_pointer");
  const uint64_t bytes = storage_bytes(type, elements);  // sub-byte types: packed, whole bytes
  if (pointer.data_size != bytes)
    fail(ErrorKind::InvalidArgument,
         "from_pointer: data_size " + std::to_string(pointer.data_size) + " does not match the " +
             type_name(type) + shape_string(shape) + " tensor's " + std::to_string(bytes) +
             " bytes");
  if (pointer.kind == PointerKind::Local) {
    if (!caps.external_memory_host)
      fail(ErrorKind::Unsupported,
           "from_pointer: unsupported on this device: mode :local needs host-memory import (" +
               caps.name + " has no VK_EXT_external_memory_host, capability external_memory_host)");
    const uint64_t align = caps.min_imported_host_pointer_alignment;
    if (pointer.address == 0 || pointer.address % align != 0)
      fail(ErrorKind::InvalidArgument,
           "from_pointer: address " + std::to_string(pointer.address) +
               " is not a non-zero multiple of the device's minImportedHostPointerAlignment (" +
               std::to_string(align) + ")");
    if (bytes == 0) return empty_tensor(device, type, shape, "from_pointer");
    const uint64_t span = (word_bytes(bytes) + align - 1) / align * align;
    if (pointer.address > std::numeric_limits<uintptr_t>::max() - span ||
        !readable(static_cast<uintptr_t>(pointer.address),
                  static_cast<uintptr_t>(pointer.address + span)))
      fail(ErrorKind::InvalidArgument,
           "from_pointer: address range [" + std::to_string(pointer.address) + ", +" +
               std::to_string(span) + ") is not readable memory of this process");
    auto buffer =
        device.import_host_memory(reinterpret_cast<void*>(static_cast<uintptr_t>(pointer.address)),
                                  word_bytes(bytes), "from_pointer");
    return Tensor{std::move(buffer), type, shape};
  }
  if (!caps.external_memory_fd)
    fail(ErrorKind::Unsupported,
         "from_pointer: unsupported on this device: mode :ipc needs importable memory (" +
             caps.name + " has no VK_KHR_external_memory_fd, capability external_memory_fd)");
  Handle h = decode(pointer.handle);
  if (h.device_uuid != hex(caps.device_uuid) || h.driver_uuid != hex(caps.driver_uuid))
    fail(ErrorKind::InvalidArgument,
         "from_pointer: the IPC handle was exported by another physical device or driver "
         "(device " +
             h.device_uuid + ", driver " + h.driver_uuid + "; this is " + caps.name + ", device " +
             hex(caps.device_uuid) + ", driver " + hex(caps.driver_uuid) + ")");
  if (h.layout.buffer_size < word_bytes(bytes))
    fail(ErrorKind::InvalidArgument,
         "from_pointer: the exported buffer holds " + std::to_string(h.layout.buffer_size) +
             " bytes, fewer than the " + std::to_string(bytes) + " of a " + type_name(type) +
             shape_string(shape) + " tensor");
  const int fd = acquire_fd(h);
  // import_fd takes the fd: the imported memory owns it, or it is closed on failure.
  auto buffer = device.import_fd(fd, h.layout, word_bytes(bytes), "from_pointer");
  return Tensor{std::move(buffer), type, shape};
}

}  // namespace nxvk
