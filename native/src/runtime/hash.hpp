// The runtime's one byte hash: the key of a generated kernel's pipeline, the name of its cached
// SPIR-V file and the checksum of the pipeline cache file. XXH64 (seed 0), written from its
// published specification: four independent 64-bit lanes, so a 170 KB kernel source hashes in
// microseconds (byte-at-a-time FNV-1a took about 250 us per call for exp's kernel).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace nxvk {

uint64_t hash64(const void* data, size_t size);
inline uint64_t hash64(std::string_view s) { return hash64(s.data(), s.size()); }

}  // namespace nxvk
