// Typed errors: allocations beyond the device's limits, byte ranges outside a buffer, bad
// dispatches, device selection and malformed environment variables. After every error the
// device keeps working.
#include <limits>

#include "nxvk_test.hpp"

namespace nxvk::test {
namespace {

class ErrorTest : public DeviceTest {
 protected:
  // The device still allocates, writes and reads correctly.
  void expect_working(Device& dev) {
    std::vector<float> data = random_floats(1000);
    auto b = poisoned(dev, 4000);
    dev.write(*b, 0, data.data(), 4000);
    EXPECT_EQ(first_mismatch(read_all<float>(dev, *b, 1000), data), -1);
  }
};

TEST_F(ErrorTest, AllocationLargerThanTheDeviceNamesTheLimit) {
  auto dev = open_device();
  const Capabilities& c = dev->caps();
  const MemoryStats before = dev->memory_stats();
  EXPECT_NXVK_ERROR(dev->allocate(c.max_memory_allocation_size + 1), ErrorKind::Unsupported,
                    "maxMemoryAllocationSize", std::to_string(c.max_memory_allocation_size).c_str());
  EXPECT_NXVK_ERROR(dev->allocate(1ull << 62, "my_op"), ErrorKind::Unsupported, "my_op", "exceeds the device");
  EXPECT_NXVK_ERROR(dev->allocate(std::numeric_limits<uint64_t>::max()), ErrorKind::Unsupported, "bytes exceeds");
  const MemoryStats after = dev->memory_stats();
  EXPECT_EQ(after.live_buffers, before.live_buffers);
  EXPECT_EQ(after.allocations, before.allocations);
  expect_working(*dev);
}

TEST_F(ErrorTest, ByteRangesOutsideTheBuffer) {
  auto dev = open_device();
  auto b = dev->allocate(100);
  auto other = dev->allocate(100);
  std::vector<uint8_t> host(200);
  const uint64_t huge = std::numeric_limits<uint64_t>::max() - 1;
  EXPECT_NXVK_ERROR(dev->write(*b, 0, host.data(), 101), ErrorKind::InvalidArgument, "write", "[0, 101)",
                    "buffer of 100 bytes");
  EXPECT_NXVK_ERROR(dev->write(*b, 101, host.data(), 0), ErrorKind::InvalidArgument, "write");
  EXPECT_NXVK_ERROR(dev->write(*b, huge, host.data(), 4), ErrorKind::InvalidArgument, "write");  // offset + size overflows
  EXPECT_NXVK_ERROR(dev->read(*b, 96, host.data(), 5), ErrorKind::InvalidArgument, "read", "[96, 101)");
  EXPECT_NXVK_ERROR(dev->read(*b, 4, host.data(), huge), ErrorKind::InvalidArgument, "read");
  EXPECT_NXVK_ERROR(dev->copy(*b, 50, *other, 0, 51), ErrorKind::InvalidArgument, "copy");
  EXPECT_NXVK_ERROR(dev->copy(*b, 0, *other, 60, 41), ErrorKind::InvalidArgument, "copy");
  EXPECT_NXVK_ERROR(dev->fill(*b, 0, 104, 0), ErrorKind::InvalidArgument, "fill");
  EXPECT_NXVK_ERROR(dev->fill(*b, 2, 8, 0), ErrorKind::InvalidArgument, "fill", "multiples of 4");
  EXPECT_NXVK_ERROR(dev->fill(*b, 0, 6, 0), ErrorKind::InvalidArgument, "fill", "multiples of 4");
  // Ranges that end exactly at the end are fine, as are empty ones.
  dev->write(*b, 0, host.data(), 100);
  dev->write(*b, 100, host.data(), 0);
  dev->read(*b, 100, host.data(), 0);
  dev->copy(*b, 0, *other, 0, 100);
  expect_working(*dev);
}

TEST_F(ErrorTest, WrongBindingCount) {
  Device& dev = device();
  auto a = dev.allocate(64), b = dev.allocate(64);
  BufferView two[] = {{a}, {b}};
  const uint32_t n = 16;
  EXPECT_NXVK_ERROR(dev.dispatch({"add_f32", "", 3}, two, push_of(n), {1}), ErrorKind::InvalidArgument,
                    "add_f32", "expected 3 buffers, got 2");
  EXPECT_NXVK_ERROR(dev.dispatch({"copy", "", 2}, std::span<const BufferView>(two, 1), push_of(n), {1}),
                    ErrorKind::InvalidArgument, "copy", "expected 2 buffers, got 1");
  expect_working(dev);
}

TEST_F(ErrorTest, BadDispatches) {
  Device& dev = device();
  auto a = dev.allocate(64), b = dev.allocate(64);
  const uint32_t n = 16;
  BufferView null_view[] = {{a}, {nullptr}};
  EXPECT_NXVK_ERROR(dev.dispatch({"copy", "", 2}, null_view, push_of(n), {1}), ErrorKind::InvalidArgument,
                    "buffer 1 is null");
  auto foreign_device = open_device();
  auto foreign = foreign_device->allocate(64);
  BufferView foreign_view[] = {{a}, {foreign}};
  EXPECT_NXVK_ERROR(dev.dispatch({"copy", "", 2}, foreign_view, push_of(n), {1}), ErrorKind::InvalidArgument,
                    "another device");
  BufferView views[] = {{a}, {b}};
  std::vector<std::byte> big_push(132);
  EXPECT_NXVK_ERROR(dev.dispatch({"copy", "", 2}, views, big_push, {1}), ErrorKind::InvalidArgument,
                    "push constants");
  EXPECT_NXVK_ERROR(dev.dispatch({"no_such_kernel", "", 2}, views, push_of(n), {1}), ErrorKind::InvalidArgument,
                    "no_such_kernel");
  const uint32_t too_many = dev.caps().max_workgroup_count[0] + 1;
  if (too_many != 0)
    EXPECT_NXVK_ERROR(dev.dispatch({"copy", "", 2}, views, push_of(n), {too_many}), ErrorKind::InvalidArgument,
                      "maxComputeWorkGroupCount");
  BufferView past_end[] = {{a, 0, 128}, {b}};
  EXPECT_NXVK_ERROR(dev.dispatch({"copy", "", 2}, past_end, push_of(n), {1}), ErrorKind::InvalidArgument,
                    "outside a buffer");
  const uint64_t align = dev.caps().min_storage_buffer_offset_alignment;
  if (align > 1) {
    auto c = dev.allocate(align * 4);
    BufferView misaligned[] = {{c, align / 2}, {b}};
    EXPECT_NXVK_ERROR(dev.dispatch({"copy", "", 2}, misaligned, push_of(n), {1}), ErrorKind::InvalidArgument,
                      "minStorageBufferOffsetAlignment");
  }
  // Zero workgroups is not an error: nothing is recorded.
  dev.dispatch({"copy", "", 2}, views, push_of(n), {0});
  expect_working(dev);
}

TEST_F(ErrorTest, BindingLargerThanMaxStorageBufferRange) {
  auto dev = open_device();
  const uint64_t range = dev->caps().max_storage_buffer_range;
  if (range + 4 > dev->caps().max_memory_allocation_size || range > (1ull << 31))
    GTEST_SKIP() << "maxStorageBufferRange is too large to exceed cheaply";
  auto big = dev->allocate(range + 4);
  auto small = dev->allocate(64);
  BufferView views[] = {{big}, {small}};
  const uint32_t n = 16;
  EXPECT_NXVK_ERROR(dev->dispatch({"copy", "", 2}, views, push_of(n), {1}), ErrorKind::Unsupported,
                    "maxStorageBufferRange", std::to_string(range).c_str());
  // A view of the allowed size on the same buffer works.
  BufferView ok[] = {{big, 0, 64}, {small}};
  dev->dispatch({"copy", "", 2}, ok, push_of(n), {1});
  dev->sync();
  big.reset();
  dev->release_cached_memory();
}

TEST_F(ErrorTest, DeviceSelection) {
  const auto& devices = list_devices();
  const std::string name = devices[0].name;
  EXPECT_EQ(select_device("0"), 0u);
  EXPECT_EQ(select_device(name), 0u);
  // Case-insensitive substring of the name.
  std::string part = name.substr(0, std::min<size_t>(name.size(), 4));
  for (auto& ch : part) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  auto lower = [](std::string s) {
    for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
  };
  EXPECT_NE(lower(devices[select_device(part)].name).find(lower(part)), std::string::npos);
  EXPECT_NXVK_ERROR(select_device("no-such-gpu-xyz"), ErrorKind::InvalidArgument, "no-such-gpu-xyz", name.c_str());
  EXPECT_NXVK_ERROR(select_device(std::to_string(devices.size())), ErrorKind::InvalidArgument, "out of range");
  EXPECT_NXVK_ERROR(Device::open("no-such-gpu-xyz"), ErrorKind::InvalidArgument, "no device matches");
  EXPECT_NXVK_ERROR(Device::open("99"), ErrorKind::InvalidArgument, "index 99 out of range");
  EXPECT_NXVK_ERROR(Device::open_index(99), ErrorKind::InvalidArgument, "index 99 out of range");

  // Device::open shares one device per index; open_index makes a separate one.
  auto by_index = Device::open("0");
  auto by_name = Device::open(name);
  EXPECT_EQ(by_index.get(), by_name.get());
  if (default_device_index() == 0) {
    EXPECT_EQ(by_index.get(), &device());
  }
  auto separate = open_device();
  EXPECT_NE(separate.get(), by_index.get());
}

TEST_F(ErrorTest, DeviceFromEnvironment) {
  {
    ScopedEnv dev("NX_VULKAN_DEVICE", "0");
    EXPECT_EQ(default_device_index(), 0u);
  }
  {
    ScopedEnv dev("NX_VULKAN_DEVICE", list_devices()[0].name);
    EXPECT_EQ(default_device_index(), 0u);
  }
  ScopedEnv dev("NX_VULKAN_DEVICE", "no-such-gpu-xyz");
  EXPECT_NXVK_ERROR(default_device_index(), ErrorKind::InvalidArgument, "no-such-gpu-xyz");
}

TEST_F(ErrorTest, MalformedNumbersInTheEnvironment) {
  {
    ScopedEnv batch("NX_VULKAN_BATCH_MAX", "lots");
    EXPECT_NXVK_ERROR(open_device(), ErrorKind::InvalidArgument, "NX_VULKAN_BATCH_MAX", "lots");
  }
  {
    ScopedEnv batch("NXV_BATCH_MAX", "-3");
    EXPECT_NXVK_ERROR(open_device(), ErrorKind::InvalidArgument, "NXV_BATCH_MAX");
  }
  expect_working(*open_device());
}

TEST_F(ErrorTest, ErrorKindsHaveNames) {
  for (ErrorKind k : {ErrorKind::InvalidArgument, ErrorKind::Unsupported, ErrorKind::OutOfDeviceMemory,
                      ErrorKind::DeviceLost, ErrorKind::NoDevice, ErrorKind::Internal})
    EXPECT_GT(std::strlen(error_kind_name(k)), 3u);
  Error e(ErrorKind::Unsupported, "op: thing");
  EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
  EXPECT_STREQ(e.what(), "op: thing");
}

}  // namespace
}  // namespace nxvk::test
