#include "ggufs/xattrs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ggufs/render.h"

namespace ggufs {

std::vector<XAttr> tensor_xattrs(const TensorInfo& t, std::string_view file_path) {
  std::vector<std::uint64_t> ne(t.ne.begin(), t.ne.begin() + t.n_dims);
  std::vector<std::uint64_t> shape(ne.rbegin(), ne.rend());
  return {
      {"user.ggml.type", type_display_name(t.type)},
      {"user.ggml.ne", fmt::format("{}", fmt::join(ne, ","))},
      {"user.ggml.shape", fmt::format("{}", fmt::join(shape, ","))},
      {"user.gguf.offset", fmt::format("{}", t.file_offset)},
      {"user.gguf.file", std::string(file_path)},
  };
}

}  // namespace ggufs
