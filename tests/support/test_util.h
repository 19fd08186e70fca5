// Shared helpers of the test suites: where the shared test data lives, files, hashes, JSON.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ggufs::test {

/// The shared test data folder: $GGUFS_TESTDATA if set, else ../shared/testdata beside the
/// source tree; nullopt when it does not exist (tests then GTEST_SKIP with a message).
std::optional<std::filesystem::path> testdata_dir();

/// Skips the current test with a message when the shared test data is absent; else its path.
#define GGUFS_REQUIRE_TESTDATA(var)                                                  \
  auto var##_opt = ::ggufs::test::testdata_dir();                                    \
  if (!var##_opt) GTEST_SKIP() << "shared test data not found (set GGUFS_TESTDATA)"; \
  const std::filesystem::path var = *var##_opt

std::vector<std::uint8_t> read_file(const std::filesystem::path& p);
std::string read_text(const std::filesystem::path& p);
/// `output` without its "ggufs: warning: " lines (a model's warnings at mount, e.g. why it has
/// no hf/), for tests of what else a command prints.
std::string without_warnings(const std::string& output);
void write_file(const std::filesystem::path& p, const std::vector<std::uint8_t>& bytes);
nlohmann::json read_json(const std::filesystem::path& p);

/// Lower-case hex sha256 of `n` bytes.
std::string sha256_hex(const void* data, std::size_t n);
/// Lower-case hex sha256 of the whole file `p`.
std::string sha256_of(const std::filesystem::path& p);
/// The sha256 that testdata's split/SHA256SUMS (written with llama.cpp's outputs) lists for
/// file `name`, or "" when it lists none.
std::string listed_split_sha256(const std::filesystem::path& testdata, const std::string& name);

/// The pids of the processes whose command line (arguments joined by spaces) holds `needle`:
/// the daemon serving a mount point, found by the mount point's path.
std::vector<int> pids_with(const std::string& needle);

/// Field `field` ("VmPeak", "VmHWM", "VmRSS") of /proc/`pid`/status in bytes, 0 if unknown.
std::uint64_t proc_status_bytes(int pid, const std::string& field);

/// Sets environment variables for the scope of a test (a null value unsets one), and restores
/// them after.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (const auto& [name, value] : vars) {
      const char* old = std::getenv(name);
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      if (value) {
        ::setenv(name, value, 1);
      } else {
        ::unsetenv(name);
      }
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

/// A fresh empty directory under the system temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace ggufs::test
