// The size of read requests: -o max_read, and what libfuse and the kernel make of it. Shared by
// ggufs (fuse_adapter.cpp) and ggufs-ceiling, which must ask for the same.
#pragma once

#include <algorithm>
#include <fstream>

#include "fuse_version.h"

namespace ggufs {

/// At INIT: asks for read requests of up to `max_read` bytes. libfuse requires conn->max_read to
/// equal the max_read mount option. The largest request the kernel sends is also bounded by
/// INIT's max_pages, which libfuse derives from max_write, also on a read-only mount
/// (lib/fuse_lowlevel.c, do_init). libfuse 3.17 sizes its request buffer by max_write, so it is
/// raised to max_read there. Older libfuse keeps a 1 MiB buffer, and the kernel refuses every
/// read of /dev/fuse into a buffer smaller than max_write (fs/fuse/dev.c, fuse_dev_do_read), so
/// max_write stays as it is: requests stay at most 1 MiB.
inline void set_request_size(fuse_conn_info* conn, unsigned max_read) {
  conn->max_read = max_read;
#if GGUFS_LIBFUSE_3_17
  conn->max_write = std::max(conn->max_write, max_read);
#endif
}

/// The largest read request (bytes) the kernel will send for `max_read`: capped at 1 MiB by
/// libfuse before 3.17, and at fs.fuse.max_pages_limit pages (Linux 6.13; 256 before, and by
/// default) of 4 KiB by the kernel (fs/fuse/inode.c, process_init_reply).
inline unsigned effective_max_read(unsigned max_read) {
  unsigned pages = 256;
  std::ifstream("/proc/sys/fs/fuse/max_pages_limit") >> pages;
#if !GGUFS_LIBFUSE_3_17
  pages = std::min(pages, 256u);
#endif
  return std::min<unsigned long long>(max_read, pages * 4096ull);
}

}  // namespace ggufs
