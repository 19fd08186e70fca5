// A real HTTP server for the tests of remote models: nginx from Debian, started on a loopback
// port over a directory, with an access log that counts the body bytes it sent.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

#include "test_util.h"

namespace ggufs::test {

/// Stops a server process of a test (SIGTERM, then reaped); -1 is none. Sets `pid` to -1.
inline void stop_process(pid_t& pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  // Our servers exit at once on SIGTERM; one that has not within 10 s is killed with its children
  // (nginx's workers), so a stuck server can never hang the suite.
  for (int i = 0; i < 1000; ++i) {
    if (::waitpid(pid, nullptr, WNOHANG) == pid) {
      pid = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::ifstream children("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) +
                         "/children");
  for (pid_t child; children >> child;) ::kill(child, SIGKILL);
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  pid = -1;
}

/// Where nginx is, or "" when it is not installed.
inline std::string nginx_binary() {
  for (const char* p : {"/usr/sbin/nginx", "/usr/bin/nginx"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "";
}

#define GGUFS_REQUIRE_NGINX()                \
  if (::ggufs::test::nginx_binary().empty()) \
  GTEST_SKIP() << "nginx is missing (apt nginx-light): remote-model tests need a real server"

/// Starts nginx with its prefix in `prefix` (logs/ made there), trying loopback ports from
/// `first` + pid % 20000 on, `step` apart, until one is free: `port` is set to each in turn before
/// `config()` is called for its configuration text. Returns the pid, or -1 after ADD_FAILURE.
inline pid_t start_nginx(const std::filesystem::path& prefix, int first, int step, int& port,
                         const std::function<std::string()>& config) {
  std::filesystem::create_directories(prefix / "logs");
  for (port = first + static_cast<int>(::getpid() % 20000); port < 65000; port += step) {
    std::filesystem::remove(prefix / "nginx.pid");
    std::ofstream(prefix / "nginx.conf") << config();
    pid_t pid = ::fork();
    if (pid == 0) {
      ::execl(nginx_binary().c_str(), "nginx", "-p", prefix.c_str(), "-c",
              (prefix / "nginx.conf").c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // Ready once the pid file is written; a busy port makes nginx exit instead.
    for (int i = 0; i < 200; ++i) {
      if (std::filesystem::exists(prefix / "nginx.pid")) return pid;
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    stop_process(pid);
  }
  ADD_FAILURE() << "nginx did not start: " << read_text(prefix / "logs" / "error.log");
  return -1;
}

/// nginx serving `root` on 127.0.0.1:port():
///   /             the files, with byte ranges
///   /noranges/    the same files, ranges disabled (a range request gets the whole file, 200)
///   /auth/        the same files, only with "Authorization: Bearer secret-token"
/// Stopped by the destructor.
class Nginx {
 public:
  explicit Nginx(const std::filesystem::path& root) {
    const auto prefix = dir_.path();
    std::filesystem::create_directories(prefix / "logs");
    // A self-signed certificate for 127.0.0.1, for the https server (if openssl is there).
    tls_ = std::system(("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
                        "-addext subjectAltName=IP:127.0.0.1 -keyout " +
                        (prefix / "key.pem").string() + " -out " + cert().string() +
                        " >/dev/null 2>&1")
                           .c_str()) == 0;
    pid_ = start_nginx(prefix, 20000, 101, port_, [&] { return config(root, prefix); });
  }
  ~Nginx() { stop_process(pid_); }
  Nginx(const Nginx&) = delete;
  Nginx& operator=(const Nginx&) = delete;

  int port() const { return port_; }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/" + path;
  }
  /// The same files over https (port() + 1), or "" without openssl; cert() verifies it.
  std::string https_url(const std::string& path) const {
    return tls_ ? "https://127.0.0.1:" + std::to_string(port_ + 1) + "/" + path : "";
  }
  std::filesystem::path cert() const { return dir_.path() / "cert.pem"; }
  /// Body bytes sent so far, over every request (from the access log).
  std::uint64_t bytes_sent() const {
    std::ifstream in(dir_.path() / "logs" / "access.log");
    std::uint64_t total = 0, status = 0, bytes = 0;
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      if (fields >> status >> bytes) total += bytes;
    }
    return total;
  }
  /// The access log: one "status bytes range request" line per request.
  std::string log() const { return read_text(dir_.path() / "logs" / "access.log"); }

 private:
  std::string config(const std::filesystem::path& root, const std::filesystem::path& prefix) {
    const std::string r = root.string() + "/";
    std::ostringstream c;
    c << "daemon off;\nmaster_process off;\nuser root;\npid " << (prefix / "nginx.pid").string()
      << ";\nerror_log " << (prefix / "logs" / "error.log").string() << " info;\n"
      << "events { worker_connections 256; }\n"
      << "http {\n"
      << "  log_format counted '$status $body_bytes_sent \"$http_range\" \"$request\"';\n"
      << "  access_log " << (prefix / "logs" / "access.log").string() << " counted;\n"
      << "  client_body_temp_path " << (prefix / "tmp-body").string() << ";\n"
      << "  proxy_temp_path " << (prefix / "tmp-proxy").string() << ";\n"
      << "  fastcgi_temp_path " << (prefix / "tmp-fcgi").string() << ";\n"
      << "  uwsgi_temp_path " << (prefix / "tmp-uwsgi").string() << ";\n"
      << "  scgi_temp_path " << (prefix / "tmp-scgi").string() << ";\n"
      << "  server {\n    listen 127.0.0.1:" << port_ << ";\n    root " << r << ";\n"
      << "    location /noranges/ { alias " << r << "; max_ranges 0; }\n"
      << "    location /auth/ { alias " << r << ";\n"
      << "      if ($http_authorization != \"Bearer secret-token\") { return 401; } }\n"
      << "  }\n";
    if (tls_) {
      c << "  server {\n    listen 127.0.0.1:" << port_ + 1 << " ssl;\n    root " << r << ";\n"
        << "    ssl_certificate " << cert().string() << ";\n"
        << "    ssl_certificate_key " << (prefix / "key.pem").string() << ";\n  }\n";
    }
    c << "}\n";
    return c.str();
  }

  TempDir dir_;
  int port_ = 0;
  pid_t pid_ = -1;
  bool tls_ = false;
};

/// One of our Python test servers (tests/support/SCRIPT, standard library only), run with
/// /usr/bin/python3 and `args`: it prints its port on its first line of output and serves on
/// 127.0.0.1 until SIGTERM, which the destructor sends. Its stderr goes to `log` when given.
class PythonServer {
 public:
  PythonServer(const std::string& script, const std::string& args,
               const std::filesystem::path& log = {}) {
    int out[2];
    if (::pipe(out) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      if (!log.empty()) {
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) ::dup2(fd, STDERR_FILENO);
      }
      ::dup2(out[1], STDOUT_FILENO);
      ::close(out[0]);
      ::close(out[1]);
      const std::string cmd =
          "exec /usr/bin/python3 " GGUFS_SOURCE_DIR "/tests/support/" + script + " " + args;
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(out[1]);
    std::string line;
    char c;
    while (::read(out[0], &c, 1) == 1 && c != '\n') line += c;
    ::close(out[0]);
    port_ = line.empty() ? 0 : std::atoi(line.c_str());
    if (!port_) {
      ADD_FAILURE() << script << " did not start"
                    << (log.empty() || !std::filesystem::exists(log) ? "" : ": " + read_text(log));
    }
  }
  ~PythonServer() { stop_process(pid_); }
  PythonServer(const PythonServer&) = delete;
  PythonServer& operator=(const PythonServer&) = delete;

  int port() const { return port_; }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/" + path;
  }
  /// Sends `sig` to the server.
  void signal(int sig) const {
    if (pid_ > 0) ::kill(pid_, sig);
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

/// tests/support/fault_proxy.py in front of a server on `upstream_port`, with `options` (see the
/// script).
class FaultProxy : public PythonServer {
 public:
  FaultProxy(int upstream_port, const std::string& options)
      : PythonServer("fault_proxy.py",
                     "--upstream-port " + std::to_string(upstream_port) + " " + options) {}
};

}  // namespace ggufs::test
