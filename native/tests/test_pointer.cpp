// to_pointer / from_pointer (Nx.Pointer): tensors exported as opaque fds and imported again
// (mode :ipc), host addresses handed out and host memory imported (mode :local), the data_size
// and handle checks, ownership (an export outlives its tensor only through its importers) and the
// capability masks, all under the validation layer.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include <rapidcheck.h>

#include "nxvk/ops.hpp"
#include "nxvk_test.hpp"

namespace nxvk::test {
namespace {

class PointerTest : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (!device().caps().external_memory_fd)
      GTEST_SKIP() << device().caps().name << " has no external_memory_fd";
  }

  Tensor upload(Device& dev, DType type, const Shape& shape, const std::vector<uint8_t>& bytes) {
    return from_binary(dev, type, shape,
                       {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
  }
  static std::vector<uint8_t> download(const Tensor& t) {
    auto b = to_binary(t);
    return {reinterpret_cast<const uint8_t*>(b.data()),
            reinterpret_cast<const uint8_t*>(b.data()) + b.size()};
  }
};

TEST_F(PointerTest, CapabilitiesNameTheExternalMemoryFlags) {
  const Capabilities& c = device().caps();
  EXPECT_NE(c.describe().find("external memory fd:       yes"), std::string::npos) << c.describe();
  EXPECT_NE(c.describe().find("external memory host:"), std::string::npos);
  if (c.external_memory_host) {
    EXPECT_GT(c.min_imported_host_pointer_alignment, 0u);
  }
}

TEST_F(PointerTest, IpcRoundTripReadsTheSameBytesForEveryType) {
  for (DType type : real_types()) {
    if (!type_supported(device().caps(), type)) continue;
    const Shape shape = {3, 5};
    auto bytes = random_bytes(15 * type_bytes(type));
    Tensor t = upload(device(), type, shape, bytes);
    auto original = t.buffer;
    Pointer p = to_pointer(t, PointerKind::Ipc);
    EXPECT_EQ(p.kind, PointerKind::Ipc);
    EXPECT_EQ(p.data_size, bytes.size());
    EXPECT_EQ(p.handle.rfind("nx_vulkan:fd:v1:pid=", 0), 0u) << p.handle;
    EXPECT_NE(t.buffer, original) << "the first export moves the tensor into an exportable buffer";
    EXPECT_EQ(t.buffer->external(), ExternalMemory::ExportedFd);
    EXPECT_EQ(download(t), bytes) << type_name(type) << ": the export changed the tensor's bytes";
    Tensor back = from_pointer(device(), type, shape, p);
    EXPECT_EQ(back.buffer->external(), ExternalMemory::ImportedFd);
    EXPECT_EQ(download(back), bytes) << type_name(type);
  }
}

TEST_F(PointerTest, ImportedTensorsWorkInKernels) {
  std::vector<float> x = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f};
  std::vector<uint8_t> bytes(reinterpret_cast<uint8_t*>(x.data()),
                             reinterpret_cast<uint8_t*>(x.data() + x.size()));
  Tensor t = upload(device(), DType::F32, {5}, bytes);
  Tensor back = from_pointer(device(), DType::F32, {5}, to_pointer(t, PointerKind::Ipc));
  Tensor sum = binary(BinaryOp::add, back, t, DType::F32, {5});
  auto out = download(sum);
  std::vector<float> got(5);
  std::memcpy(got.data(), out.data(), 20);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(got[i], 2 * x[i]);
}

TEST_F(PointerTest, SecondExportReturnsTheSameHandleWithoutACopy) {
  Tensor t = upload(device(), DType::U8, {7}, random_bytes(7));
  Pointer a = to_pointer(t, PointerKind::Ipc);
  auto exported = t.buffer;
  Pointer b = to_pointer(t, PointerKind::Ipc);
  EXPECT_EQ(a.handle, b.handle);
  EXPECT_EQ(t.buffer, exported);
  // Another tensor on the same exported buffer (reshape shares it) exports the same memory.
  Tensor r = reshape(t, {7, 1});
  EXPECT_EQ(to_pointer(r, PointerKind::Ipc).handle, a.handle);
}

TEST_F(PointerTest, DoubleImportGivesTwoTensorsOverTheSameMemory) {
  auto bytes = random_bytes(64 * 4);
  Tensor t = upload(device(), DType::S32, {8, 8}, bytes);
  Pointer p = to_pointer(t, PointerKind::Ipc);
  Tensor a = from_pointer(device(), DType::S32, {8, 8}, p);
  Tensor b = from_pointer(device(), DType::S32, {64}, p);
  EXPECT_NE(a.buffer, b.buffer);
  EXPECT_EQ(download(a), bytes);
  EXPECT_EQ(download(b), bytes);
  // Aliasing: a write through one import is seen by the other and by the exporter.
  std::vector<uint8_t> ones(64 * 4, 1);
  device().write(*a.buffer, 0, ones.data(), ones.size());
  EXPECT_EQ(download(b), ones);
  EXPECT_EQ(download(t), ones);
}

TEST_F(PointerTest, DataSizeMustMatchTheShape) {
  Tensor t = upload(device(), DType::F32, {2, 3}, random_bytes(24));
  Pointer p = to_pointer(t, PointerKind::Ipc);
  EXPECT_NXVK_ERROR(from_pointer(device(), DType::F32, {2, 2}, p), ErrorKind::InvalidArgument,
                    "from_pointer", "data_size 24", "f32{2, 2}", "16 bytes");
  p.data_size = 28;
  EXPECT_NXVK_ERROR(from_pointer(device(), DType::F32, {7}, p), ErrorKind::InvalidArgument,
                    "exported buffer holds 24 bytes");
  EXPECT_NXVK_ERROR(from_pointer(device(), DType::F32, {-1}, p), ErrorKind::InvalidArgument,
                    "negative dimension");
}

TEST_F(PointerTest, ImportOutlivesTheExportingTensor) {
  auto bytes = random_bytes(4096);
  Tensor back;
  {
    Tensor t = upload(device(), DType::U8, {4096}, bytes);
    back = from_pointer(device(), DType::U8, {4096}, to_pointer(t, PointerKind::Ipc));
  }
  device().sync();  // the exporting buffer is destroyed now, its fd closed
  EXPECT_EQ(device().memory_stats().live_buffers, 1u);
  EXPECT_EQ(download(back), bytes);
}

TEST_F(PointerTest, ImportAfterTheTensorWasFreedIsRefused) {
  Pointer p;
  {
    Tensor t = upload(device(), DType::U8, {16}, random_bytes(16));
    p = to_pointer(t, PointerKind::Ipc);
  }
  device().sync();
  EXPECT_NXVK_ERROR(from_pointer(device(), DType::U8, {16}, p), ErrorKind::InvalidArgument,
                    "from_pointer", "freed");
  // The fd number reused by an unrelated file is caught by the inode check.
  {
    Tensor t = upload(device(), DType::U8, {16}, random_bytes(16));
    p = to_pointer(t, PointerKind::Ipc);
  }
  device().sync();
  int fd = -1;
  const std::string want = ":fd=";
  auto at = p.handle.find(want);
  const int exported_fd = std::atoi(p.handle.c_str() + at + want.size());
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  if (pipefd[0] != exported_fd) fd = ::dup2(pipefd[0], exported_fd);
  EXPECT_NXVK_ERROR(from_pointer(device(), DType::U8, {16}, p), ErrorKind::InvalidArgument,
                    "no longer the exported memory");
  ::close(pipefd[0]);
  ::close(pipefd[1]);
  if (fd >= 0 && fd != pipefd[0]) ::close(fd);
}

TEST_F(PointerTest, ExportedAndImportedMemoryIsNeverCached) {
  const uint64_t cached_before = device().memory_stats().cached_buffers;
  {
    Tensor t = upload(device(), DType::U8, {100}, random_bytes(100));
    Tensor back = from_pointer(device(), DType::U8, {100}, to_pointer(t, PointerKind::Ipc));
  }
  device().sync();
  // The ordinary buffer the tensor was uploaded to is cached; the exported and imported are not.
  EXPECT_LE(device().memory_stats().cached_buffers, cached_before + 1);
  EXPECT_EQ(device().memory_stats().live_buffers, 0u);
}

TEST_F(PointerTest, MalformedHandlesAreInvalidArguments) {
  Tensor t = upload(device(), DType::U8, {4}, random_bytes(4));
  Pointer good = to_pointer(t, PointerKind::Ipc);
  for (std::string handle :
       {std::string(""), std::string("abc"), std::string("nx_vulkan:fd:v1:"),
        good.handle + ":pid=1", good.handle.substr(0, good.handle.size() - 3),
        std::string(
            "nx_vulkan:fd:v1:pid=x:fd=1:dev=1:ino=1:buffer=4:alloc=4:type=0:dedicated=0:device="
            "00000000000000000000000000000000:driver=00000000000000000000000000000000")}) {
    Pointer p = good;
    p.handle = handle;
    EXPECT_NXVK_ERROR(from_pointer(device(), DType::U8, {4}, p), ErrorKind::InvalidArgument,
                      "from_pointer", "IPC handle");
  }
  Pointer other = good;
  auto at = other.handle.find(":device=");
  other.handle.replace(at + 8, 32, std::string(32, '0'));
  EXPECT_NXVK_ERROR(from_pointer(device(), DType::U8, {4}, other), ErrorKind::InvalidArgument,
                    "another physical device or driver");
}

TEST_F(PointerTest, PropertyMutatedHandlesAreRefusedCleanly) {
  // A real handle with random bytes overwritten, inserted or cut: an InvalidArgument every time
  // (or, where the mutation left the handle intact, the import), never a crash.
  Tensor t = upload(device(), DType::U8, {4}, random_bytes(4));
  const Pointer good = to_pointer(t, PointerKind::Ipc);
  EXPECT_TRUE(rc::check("mutated IPC handles", [&] {
    std::string h = good.handle;
    const int edits = *rc::gen::inRange(1, 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = *rc::gen::inRange<size_t>(0, h.size());
      const char byte = *rc::gen::arbitrary<char>();
      switch (*rc::gen::inRange(0, 3)) {
        case 0: h[at] = byte; break;
        case 1: h.insert(h.begin() + static_cast<long>(at), byte); break;
        default: h.erase(at, *rc::gen::inRange<size_t>(1, 12)); break;
      }
    }
    Pointer p = good;
    p.handle = h;
    try {
      Tensor back = from_pointer(device(), DType::U8, {4}, p);
      RC_ASSERT(back.buffer != nullptr);
    } catch (const Error& e) {
      RC_ASSERT(e.kind() == ErrorKind::InvalidArgument);
      RC_ASSERT(std::string(e.what()).rfind("from_pointer: ", 0) == 0);
    }
  }));
}

TEST_F(PointerTest, ImportFromAnotherProcessThroughPidfdGetfd) {
  auto bytes = random_bytes(256);
  Tensor t = upload(device(), DType::U8, {256}, bytes);
  Pointer p = to_pointer(t, PointerKind::Ipc);
  // A child inherits the exported fd under the same number; the handle names it in the child, so
  // the import duplicates it from there (pidfd_getfd) as an importer in another process would.
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  std::string self = ":pid=" + std::to_string(::getpid()) + ":";
  auto at = p.handle.find(self);
  ASSERT_NE(at, std::string::npos);
  p.handle.replace(at, self.size(), ":pid=" + std::to_string(child) + ":");
  Tensor back;
  bool imported = false;
  std::string error;
  try {
    back = from_pointer(device(), DType::U8, {256}, p);
    imported = true;
  } catch (const Error& e) {
    error = e.what();
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  if (!imported && error.find("ptrace permission") != std::string::npos) GTEST_SKIP() << error;
  ASSERT_TRUE(imported) << error;
  EXPECT_EQ(download(back), bytes);
  // The exporting process is gone: its handle can no longer be resolved.
  EXPECT_NXVK_ERROR(from_pointer(device(), DType::U8, {256}, p), ErrorKind::InvalidArgument,
                    "from_pointer", "process " + std::to_string(child));
}

// The importing half of ImportInAnotherVulkanProcess: runs only in the child that test starts.
TEST_F(PointerTest, ChildProcessImport) {
  const char* handle = std::getenv("NXVK_POINTER_CHILD_HANDLE");
  const char* expected = std::getenv("NXVK_POINTER_CHILD_BYTES");
  if (handle == nullptr || expected == nullptr)
    GTEST_SKIP() << "run by ImportInAnotherVulkanProcess";
  const std::string want(expected);
  Pointer p{PointerKind::Ipc, 0, handle, want.size() / 2};
  Tensor t = from_pointer(device(), DType::U8, {static_cast<int64_t>(want.size() / 2)}, p);
  std::string got;
  for (uint8_t b : download(t)) {
    static const char* digits = "0123456789abcdef";
    got += digits[b >> 4];
    got += digits[b & 15];
  }
  EXPECT_EQ(got, want);
}

TEST_F(PointerTest, ImportInAnotherVulkanProcess) {
  // A second process with its own VkInstance and VkDevice imports the export (duplicating the fd
  // from this process with pidfd_getfd) and checks the bytes.
  auto bytes = random_bytes(333);
  Tensor t = upload(device(), DType::U8, {333}, bytes);
  Pointer p = to_pointer(t, PointerKind::Ipc);
  std::string hex;
  for (uint8_t b : bytes) {
    static const char* digits = "0123456789abcdef";
    hex += digits[b >> 4];
    hex += digits[b & 15];
  }
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::setenv("NXVK_POINTER_CHILD_HANDLE", p.handle.c_str(), 1);
    ::setenv("NXVK_POINTER_CHILD_BYTES", hex.c_str(), 1);
    ::execl("/proc/self/exe", "nxvk_tests", "--gtest_filter=PointerTest.ChildProcessImport",
            "--gtest_brief=1", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's import failed (its output is above)";
}

TEST_F(PointerTest, MaskedCapabilitiesMakeThePointerOpsUnsupported) {
  auto dev = open_device(DeviceOptions{.disable = {"external_memory_fd", "external_memory_host"}});
  EXPECT_FALSE(dev->caps().external_memory_fd);
  EXPECT_FALSE(dev->caps().external_memory_host);
  Tensor t = upload(*dev, DType::F32, {2}, random_bytes(8));
  EXPECT_NXVK_ERROR(to_pointer(t, PointerKind::Ipc), ErrorKind::Unsupported,
                    "to_pointer: unsupported on this device", "external_memory_fd");
  Pointer p{PointerKind::Ipc, 0, "nx_vulkan:fd:v1:", 8};
  EXPECT_NXVK_ERROR(from_pointer(*dev, DType::F32, {2}, p), ErrorKind::Unsupported,
                    "from_pointer: unsupported on this device", "external_memory_fd");
  Pointer local{PointerKind::Local, 4096, "", 8};
  EXPECT_NXVK_ERROR(from_pointer(*dev, DType::F32, {2}, local), ErrorKind::Unsupported,
                    "from_pointer: unsupported on this device", "external_memory_host");
  EXPECT_NXVK_ERROR(dev->allocate_exportable(16, "test"), ErrorKind::Unsupported,
                    "external_memory_fd");
}

TEST_F(PointerTest, LocalAddressIsTheMappedMemoryOrUnsupported) {
  for (bool staging : {false, true}) {
    auto dev = open_device(DeviceOptions{.force_staging = staging});
    auto bytes = random_bytes(40);
    Tensor t = upload(*dev, DType::U16, {20}, bytes);
    if (!dev->zero_copy()) {
      EXPECT_NXVK_ERROR(to_pointer(t, PointerKind::Local), ErrorKind::Unsupported,
                        "to_pointer: unsupported on this device", "mode :local", "use mode :ipc");
      continue;
    }
    Pointer p = to_pointer(t, PointerKind::Local);
    EXPECT_EQ(p.kind, PointerKind::Local);
    EXPECT_EQ(p.data_size, 40u);
    ASSERT_EQ(p.address, reinterpret_cast<uintptr_t>(t.buffer->mapped()));
    EXPECT_EQ(std::memcmp(reinterpret_cast<const void*>(p.address), bytes.data(), 40), 0);
    const uint64_t cached = dev->memory_stats().cached_buffers;
    t = Tensor{};
    dev->sync();
    EXPECT_EQ(dev->memory_stats().cached_buffers, cached)
        << "a buffer whose address was handed out is not reused";
  }
}

TEST_F(PointerTest, LocalImportAliasesAlignedHostMemory) {
  if (!device().caps().external_memory_host) GTEST_SKIP() << "no external_memory_host";
  const uint64_t align = device().caps().min_imported_host_pointer_alignment;
  const size_t n = 1000;
  void* host = std::aligned_alloc(align, (n * 4 + align - 1) / align * align);
  ASSERT_NE(host, nullptr);
  auto bytes = random_bytes(n * 4);
  std::memcpy(host, bytes.data(), bytes.size());
  {
    Pointer p{PointerKind::Local, reinterpret_cast<uintptr_t>(host), "", n * 4};
    Tensor t = from_pointer(device(), DType::F32, {10, 100}, p);
    EXPECT_EQ(t.buffer->external(), ExternalMemory::ImportedHost);
    EXPECT_EQ(download(t), bytes);
    // No copy: the tensor reads the caller's memory as it is now.
    std::memset(host, 0, n * 4);
    EXPECT_EQ(download(t), std::vector<uint8_t>(n * 4, 0));
    EXPECT_NXVK_ERROR(from_pointer(device(), DType::F32, {10, 100},
                                   Pointer{PointerKind::Local, p.address + 4, "", n * 4}),
                      ErrorKind::InvalidArgument, "minImportedHostPointerAlignment");
    EXPECT_NXVK_ERROR(
        from_pointer(device(), DType::F32, {10, 100}, Pointer{PointerKind::Local, 0, "", n * 4}),
        ErrorKind::InvalidArgument, "from_pointer", "address 0");
    EXPECT_NXVK_ERROR(from_pointer(device(), DType::F32, {10}, p), ErrorKind::InvalidArgument,
                      "data_size");
  }
  device().sync();
  std::free(host);
}

TEST_F(PointerTest, LocalImportThroughStagingAndInKernels) {
  // Without zero-copy the imported host memory is read by device copies and kernels only.
  auto dev = open_device(DeviceOptions{.force_staging = true});
  if (!dev->caps().external_memory_host) GTEST_SKIP() << "no external_memory_host";
  const uint64_t align = dev->caps().min_imported_host_pointer_alignment;
  void* host = std::aligned_alloc(align, align);
  ASSERT_NE(host, nullptr);
  const uint8_t data[3] = {7, 250, 3};  // 3 bytes: the import covers a word, then a whole page
  std::memcpy(host, data, 3);
  {
    Tensor t = from_pointer(*dev, DType::U8, {3},
                            Pointer{PointerKind::Local, reinterpret_cast<uintptr_t>(host), "", 3});
    EXPECT_EQ(t.buffer->mapped(), nullptr);
    EXPECT_EQ(download(t), std::vector<uint8_t>(data, data + 3));
    Tensor sum = binary(BinaryOp::add, t, t, DType::U8, {3});
    EXPECT_EQ(download(sum), (std::vector<uint8_t>{14, 244, 6}));
    EXPECT_NXVK_ERROR(to_pointer(t, PointerKind::Local), ErrorKind::Unsupported, "mode :local");
  }
  dev->sync();
  std::free(host);
}

TEST_F(PointerTest, LocalImportOfUnmappedMemoryIsRefused) {
  if (!device().caps().external_memory_host) GTEST_SKIP() << "no external_memory_host";
  const uint64_t align = device().caps().min_imported_host_pointer_alignment;
  // The first page is never mapped; neither is an address far above user space.
  for (uint64_t address : {align, (uint64_t{1} << 46) / align * align}) {
    Pointer p{PointerKind::Local, address, "", 16};
    EXPECT_NXVK_ERROR(from_pointer(device(), DType::U8, {16}, p), ErrorKind::InvalidArgument,
                      "not readable memory");
  }
}

TEST_F(PointerTest, LocalRoundTripOfAMappedTensor) {
  if (!device().caps().external_memory_host || !device().zero_copy())
    GTEST_SKIP() << "no host-visible tensors";
  auto bytes = random_bytes(4096);
  Tensor t = upload(device(), DType::U8, {4096}, bytes);
  Pointer p = to_pointer(t, PointerKind::Local);
  if (p.address % device().caps().min_imported_host_pointer_alignment != 0) {
    EXPECT_NXVK_ERROR(from_pointer(device(), DType::U8, {4096}, p), ErrorKind::InvalidArgument,
                      "minImportedHostPointerAlignment");
    return;
  }
  Tensor back = from_pointer(device(), DType::U8, {4096}, p);
  EXPECT_EQ(download(back), bytes);
}

}  // namespace
}  // namespace nxvk::test
