// The daemon's log: stderr in the foreground, syslog (facility daemon) in the background, with
// -q / -v levels and -o redact. Every message passes through printable(), so nothing read from
// a file can put control sequences on a terminal or in a log.
#pragma once

#include <string>
#include <string_view>

namespace ggufs {

enum class LogLevel { kError, kWarning, kInfo };

/// Sets where messages go and which are kept: up to kWarning by default, kError with `quiet`,
/// kInfo with `verbose`. With `redact`, names passed through log_name() are hidden.
/// Call again after detaching with `to_syslog` = true.
void log_setup(bool to_syslog, bool quiet, bool verbose, bool redact);

/// Logs `message` (one line, without a trailing newline) at `level` if that level is kept.
void log_message(LogLevel level, std::string_view message);

/// Whether messages of `level` are kept (to skip formatting those that are not).
bool log_enabled(LogLevel level);

/// Whether -o redact is on (for messages that would quote names in other words).
bool log_redacting();

/// A metadata key or tensor (file) name for a log message: quoted, or "<redacted>" with redact.
std::string log_name(std::string_view name);

}  // namespace ggufs
