// The libfuse API ggufs is written against, and which of its later features this build has.
#pragma once

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

/// 1 when built with libfuse 3.17 or later, 0 before. From 3.17 ggufs takes FUSE passthrough
/// (fuse_passthrough_open, fuse_file_info::backing_id: libfuse 3.16, used as 3.17's
/// fuse_conn_info has them) and raises max_write with max_read, as libfuse 3.17 sizes its request
/// buffer by max_write (lib/fuse_lowlevel.c, do_init).
#if FUSE_MAJOR_VERSION > 3 || (FUSE_MAJOR_VERSION == 3 && FUSE_MINOR_VERSION >= 17)
#define GGUFS_LIBFUSE_3_17 1
#else
#define GGUFS_LIBFUSE_3_17 0
#endif
