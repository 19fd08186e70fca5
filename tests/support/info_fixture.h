// A small model for the tests of --info and --json (unit and command).
#pragma once

#include <filesystem>
#include <vector>

#include "ggufs/ggml_type.h"
#include "ggufs/gguf_writer.h"

namespace ggufs::test {

// A model with a string, an integer, a float and a long string array, and two tensors.
inline std::filesystem::path write_info_model(const std::filesystem::path& dir) {
  GgufWriter g;
  g.add_string("general.architecture", "llama");
  g.add("llama.block_count", Value{ValueType::kUint32, std::uint64_t{3}});
  g.add("x.eps", Value{ValueType::kFloat32, 0.5f});
  Array tokens(ValueType::kString);
  for (const char* t : {"<unk>", "<s>", "</s>", "a\tb", "c", "d", "e"}) tokens.push_string(t);
  g.add("tokenizer.ggml.tokens", Value{ValueType::kArray, tokens});
  g.add_tensor("first", GGML_TYPE_F32, {4}, std::vector<std::uint8_t>(16, 0));
  g.add_tensor("blk.0.w", GGML_TYPE_Q4_K, {512, 3}, std::vector<std::uint8_t>(2 * 3 * 144, 0));
  const auto file = dir / "info.gguf";
  g.write_file(file.string());
  return file;
}

}  // namespace ggufs::test
