// A real S3 server for the tests of s3:// models: moto_server (Python's moto) on a loopback
// port, with SigV4 authentication on, an IAM user whose key may read and write S3, and
// temporary credentials of an assumed role (tests/support/moto_s3.py does the set-up).
#pragma once

#include <fcntl.h>
#include <glob.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "mount_util.h"
#include "test_util.h"

namespace ggufs::test {

/// moto_server and the Python that has moto and boto3 (the one in the same bin folder), or two
/// empty strings. The tests' virtual environment (tests/python/requirements.txt, made by
/// scripts/install-deps --tests) comes first, then pyenv's versions: its shim on PATH runs
/// whichever Python is selected, which need not have moto.
struct MotoTools {
  std::string server, python;
};

inline MotoTools moto_tools() {
  std::vector<std::string> dirs{"/var/cache/ggufs-tests/venv/bin"};
  glob_t g{};
  if (::glob("/root/.pyenv/versions/*/bin/moto_server", 0, nullptr, &g) == 0) {
    for (std::size_t i = 0; i < g.gl_pathc; ++i) {
      dirs.push_back(std::filesystem::path(g.gl_pathv[i]).parent_path().string());
    }
  }
  ::globfree(&g);
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    for (std::size_t start = 0; start <= p.size();) {
      const std::size_t end = std::min(p.find(':', start), p.size());
      dirs.push_back(p.substr(start, end - start));
      start = end + 1;
    }
  }
  for (const auto& dir : dirs) {
    const std::string server = dir + "/moto_server";
    if (::access(server.c_str(), X_OK) != 0) continue;
    for (const char* py : {"/python3", "/python"}) {
      const std::string python = dir + py;
      if (::access(python.c_str(), X_OK) == 0 &&
          run(quote(python) + " -c 'import moto, boto3' >/dev/null 2>&1").exit_code == 0) {
        return {server, python};
      }
    }
  }
  return {};
}

#define GGUFS_REQUIRE_MOTO()                                                               \
  if (::ggufs::test::moto_tools().server.empty())                                          \
  GTEST_SKIP() << "moto_server with boto3 is missing (pip install 'moto[server]' boto3): " \
                  "s3:// tests need an S3 server"

/// moto_server on 127.0.0.1:port(), authentication on; stopped by the destructor.
/// After construction key()/secret() are an IAM user's long-term credentials allowed s3:*, and
/// session_key()/session_secret()/session_token() an assumed role's temporary ones.
class MotoS3 {
 public:
  MotoS3() {
    tools_ = moto_tools();
    port_ = free_port();
    const auto log = dir_.path() / "moto.log";
    // Everything the child needs is made before fork: it only redirects and execs.
    const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const std::string port = std::to_string(port_);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(log_fd, STDOUT_FILENO);
      ::dup2(log_fd, STDERR_FILENO);
      // The first five requests are the unauthenticated IAM set-up of tests/support/moto_s3.py.
      ::execl("/usr/bin/env", "env", "INITIAL_NO_AUTH_ACTION_COUNT=5", tools_.server.c_str(), "-H",
              "127.0.0.1", "-p", port.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(log_fd);
    if (!wait_ready()) {
      ADD_FAILURE() << "moto_server did not start: " << read_text(log);
      return;
    }
    const RunResult r =
        run(quote(tools_.python) + " " GGUFS_SOURCE_DIR "/tests/support/moto_s3.py users " +
            endpoint() + " 2>&1");
    try {
      const auto j = nlohmann::json::parse(r.output);
      key_ = j.at("key");
      secret_ = j.at("secret");
      session_key_ = j.at("session_key");
      session_secret_ = j.at("session_secret");
      session_token_ = j.at("session_token");
    } catch (const std::exception&) {
      ADD_FAILURE() << "the moto set-up failed: " << r.output;
    }
  }
  ~MotoS3() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  MotoS3(const MotoS3&) = delete;
  MotoS3& operator=(const MotoS3&) = delete;

  int port() const { return port_; }
  /// Path-style endpoint, for AWS_ENDPOINT_URL.
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::string& key() const { return key_; }
  const std::string& secret() const { return secret_; }
  const std::string& session_key() const { return session_key_; }
  const std::string& session_secret() const { return session_secret_; }
  const std::string& session_token() const { return session_token_; }

  /// Creates `bucket` and uploads every file under `dir` into it (key: the path below `dir`).
  void upload(const std::string& bucket, const std::filesystem::path& dir) const {
    const RunResult r =
        run("AWS_ACCESS_KEY_ID=" + key_ + " AWS_SECRET_ACCESS_KEY=" + quote(secret_) + " " +
            quote(tools_.python) + " " GGUFS_SOURCE_DIR "/tests/support/moto_s3.py upload " +
            endpoint() + " " + bucket + " " + quote(dir) + " 2>&1");
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }

 private:
  // A port nobody listens on now (the kernel's pick for port 0; moto binds it right after).
  static int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      port = ntohs(a.sin_port);
    }
    ::close(fd);
    return port;
  }
  // Ready once the port accepts connections while our child still runs (Python's start-up
  // takes a second or two).
  bool wait_ready() {
    for (int i = 0; i < 300; ++i) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(static_cast<std::uint16_t>(port_));
      const bool up = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
      ::close(fd);
      if (up) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  TempDir dir_;
  MotoTools tools_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::string key_, secret_, session_key_, session_secret_, session_token_;
};

}  // namespace ggufs::test
