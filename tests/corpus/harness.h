// The fuzz harness as plain functions: the libFuzzer entry points (fuzz_*.cpp) call them, and the
// corpus tests replay the seeds and every past crash through them under GCC and in CI.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace ggufs::fuzz {

/// Parses `data` as a GGUF file from memory. A ParseError is a normal outcome; an accepted file
/// must satisfy the parser's promises (counts, offsets and extents inside the file, aligned and
/// non-overlapping data). Returns "" when all is well, else what broke (another exception type
/// included): the fuzz targets abort on it, the tests fail on it.
std::string check_parse(std::span<const std::uint8_t> data);

/// check_parse, then builds the Tree and a ContentReader over the same bytes and reads every
/// node: whole, past its end, and at a few offsets and sizes derived from the input, comparing
/// each partial read with the whole one (raw/ with the file bytes, text with the rendered text,
/// npy/ with its header plus f32/). Also checks that every name is a usable file name that looks
/// up to its own node and that gguf.json is valid JSON. Returns "" or what broke.
std::string check_tree(std::span<const std::uint8_t> data);

}  // namespace ggufs::fuzz
