// Hand-built GGUF bytes for tests that need files our writer would refuse to produce: the header
// and tensor info records of the container (the GGUF specification, ggml docs/gguf.md), field by
// field.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ggufs/gguf_writer.h"

namespace ggufs::test {

/// A GGUF header: magic, `version`, tensor count, key/value count; the caller appends key/values
/// and tensor infos.
inline ByteWriter gguf_header(std::uint64_t n_tensors, std::uint64_t n_kv,
                              std::uint32_t version = 3) {
  ByteWriter w;
  for (char c : std::string_view("GGUF")) w.u8(static_cast<std::uint8_t>(c));
  w.u32(version);
  w.u64(n_tensors);
  w.u64(n_kv);
  return w;
}

/// A tensor info record: name, number of dimensions and `ne`, type id, offset relative to the data
/// section (bytes).
inline void tensor_info(ByteWriter& w, std::string_view name, const std::vector<std::uint64_t>& ne,
                        std::uint32_t type, std::uint64_t offset) {
  w.str(name);
  w.u32(static_cast<std::uint32_t>(ne.size()));
  for (auto d : ne) w.u64(d);
  w.u32(type);
  w.u64(offset);
}

}  // namespace ggufs::test
