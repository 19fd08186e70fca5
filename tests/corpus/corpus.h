// Files built in code with our writer and ByteWriter: valid fixtures that exercise every value
// type, tensor type and naming rule, and hostile files that attack every field of the container.
// The corpus tests check each hostile file's outcome; the fuzz seed generator writes them all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ggufs::corpus {

using Bytes = std::vector<std::uint8_t>;

/// A named file.
struct Fixture {
  std::string name;
  Bytes bytes;
};

/// A malformed or hostile file and what ggufs must do with it: refuse it with a ParseError at
/// `offset` whose problem contains `problem`, or (accepted) serve it safely.
struct Hostile {
  std::string name;  ///< short identifier: the field attacked and how
  Bytes bytes;
  bool accepted = false;
  std::uint64_t offset = 0;
  std::string problem;
};

/// Valid files: one tensor of every known type (random bytes), every metadata value type
/// (nested and empty arrays, non-finite floats, control bytes, invalid UTF-8), names that need
/// escaping, alignment 64, version 2, big-endian, unknown type ids, empty tensors, unordered data.
std::vector<Fixture> valid_fixtures();

/// At least 40 hostile files covering the header, the key/values, the tensor infos and the data
/// section; a few are harmless and accepted.
std::vector<Hostile> hostile_files();

/// Valid models of architectures hf/ serves (folder_views.h), as llama.cpp's converter writes
/// them, each small enough for a fuzz input (under 64 KiB): a llama with a SentencePiece
/// tokenizer (tokenizer.ggml.model "llama", scores, token types), a gpt2 with merges whose 2-D
/// weights are transposed, a qwen3moe with a stacked Q4_0 expert tensor, a gemma2 (norms offset
/// by -1), and a Q4_K llama with a byte-level BPE tokenizer. Tensors alternate F32 and F16, so
/// hf/ both splices and decodes.
std::vector<Fixture> hf_models();

/// mlx/'s seeds: one tiny llama (hf_models' Q4_K llama) per quantized ggml type that ggufs
/// decodes, its embedding, q, k, v, gate, up and output matrices of that type (random blocks:
/// their scales may be anything, infinite included): the types with an exact MLX form
/// (mlx_blocks.h) are served in it, the others requantized where -o mlx_requantize is drawn.
/// Named "hf.mlx.<type>".
std::vector<Fixture> mlx_models();

/// A text model and its vision projector (llama.cpp's mmproj GGUF) for one row of hf/'s vision
/// table (src/hf/hf_vision.cpp, hf::vision_architectures()), as the converter writes them, each
/// small: the text model's vocabulary holds the row's image tokens, the projector a one-layer
/// tower of its clip.projector_type whose projection_dim is the text model's width.
struct VisionPair {
  std::string name;
  Bytes text, projector;
};
std::vector<VisionPair> vision_pairs();

/// Pairs whose hf/ is the text model alone (src/tree/hf_folder.cpp, lay_out), each with the
/// reason hf/'s description gives: a big-endian pair whose connector is Q8_0 (no decoder reads
/// ggml's blocks in that byte order), a projector with a string array that is not UTF-8
/// (gguf-py, transformers' reader, fails on it), projectors holding a tensor their class does
/// not build (a layer past block_count, a bias, a lone k norm, an unflagged deepstack merger),
/// and a text model whose M-RoPE sections sum to its head size only modulo 2⁶⁴.
struct VisionRefusal {
  std::string name;
  Bytes text, projector;
  std::string reason;
  std::string text_class = "LlamaForCausalLM";  ///< the text model's class, which hf/ then is
};
std::vector<VisionRefusal> vision_refusals();

/// A seed of the hf fuzz target: a tiny model of one row of hf/'s architecture table
/// (src/hf/hf_architectures.cpp, hf::architectures()), or why the row has none.
struct HfRowSeed {
  std::size_t index = 0;  ///< the row's index in hf::architectures()
  /// "<gguf_arch>/<model_type>/<class_name>", and "+<required_tensor>" where the row has one
  std::string row;
  std::string name;         ///< "hf_row.<nn>.<model_type>": the seed's file name
  Bytes bytes;              ///< empty when the row has no seed
  std::size_t tensors = 0;  ///< the row's state_dict names (a layer's, globals) the seed holds
  std::size_t entries = 0;  ///< the row's state_dict names (a layer's, globals)
  std::string missing;      ///< why there is no seed, or the entries the seed leaves out
};

