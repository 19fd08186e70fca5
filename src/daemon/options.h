// The command line of ggufs: its own options, parsed with libfuse's option parser (so `-o` lists
// mix ggufs's options with the FUSE and mount options it passes on), and the usage text.
#pragma once

#include <cstdint>

#include "fuse_version.h"

namespace ggufs {

/// The default largest read request (bytes): the most libfuse 3.14 can splice through its 1 MiB
/// pipe with the reply header (1008 KiB; at 1024 KiB every reply took its copy path). Larger
/// requests need libfuse 3.17, which sizes its buffer by max_write (lib/fuse_lowlevel.c,
/// do_init), and the kernel's fs.fuse.max_pages_limit (Linux 6.13; 256 pages by default).
inline constexpr unsigned kDefaultMaxRead = 1032192;
/// Bounds of -o max_read (bytes): one page, and 64 MiB.
inline constexpr unsigned kMinMaxRead = 4096;
inline constexpr unsigned kMaxMaxRead = 64u << 20;
/// Config::read_ahead_kb when -o read_ahead_kb is not given.
inline constexpr unsigned kReadAheadAuto = ~0u;
/// The read-ahead (KiB) that holds four requests of `max_read` bytes.
constexpr unsigned read_ahead_kb_for(unsigned max_read) { return 4 * (max_read / 1024); }

/// What the command line asked for, besides the FUSE options left in the argument list.
struct Config {
  const char* file = nullptr;
  const char* mountpoint = nullptr;  ///< as given; libfuse resolves it (which fails if stale)
  int force = 0;                     ///< -o force: clear a stale mount first
  int help = 0;
  int version = 0;
  int info = 0;     ///< --info: print the report of FILE, no mount
  int json = 0;     ///< --json: print gguf.json of FILE, no mount
  int quiet = 0;    ///< -q: log errors only
  int verbose = 0;  ///< -v: also log the mount, unmount and each tensor file opened
  int redact = 0;   ///< -o redact: no key or tensor names in the daemon's log
  /// -o max_read=N: the largest read request the kernel sends (bytes, kMinMaxRead to
  /// kMaxMaxRead).
  unsigned max_read = kDefaultMaxRead;
  /// -o read_ahead_kb=N (KiB; 0 keeps the kernel's default). Unset (kReadAheadAuto): four
  /// requests of max_read per read-ahead window (read_ahead_kb_for), so the daemon's threads
  /// work on several at once (first reads of 485 MiB: medians 18–32 % faster than with one).
  unsigned read_ahead_kb = kReadAheadAuto;
  std::int64_t uid = -1;           ///< -o uid=N: owner of every file (default: the mounting user)
  std::int64_t gid = -1;           ///< -o gid=N: group of every file (default: the mounting group)
  char* cache_dir = nullptr;       ///< -o cache_dir=PATH: chunk cache of remote models (malloc)
  char* ca_file = nullptr;         ///< -o ca_file=PATH: CA certificates for https (malloc)
  char* token_file = nullptr;      ///< -o token_file=PATH: bearer token for remote models (malloc)
  unsigned cache_size_mib = 4096;  ///< -o cache_size_mib=N: the chunk cache is trimmed to this
  unsigned read_timeout = 45;      ///< -o read_timeout=S: time bound of one remote read (1–60 s)
  int s3_path_style = 0;           ///< -o s3_path_style: ENDPOINT/BUCKET/KEY even on AWS
  int s3_virtual_host = 0;         ///< -o s3_virtual_host: BUCKET.HOST/KEY on custom endpoints
  int s3_anonymous = 0;            ///< -o s3_anonymous: unsigned requests (public buckets)
  char* notify_pipe = nullptr;     ///< -o notify_pipe=PATH: readiness written there (malloc)
  char* safetensors_dtype = nullptr;  ///< -o safetensors_dtype=f32|f16|bf16 (malloc)
  char* hf_dtype = nullptr;           ///< -o hf_dtype=f32|f16|bf16 (malloc)
  char* hf_max_shard_size = nullptr;  ///< -o hf_max_shard_size=N[KB|MB|GB|TB] (malloc)
  char* mlx_dtype = nullptr;          ///< -o mlx_dtype=f32|f16|bf16 (malloc)
  unsigned mlx_requantize = 0;        ///< -o mlx_requantize=4|6|8 (0: not given)
  int direct_io = 0;  ///< -o direct_io: decoded and whole-model files bypass the page cache
  /// --mmproj PATH (or -o mmproj=PATH): the vision projector paired with FILE (malloc)
  char* mmproj = nullptr;
};

/// Parses ggufs's own options out of `args` into `conf`, leaving the FUSE ones in `args`.
/// fstab-only options (noauto, nofail, _netdev, user, users, auto, nouser, defaults, x-*,
/// comment=…) are accepted and dropped, so an fstab line passed on by mount.fuse3 works.
/// Returns false (after printing why) on a malformed option.
bool parse_options(fuse_args& args, Config& conf);

/// The usage text (`--help`, and after a usage error).
const char* usage_text();

}  // namespace ggufs
