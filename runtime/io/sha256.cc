// sha256.cc (digest.h): SHA-256, the content hash of embedded kernel modules, through
// OpenSSL's libcrypto (which the runtime links for the .bmodel's MD5 too);
// tests/runtime/model/tpu_model_test.cc checks it against the FIPS 180-4 test vectors.
#include <openssl/evp.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "tpu_runtime/digest.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime {

std::array<uint8_t, 32> sha256(std::span<const uint8_t> data) {
  std::array<uint8_t, 32> digest{};
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1 ||
      length != digest.size())
    throw Error("SHA-256: OpenSSL's EVP_Digest failed");
  return digest;
}

std::string sha256_hex(std::span<const uint8_t> data) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  for (uint8_t byte : sha256(data)) {
    text += kDigits[byte >> 4];
    text += kDigits[byte & 15];
  }
  return text;
}

}  // namespace tpu_runtime
