// A stand-in for the Hugging Face Hub and its CDN: two nginx servers from Debian on loopback.
// The "Hub" answers resolve/ URLs with a 302 to the "CDN" on another port, as the Hub sends
// large files to its CDN; each keeps an access log of the Authorization header it received.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "http_server.h"
#include "test_util.h"

namespace ggufs::test {

/// The Hub on 127.0.0.1:hub_port(), redirecting every request that carries
/// "Authorization: Bearer <token>" to the same path on the CDN (hub_port() + 1), which serves
/// `root`; without the token the Hub answers 401. Stopped by the destructor.
class HubAndCdn {
 public:
  HubAndCdn(const std::filesystem::path& root, const std::string& token) {
    const auto prefix = dir_.path();
    pid_ = start_nginx(prefix, 21000, 103, port_, [&] { return config(root, prefix, token); });
  }
  ~HubAndCdn() { stop_process(pid_); }
  HubAndCdn(const HubAndCdn&) = delete;
  HubAndCdn& operator=(const HubAndCdn&) = delete;

  /// For HF_ENDPOINT.
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  /// One line per request: status, the Authorization header as received ("-" when none), the
  /// request line.
  std::string hub_log() const { return read_text(dir_.path() / "logs" / "hub.log"); }
  std::string cdn_log() const { return read_text(dir_.path() / "logs" / "cdn.log"); }

 private:
  std::string config(const std::filesystem::path& root, const std::filesystem::path& prefix,
                     const std::string& token) {
    const std::string logs = (prefix / "logs").string();
    std::ostringstream c;
    c << "daemon off;\nmaster_process off;\nuser root;\npid " << (prefix / "nginx.pid").string()
      << ";\nerror_log " << logs << "/error.log info;\n"
      << "events { worker_connections 256; }\n"
      << "http {\n"
      << "  log_format auth '$status \"$http_authorization\" \"$request\"';\n"
      << "  client_body_temp_path " << (prefix / "tmp-body").string() << ";\n"
      << "  proxy_temp_path " << (prefix / "tmp-proxy").string() << ";\n"
      << "  fastcgi_temp_path " << (prefix / "tmp-fcgi").string() << ";\n"
      << "  uwsgi_temp_path " << (prefix / "tmp-uwsgi").string() << ";\n"
      << "  scgi_temp_path " << (prefix / "tmp-scgi").string() << ";\n"
      << "  server {\n    listen 127.0.0.1:" << port_ << ";\n"
      << "    access_log " << logs << "/hub.log auth;\n"
      << "    location / {\n"
      << "      if ($http_authorization != \"Bearer " << token << "\") { return 401; }\n"
      << "      return 302 http://127.0.0.1:" << port_ + 1 << "$request_uri;\n    }\n  }\n"
      << "  server {\n    listen 127.0.0.1:" << port_ + 1 << ";\n"
      << "    access_log " << logs << "/cdn.log auth;\n"
      << "    root " << root.string() << "/;\n  }\n"
      << "}\n";
    return c.str();
  }

  TempDir dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace ggufs::test
