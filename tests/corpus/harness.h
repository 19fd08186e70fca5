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

/// check_parse, then builds the Tree (hf/'s dtype and shard size drawn from the input) and a
/// ContentReader over the same bytes and reads every node, hf/ and its weight files included:
/// whole, past its end, and at a few offsets and sizes derived from the input, comparing each
/// partial read with the whole one (raw/ with the file bytes, text with the rendered text, npy/
/// with its header plus f32/; every .safetensors file's header with its data section). Also
/// checks that every name is a usable file name that looks up to its own node, that gguf.json is
/// valid JSON, and that each folder view is either there (hf/: its files consistent) or absent
/// with exactly one one-line warning "<name>/ is not offered: …". Returns "" or what broke.
std::string check_tree(std::span<const std::uint8_t> data);

/// check_parse, then lays out hf/ alone (hf_folder_layout; no other view, so inputs run faster
/// than check_tree's), hf/'s dtype and shard size drawn from the input. Refused: the reason is
/// one line, not empty, with no control byte. Served: config.json and generation_config.json,
/// the three tokenizer files or none, every .json file valid JSON, config.json an object with a
/// model_type; each weight file read as check_tree reads its nodes (whole, past its end, at
/// offsets derived from the input; its safetensors header and data consistent); its tensors
/// exactly hf_weight_map's, each of the shape the map gives, the embedding of config.json's
/// vocab_size rows; every weight piece inside the tensors the file holds (spliced bytes inside
/// one tensor's data, decoded elements inside its element count), and no weight holding more
/// elements than its GGUF tensors; and mlx/ there too, its weight files read the same way, each
/// MLX piece whole rows of a tensor whose type has an MLX form. A vision projector
/// (general.architecture "clip") is first paired with the text model of each of the corpus's
/// vision pairs (corpus::vision_pairs): hf/ of the pair is the vision-language model or the text
/// model alone with a one-line reason, each weight inside the pair's tensors, every file JSON or
/// read as above. Returns "" or what broke.
std::string check_hf(std::span<const std::uint8_t> data);

/// Reads `data` as the text of an Ollama manifest (parse_ollama_manifest). A ParseError is a
/// normal outcome, but it must point inside the text and quote little of it (kMaxMessageBytes),
/// with no control byte; an accepted manifest must be JSON nested at most 64 levels, and give a
/// digest of 64 lower-case hex digits. Returns "" or what broke.
std::string check_ollama_manifest(std::span<const std::uint8_t> data);

/// The name rules of a library over the model names in `data` (one per line, any bytes;
/// at most kMaxNames): each line as a path, and as a prefix when not empty, parse_split_name must
/// agree with shard_path both ways; a Library of entries with those names must give every entry a
/// usable, distinct folder name (escaped, cut to NAME_MAX, "~N" after a clash) that looks up to its
/// own folder, keep every short name that does not clash, and open no model on the way. Returns ""
/// or what broke.
std::string check_library_names(std::span<const std::uint8_t> data);

/// Longest problem of a manifest's ParseError check_ollama_manifest accepts: the words of the
/// message and at most 64 bytes of the manifest, escaped (up to 4 bytes each).
inline constexpr std::size_t kMaxMessageBytes = 600;

/// The bound check_tree holds every tree to: the bytes a Tree holds (texts, headers, nodes,
/// pieces) at most kRenderedBytesPerFileByte per byte of the file plus kRenderedBytesConstant,
/// the bound the README states ("What ggufs validates").
inline constexpr std::uint64_t kRenderedBytesPerFileByte = 512;
inline constexpr std::uint64_t kRenderedBytesConstant = 1 << 20;

/// Most lines check_library_names reads (inputs stay fast).
inline constexpr std::size_t kMaxNames = 256;

}  // namespace ggufs::fuzz
