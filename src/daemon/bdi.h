// Tuning of the kernel's backing-device info (bdi) of our own FUSE mount.
#pragma once

#include <optional>
#include <string>

namespace ggufs {

/// The "MAJOR:MINOR" device of the FUSE mount at `mountpoint`, read from /proc/self/mountinfo
/// (not from stat(), which would send a request to this very daemon before it serves).
std::optional<std::string> mount_device(const std::string& mountpoint);

/// Sets /sys/class/bdi/<device>/read_ahead_kb of the mount at `mountpoint` to `kb`, so that
/// sequential reads reach the daemon as large requests (the FUSE default of 128 KiB halves
/// throughput). Needs root; returns false (and changes nothing) where that is not possible.
bool set_read_ahead_kb(const std::string& mountpoint, unsigned kb);

}  // namespace ggufs
