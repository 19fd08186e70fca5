// FUSE passthrough (Linux 6.9, libfuse 3.17; the kernel's
// Documentation/filesystems/fuse-passthrough.rst): an open file whose bytes are one backing file
// (ServedModel::whole_file_fd) gets that file as its backing file, and the kernel serves its
// reads and mmap from it without asking the daemon. Built with an older libfuse, every call
// here leaves files to the daemon.
#pragma once

#include "fuse_version.h"

namespace ggufs {

/// The mount's session, for the calls to Linux that have no request to go through (null once
/// it is destroyed). Set before the session is mounted.
void passthrough_session(fuse_session* se);

/// At INIT: asks the kernel for passthrough where it can work (offered by the kernel, and this
/// process has CAP_SYS_ADMIN); logs once, at -v, that it is on, or why it is off.
void passthrough_init(fuse_conn_info* conn);

/// For an open of `ino` whose bytes are all of the file open as `fd` (-1: they are not): opens
/// it in passthrough (sets fi->backing_id and fi->fh) where passthrough is on, and returns
/// whether it did. Linux takes one backing id per inode and fails (EIO) an open in the other mode
/// than the files of that inode already open: so the opens of an inode share one id, closed
/// with the last, an inode first opened without passthrough stays so until its last release,
/// and passthrough, once off, stays off (backing_ids.h). A refusal by Linux of the moment
/// (ENOMEM, ENOSPC: out of memory or ids) leaves this open to the daemon and passthrough on; any
/// other (a backing file on a stacked file system, say) turns it off, with one warning.
bool passthrough_open(fuse_req_t req, fuse_ino_t ino, int fd, fuse_file_info* fi);

/// After the release of `fi`, or a failed reply to its open (`req` then null: libfuse has freed
/// the request, and the kernel sends no release): closes the inode's id with its last open in
/// passthrough, through the session's descriptor when there is no request. Call it for every
/// open, whether in passthrough or not.
void passthrough_release(fuse_req_t req, fuse_ino_t ino, const fuse_file_info* fi);

}  // namespace ggufs