/// One seed per row of the architecture table, in its order: the GGUF keys the row reads
/// (tiny sizes: hidden 8, 2 heads, 2 layers, 16 tokens; per-layer arrays where the row reads
/// layer types or periods from one), a byte-level BPE vocabulary, and a tensor for each
/// WeightEntry of the row in each layer, each F32 or F16, whose shape is the one the row's
/// weight map accepts (found by asking hf_weight_map: a seed only needs to get hf/; the
/// corpus tests check that it does). Each under 64 KiB (scripts/fuzz's -max_len).
std::vector<HfRowSeed> hf_row_seeds();

/// libFuzzer's dictionary for the hf target (one `"…"` entry a line, escapes \\ \" \xNN):
/// every GGUF key suffix of the table under each architecture's prefix, and every tensor name
/// under "blk.0.", "blk.1.", "enc.blk.0.", "dec.blk.0." or as a global.
std::string hf_dictionary();

/// A model hf/ must refuse (no hf/ folder, one warning), and the key or tensor the warning must
/// name.
struct HfRefusal {
  std::string name;  ///< "hf_refused.<what is wrong>"
  Bytes bytes;
  std::string names;  ///< the key or tensor name at fault
};

/// Variants of hf_models() whose metadata would make transformers' GGUF import fail or build a
/// model unlike the file: a string that is not UTF-8 (the architecture, a token), a vocabulary
/// that does not match token_embd, a missing block count or embedding length, a huge vocabulary
/// size, head counts that do not divide the q/k rows, more experts than the stacks hold.
std::vector<HfRefusal> hf_refusals();

/// Valid models whose hf/ folder or tensor names once cost far more time or memory than their
/// size (issue #31), each growing linearly with `scale` (at least 1; under 64 KiB at 1, as fuzz
/// seeds; up to a few MB at 160, scripts/bench's): a view laid out must cost a bounded multiple
/// of the file's size at every scale.
///  - "cost.added_tokens": a llama whose 500·scale tokens all have token_type 3 (control), each
///    an added token of tokenizer.json (once quadratic in their count);
///  - "cost.merges": a llama with scores and no merges whose tokens are "a", "aa", … up to
///    96·√scale "a"s, so that its bytes (quadratic in the longest token) stay about linear in
///    scale, while the merges built from every split of every token grow as its cube;
///  - "cost.experts": a qwen3moe of qwen3moe.expert_count 10 000 000 and 4·scale layers, each
///    holding one norm and no expert stack (once 10 000 000 steps per layer);
///  - "cost.names": a llama with 500·scale more one-element tensors whose distinct names are
///    three bytes of invalid UTF-8 (0x80..0xBF; four past 64³ tensors), all one U+FFFD text in
///    model.safetensors' keys (once quadratic in their count);
///  - "cost.long_tokens": a llama with 8·scale tokens of 4096 bytes, scores and no merges (each
///    split point of each token looked up).
/// Each vocabulary matches its embedding's rows, so hf/ gets as far as the part stressed.
std::vector<Fixture> cost_shapes(std::size_t scale);

/// A llama of no tensors whose vocabulary is `chars` two-byte characters (from U+0100) and all
/// their chars² pairs, with scores and no merges: a merge to build per pair, and texts that grow
/// with chars² (200: 40 000 merges, a tokenizer.json and a gguf.json above 1 MiB each; 1 000:
/// a 20 MB file whose views take hundreds of MB). For tests of running out of memory.
Bytes pair_vocabulary_llama(std::size_t chars);

/// Seeds of the Ollama manifest fuzz target: manifests as Ollama writes them, and manifests
/// with a hostile digest, size or shape.
std::vector<Fixture> manifest_seeds();

/// Seeds of the library names fuzz target: model names, one per line, as a folder library and
/// an Ollama store name them, clashing, needing escapes, and too long for a file name.
std::vector<Fixture> library_name_seeds();

}  // namespace ggufs::corpus
