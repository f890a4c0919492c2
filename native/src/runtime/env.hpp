// Environment variables read by the runtime, in one place.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace nxvk::env {

std::optional<std::string> get(const char* name);
bool flag(const char* name);  // set to 1/true/yes/on
std::optional<uint64_t> number(const char* name);
std::vector<std::string> split_list(const std::string& text);  // comma separated, trimmed

}  // namespace nxvk::env
