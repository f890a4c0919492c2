#include "runtime/env.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "nxvk/error.hpp"

namespace nxvk::env {

std::optional<std::string> get(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

bool flag(const char* name) {
  auto value = get(name);
  if (!value) return false;
  std::string v = *value;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  return v == "1" || v == "true" || v == "yes" || v == "on";
}

std::optional<uint64_t> number(const char* name) {
  auto value = get(name);
  if (!value) return std::nullopt;
  char* end = nullptr;
  // strtoull alone would accept leading blanks and a sign ("-3" wraps to 2^64 - 3): digits only.
  const bool digits = (*value)[0] >= '0' && (*value)[0] <= '9';
  errno = 0;
  unsigned long long n = std::strtoull(value->c_str(), &end, 10);
  if (!digits || errno == ERANGE || end == value->c_str() || *end != '\0')
    fail(ErrorKind::InvalidArgument,
         std::string(name) + ": expected a non-negative integer, got \"" + *value + "\"");
  return n;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    auto first = item.find_first_not_of(" \t");
    auto last = item.find_last_not_of(" \t");
    if (first != std::string::npos) out.push_back(item.substr(first, last - first + 1));
    start = end + 1;
  }
  return out;
}

}  // namespace nxvk::env
