#include "log.h"

#include <fmt/format.h>
#include <syslog.h>

#include <cstdio>

#include "ggufs/names.h"

namespace ggufs {
namespace {

// Set before any thread starts (log_setup is called from main only), read-only afterwards.
struct LogConfig {
  bool to_syslog = false;
  LogLevel max_level = LogLevel::kWarning;
  bool redact = false;
};
LogConfig g_log;

}  // namespace

void log_setup(bool to_syslog, bool quiet, bool verbose, bool redact) {
  g_log.max_level = quiet ? LogLevel::kError : verbose ? LogLevel::kInfo : LogLevel::kWarning;
  g_log.redact = redact;
  if (to_syslog && !g_log.to_syslog) ::openlog("ggufs", LOG_PID, LOG_DAEMON);
  g_log.to_syslog = to_syslog;
}

bool log_enabled(LogLevel level) { return level <= g_log.max_level; }

void log_message(LogLevel level, std::string_view message) {
  if (!log_enabled(level)) return;
  const std::string text = printable(message);
  if (g_log.to_syslog) {
    const int priority = level == LogLevel::kError     ? LOG_ERR
                         : level == LogLevel::kWarning ? LOG_WARNING
                                                       : LOG_INFO;
    ::syslog(priority, "%s", text.c_str());
  } else {
    fmt::print(stderr, "ggufs: {}\n", text);
  }
}

bool log_redacting() { return g_log.redact; }

std::string log_name(std::string_view name) {
  return g_log.redact ? std::string("<redacted>") : fmt::format("'{}'", name);
}

}  // namespace ggufs
