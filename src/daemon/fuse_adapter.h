// The FUSE low-level adapter: translates requests into Library lookups and ContentReader reads.
// No format logic lives here.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "fuse_version.h"
#include "ggufs/library.h"
#include "options.h"

namespace ggufs {

class RemoteReadPool;

/// What every request handler needs; immutable while mounted. Passed as the session userdata.
struct MountContext {
  const Library& library;  ///< the model, or the library of models, that the mount shows
  uid_t uid;
  gid_t gid;
  /// Serves the tensor reads of a remote model off libfuse's threads; null for local models.
  RemoteReadPool* remote_reads = nullptr;
  /// The largest read request (bytes; -o max_read, Config::max_read), also passed to libfuse
  /// as the max_read mount option.
  unsigned max_read = kDefaultMaxRead;
  /// -o direct_io (Config::direct_io): decoded and whole-model files opened with
  /// FOPEN_DIRECT_IO, so reads bypass the FUSE page cache.
  bool direct_io = false;
};

/// The table of request handlers (lookup, getattr, open, read, release, opendir, readdir,
/// statfs, getxattr, listxattr). Built with libfuse 3.17 or later, a file that is a whole local
/// file (ServedModel::whole_file_fd) is opened in FUSE passthrough where the kernel allows it;
/// INIT logs (at -v) whether passthrough is on, and why not.
const fuse_lowlevel_ops& fuse_operations();

}  // namespace ggufs
