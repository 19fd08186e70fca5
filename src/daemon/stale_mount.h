// Stale mounts: a FUSE daemon that died without unmounting (killed with SIGKILL, crashed) leaves
// its mount point answering "Transport endpoint is not connected" (ENOTCONN) to every access.
#pragma once

#include <string>

namespace ggufs {

/// Checks `mountpoint` before mounting on it. If it is a stale FUSE mount: with `force`, clears
/// it with `fusermount3 -uz` and returns true (or prints why that failed and returns false);
/// without, prints what happened and the exact command that clears it, and returns false.
/// Returns true for anything else (other errors are left to the mount itself to report).
bool clear_stale_mount(const std::string& mountpoint, bool force);

/// `s` quoted for a POSIX shell where needed, so that a printed command can be pasted as is.
std::string shell_quote(const std::string& s);

}  // namespace ggufs
