// sha256_hex and sha256_of (test_util.h), apart from the other helpers: it needs OpenSSL, which the
// kernels-only cross build (scripts/test-arm64) does not have.
#include <openssl/evp.h>

#include <stdexcept>

#include "test_util.h"

namespace ggufs::test {

std::string sha256_hex(const void* data, std::size_t n) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data, n, md, &len, EVP_sha256(), nullptr) != 1) throw std::runtime_error("sha256");
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (unsigned i = 0; i < len; ++i) {
    s += hex[md[i] >> 4];
    s += hex[md[i] & 15];
  }
  return s;
}

std::string sha256_of(const std::filesystem::path& p) {
  const auto b = read_file(p);
  return sha256_hex(b.data(), b.size());
}

}  // namespace ggufs::test
