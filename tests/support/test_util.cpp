#include "test_util.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>

namespace ggufs::test {

std::optional<std::filesystem::path> testdata_dir() {
  const char* env = std::getenv("GGUFS_TESTDATA");
  std::filesystem::path p = env && *env ? env : GGUFS_TESTDATA_DEFAULT;
  if (std::filesystem::is_directory(p)) return p;
  return std::nullopt;
}

std::string listed_split_sha256(const std::filesystem::path& testdata, const std::string& name) {
  std::ifstream in(testdata / "split" / "SHA256SUMS");
  std::string sum, file;
  while (in >> sum >> file) {
    if (file == name || file == "*" + name) return sum;  // "*": sha256sum's binary mode
  }
  return "";
}

std::vector<std::uint8_t> read_file(const std::filesystem::path& p) {
  errno = 0;
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    // The errno of the failed open() (ENOENT: no such file; EIO: the daemon refused the read).
    throw std::runtime_error("cannot open " + p.string() + ": " + std::strerror(errno));
  }
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string read_text(const std::filesystem::path& p) {
  auto b = read_file(p);
  return {b.begin(), b.end()};
}

std::string without_warnings(const std::string& output) {
  std::string out;
  for (std::size_t at = 0; at < output.size();) {
    std::size_t end = output.find('\n', at);
    end = end == std::string::npos ? output.size() : end + 1;
    const std::string_view line(output.data() + at, end - at);
    if (!line.starts_with("ggufs: warning: ")) out += line;
    at = end;
  }
  return out;
}

void write_file(const std::filesystem::path& p, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

nlohmann::json read_json(const std::filesystem::path& p) {
  return nlohmann::json::parse(read_text(p));
}

std::vector<int> pids_with(const std::string& needle) {
  std::vector<int> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "cmdline", std::ios::binary);  // fails once the process is gone
    std::string cmdline{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(needle) != std::string::npos) out.push_back(std::stoi(name));
  }
  return out;
}

std::uint64_t proc_status_bytes(int pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(field + ":")) return std::stoull(line.substr(field.size() + 1)) * 1024;
  }
  return 0;
}

TempDir::TempDir() {
  std::random_device rd;
  for (int i = 0; i < 100; ++i) {
    auto p = std::filesystem::temp_directory_path() / ("ggufs-test-" + std::to_string(rd()));
    if (std::filesystem::create_directory(p)) {
      path_ = p;
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary directory");
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace ggufs::test
