// digest.h: content hashes of the bytes the SDK stores (embedded kernel
// modules), through OpenSSL's libcrypto (io/sha256.cc).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace tpu_runtime {

// SHA-256 of `data` (FIPS 180-4), and as 64 lowercase hex digits.
std::array<uint8_t, 32> sha256(std::span<const uint8_t> data);
std::string sha256_hex(std::span<const uint8_t> data);

}  // namespace tpu_runtime
