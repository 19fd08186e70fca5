// `ggufs --info FILE`: what gguf-dump prints, without mounting.
#pragma once

#include <string>

#include "ggufs/gguf.h"

namespace ggufs {

/// A text report of `f` for a terminal or a pipe, in four parts:
///  - the header: version, byte order, counts, general.alignment, data section offset, file size;
///  - the metadata, one key per line: index, value type (arrays as [type]), element count,
///    key = value; strings quoted and cut after 60 bytes, arrays shortened to their first
///    5 elements;
///  - the tensors, one per line: index, ggml type, ne (ne[0] first), elements, bytes, absolute
///    data offset, name;
///  - bits per weight: per type (tensors, elements, bytes, 8 × bytes / elements) and in total,
///    over the tensors whose size is known.
/// Names and strings pass through printable(), so no control byte reaches the terminal.
std::string render_info(const GgufFile& f);

}  // namespace ggufs
