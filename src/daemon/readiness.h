// Telling whoever started ggufs that the mount is ready (or failed): the -o notify_pipe=PATH
// file or FIFO, and systemd's notification socket for Type=notify units.
#pragma once

#include <sys/types.h>

namespace ggufs {

/// The mount answers: writes "READY=1\n" to `notify_pipe` (if set; a FIFO blocks until it is
/// read) and sends READY=1 for `daemon_pid` to systemd when NOTIFY_SOCKET is set (the unit
/// needs NotifyAccess=all when not run as root, as the message comes from a helper process).
void notify_ready(const char* notify_pipe, pid_t daemon_pid);

/// The mount failed with `exit_code`: writes "ERROR=<exit_code>\n" to `notify_pipe` (if set) and
/// sends ERRNO=… / STATUS=… to systemd when NOTIFY_SOCKET is set.
void notify_failed(const char* notify_pipe, int exit_code);

}  // namespace ggufs
