// The text files of the tree, rendered from a parsed GgufFile: metadata/<key>, gguf.json,
// tensors.tsv, and the .npy header. Formats are the user-facing contract in the README.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "ggufs/gguf.h"

namespace ggufs {

/// Content of metadata/<key>: integers in decimal; bool as true/false; float32/float64 as the
/// shortest decimal that round-trips; a string as its bytes; arrays one element per line with
/// string elements JSON-escaped and nested arrays as one JSON array per line; an empty array is
/// an empty file; every other file ends with exactly one newline.
std::string render_metadata_value(const Value& v);

/// gguf.json: one RFC 8259 document with the header, every key/value (type and value, arrays in
/// full) and every tensor info; for a split model also "shards" (path, tensor_count,
/// data_offset, file_size of each file) and each tensor's "shard" index. Non-finite floats are the
/// strings "nan", "inf", "-inf"; bytes that are not valid UTF-8 are replaced by U+FFFD so the
/// document is valid for every input.
std::string render_gguf_json(const GgufFile& f);

/// tensors.tsv: a header line, then one line per tensor in file order with
/// name, type, ne (comma-separated, GGUF order), n_elements, file offset, bytes.
/// Names are JSON-escaped where they hold tabs, newlines or other control bytes.
std::string render_tensors_tsv(const GgufFile& f);

/// NumPy .npy format 1.0 header for elements of dtype `descr` ('<f4': little-endian float32,
/// '<f2': float16), C order, of `shape` (NumPy order: ne reversed), padded with spaces and a final
/// newline so that its length (and hence the data offset) is a multiple of 64 bytes.
std::string npy_header(std::span<const std::uint64_t> shape, std::string_view descr = "<f4");

/// The ggml type name of type id `id` ("Q4_K"), or "type_<id>" for a removed or unknown id.
std::string type_display_name(std::uint32_t id);

}  // namespace ggufs
