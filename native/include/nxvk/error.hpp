// Typed errors of the native core. Every message names the operation that failed.
#pragma once

#include <stdexcept>
#include <string>

namespace nxvk {

enum class ErrorKind {
  InvalidArgument,    // bad shape, type, option or size from the caller
  Unsupported,        // the device lacks a feature, type or limit the operation needs
  OutOfDeviceMemory,  // device or host memory exhausted; the caller may free memory and retry
  DeviceLost,         // the driver reported VK_ERROR_DEVICE_LOST; the device is unusable
  NoDevice,           // no Vulkan driver or no device with a compute queue
  Internal,           // any other Vulkan failure
};

const char* error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

[[noreturn]] void fail(ErrorKind kind, const std::string& message);

}  // namespace nxvk
