// The few facts of the operating system that differ between Linux and the other POSIX systems
// ggufs's core and Python package build on (macOS): each here, so that no Linux-only name stands
// in the layers below the daemon. Linux is what is built and tested; the other branches are
// written to POSIX and the macOS SDK's <sys/stat.h> but not checked on macOS.
#pragma once

#include <sys/stat.h>
#include <time.h>

#include <cstdint>

namespace ggufs {

/// The modification time of `st` (POSIX.1-2008 `st_mtim`; macOS names it `st_mtimespec`).
inline struct timespec modification_time(const struct stat& st) {
#if defined(__APPLE__)
  return st.st_mtimespec;
#else
  return st.st_mtim;
#endif
}

/// The same, in nanoseconds since the epoch.
inline std::int64_t modification_time_ns(const struct stat& st) {
  const struct timespec t = modification_time(st);
  return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

/// The file dlopen loads libcurl from (remote models): its soname, version 4 being the ABI curl.h
/// describes since libcurl 7.16 (Debian's libcurl4; macOS ships /usr/lib/libcurl.4.dylib).
#if defined(__APPLE__)
inline constexpr const char* kLibcurlSoname = "libcurl.4.dylib";
#else
inline constexpr const char* kLibcurlSoname = "libcurl.so.4";
#endif

}  // namespace ggufs

// Whether the CPU has Advanced SIMD, which every AArch64 CPU has: Linux says so in its auxiliary
// vector (getauxval(AT_HWCAP) & HWCAP_ASIMD); other systems (macOS on Apple silicon) have it on
// every arm64 machine they run on.
#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
namespace ggufs {
inline bool cpu_has_asimd() { return (getauxval(AT_HWCAP) & HWCAP_ASIMD) != 0; }
}  // namespace ggufs
#elif defined(__aarch64__)
namespace ggufs {
inline bool cpu_has_asimd() { return true; }
}  // namespace ggufs
#endif
