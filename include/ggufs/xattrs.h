// Extended attributes of tensor files (raw/, f32/, npy/): the tensor's type, shape and where its
// bytes lie, readable with getfattr or os.getxattr without parsing anything.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ggufs/gguf.h"

namespace ggufs {

/// One extended attribute: full name ("user.ggml.type") and value (no trailing NUL).
using XAttr = std::pair<std::string, std::string>;

/// The extended attributes of every file of tensor `t`, in this order:
///   user.ggml.type    ggml type name ("Q4_K"; "type_<id>" for a removed or unknown id)
///   user.ggml.ne      elements per dimension, ne[0] first, comma-separated ("4096,32000")
///   user.ggml.shape   the NumPy shape of f32/ and npy/: ne reversed ("32000,4096")
///   user.gguf.offset  absolute byte offset of the tensor's data in its file, decimal
///   user.gguf.file    the path of the GGUF file that holds the tensor's data (`file_path`)
/// Only the first n_dims entries of ne are listed (the GGUF specification, ggml docs/gguf.md,
/// tensor info).
std::vector<XAttr> tensor_xattrs(const TensorInfo& t, std::string_view file_path);

}  // namespace ggufs
