// ggufs-sample: writes the embedded sample model (a tiny but consistent llama whose tensors hold
// smooth, recognisable patterns and whose vocabulary is a real, if small, SentencePiece-style
// BPE) or, with --bench-size-mib, a large benchmark model.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <numbers>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "ggufs/error.h"
#include "ggufs/ggml_type.h"
#include "ggufs/gguf.h"
#include "ggufs/gguf_writer.h"
#include "ggufs/quantize.h"

namespace {

using ggufs::Array;
using ggufs::GGML_TYPE_F16;
using ggufs::GGML_TYPE_F32;
using ggufs::GGML_TYPE_Q4_K;
using ggufs::GGML_TYPE_Q6_K;
using ggufs::GGML_TYPE_Q8_0;
using ggufs::GgufWriter;
using ggufs::Value;
using ggufs::ValueType;

constexpr std::string_view kUsage =
    "usage: ggufs-sample [--bench-size-mib N] OUT.gguf\n"
    "\n"
    "Writes the embedded sample model to OUT.gguf: a tiny llama (one layer, hidden size 256, a\n"
    "384-token vocabulary) with metadata of every common kind and twelve tensors (F32, F16, Q8_0,\n"
    "Q4_K, Q6_K) holding smooth patterns; its hf/ view loads in transformers.\n"
    "\n"
    "options:\n"
    "  --bench-size-mib N  write a benchmark model of at least N MiB instead: five tensors\n"
    "                      bench.f32, bench.f16, bench.q8_0, bench.q4_k, bench.q6_k of equal\n"
    "                      element count, generated and written streaming\n"
    "  -h, --help          print this help\n"
    "\n"
    "exit status: 0 on success, 1 on a usage error, 2 when the file cannot be written\n";

constexpr double kTwoPi = 2.0 * std::numbers::pi;

Value u32(std::uint32_t v) { return Value{ValueType::kUint32, std::uint64_t{v}}; }

template <typename T>
Value array(ValueType elem_type, const std::vector<T>& items) {
  Array a(elem_type);
  for (const T& item : items) {
    if constexpr (std::is_same_v<T, std::int32_t>) {
      a.push_back(Value{elem_type, std::int64_t{item}});
    } else {
      a.push_back(Value{elem_type, item});
    }
  }
  return Value{ValueType::kArray, std::move(a)};
}

/// ne0 × ne1 values f(i, r), i (column, ne[0]) fastest.
std::vector<float> pattern(std::uint64_t ne0, std::uint64_t ne1,
                           const std::function<double(double i, double r)>& f) {
  std::vector<float> v;
  v.reserve(ne0 * ne1);
  for (std::uint64_t r = 0; r < ne1; ++r) {
    for (std::uint64_t i = 0; i < ne0; ++i) {
      v.push_back(static_cast<float>(f(static_cast<double>(i), static_cast<double>(r))));
    }
  }
  return v;
}

double gauss(double x, double sigma) { return std::exp(-x * x / (2.0 * sigma * sigma)); }

void add_tensor(GgufWriter& w, std::string name, std::uint32_t type, std::uint64_t ne0,
                std::uint64_t ne1, const std::vector<float>& values) {
  std::vector<std::uint64_t> ne{ne0};
  if (ne1 != 1) ne.push_back(ne1);
  w.add_tensor(std::move(name), type, std::move(ne), ggufs::quantize(type, values));
}

// --- the sample model --------------------------------------------------------------------------

// A consistent llama, as small as the K-quants allow: Q4_K and Q6_K store rows of whole 256-element
// super-blocks, so the hidden size (every matrix's input but ffn_down's) and the feed-forward size
// (ffn_down's input) are multiples of 256.
constexpr std::uint64_t kHidden = 256;                // llama.embedding_length
constexpr std::uint64_t kHeads = 4;                   // llama.attention.head_count
constexpr std::uint64_t kKvHeads = 2;                 // head_count_kv: grouped-query attention
constexpr std::uint64_t kHeadDim = kHidden / kHeads;  // 64: llama.rope.dimension_count
constexpr std::uint64_t kFeedForward = 512;           // llama.feed_forward_length
constexpr std::uint64_t kContext = 256;               // llama.context_length
constexpr std::uint64_t kVocab = 384;                 // tokens: 3 special, 256 bytes, 125 pieces

// The text the vocabulary's pieces are learned from: what ggufs does, a few lines of tensors.tsv
// (so tab and newline are tokens) and a French sentence (so é, è and à are).
constexpr std::string_view kTokenizerText =
    "ggufs mounts a GGUF model file as a read-only tree of files. Every tensor of the model is a "
    "file in each of the tensor folders: raw holds the bytes of the tensor as they are stored, f32 "
    "holds its values decoded to float32 on read, f16 holds them rounded to float16, and npy holds "
    "them as a NumPy array. Every metadata key is a text file. The hf folder holds the model as a "
    "Hugging Face model folder: its config, its tokenizer and its weights, decoded from the "
    "tensors of the model as they are read. Nothing is converted ahead of time, and nothing is "
    "written to the disk.\n"
    "name\ttype\tne\n"
    "token_embd.weight\tQ4_K\t256,384\n"
    "blk.0.attn_q.weight\tQ8_0\t256,256\n"
    "blk.0.ffn_down.weight\tQ6_K\t512,256\n"
    "Chaque tenseur du modèle est un fichier, décodé à la lecture.\n";

constexpr std::string_view kWordStart = "▁";  // U+2581: SentencePiece's mark of a space

struct Vocabulary {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<std::int32_t> types;  // llama.cpp's token types
};

/// The UTF-8 characters of `s`, each as a string.
std::vector<std::string> characters(std::string_view s) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = 1;
    while (i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80) ++n;
    out.emplace_back(s.substr(i, n));
    i += n;
  }
  return out;
}

/// A SentencePiece-style BPE vocabulary with byte fallback, laid out as LLaMA's: <unk>, <s>, </s>;
/// the 256 byte tokens <0x00>…<0xFF>; the pieces byte-pair merging learns from kTokenizerText, in
/// the order it learns them; then the text's characters, the most frequent first (ties in byte
/// order). Scores fall by one per piece from 0, so merges rank in the order learned (llama.cpp
/// merges the best-scoring pair first; transformers builds its merges from the scores).
///
/// Learning: every word (a run of characters other than space, tab and newline) with ▁ in front,
/// split into characters; then, until the vocabulary is full, the adjacent pair that occurs most
/// often in the text's words (ties: the first in byte order, of the left then the right symbol)
/// is merged wherever it occurs. Tab and newline are tokens of their own, never merged;
/// characters the text lacks are spelt with byte tokens.
Vocabulary sample_vocabulary() {
  std::map<std::string, int> word_counts;
  std::map<std::string, int> char_counts;
  std::string word;
  for (std::size_t i = 0; i <= kTokenizerText.size(); ++i) {
    const char c = i < kTokenizerText.size() ? kTokenizerText[i] : ' ';
    if (c == ' ' || c == '\t' || c == '\n') {
      if (!word.empty()) ++word_counts[std::string(kWordStart) + word];
      word.clear();
      if (c != ' ') ++char_counts[std::string(1, c)];
    } else {
      word += c;
    }
  }
  std::vector<std::pair<std::vector<std::string>, int>> words;
  for (const auto& [w, n] : word_counts) {
    words.emplace_back(characters(w), n);
    for (const std::string& ch : words.back().first) char_counts[ch] += n;
  }

  Vocabulary v;
  auto add = [&](std::string token, float score, std::int32_t type) {
    v.tokens.push_back(std::move(token));
    v.scores.push_back(score);
    v.types.push_back(type);
  };
  add("<unk>", 0, 2);  // 2: unknown
  add("<s>", 0, 3);    // 3: control
  add("</s>", 0, 3);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    add(name, 0, 6);  // 6: byte
  }

  std::set<std::string> pieces;
  std::vector<std::string> merged;
  while (v.tokens.size() + merged.size() + char_counts.size() < kVocab) {
    std::map<std::pair<std::string, std::string>, int> pairs;
    for (const auto& [symbols, n] : words) {
      for (std::size_t i = 0; i + 1 < symbols.size(); ++i) pairs[{symbols[i], symbols[i + 1]}] += n;
    }
    const auto best =
        std::max_element(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) {
          return a.second < b.second;  // the first of the most frequent, in byte order
        });
    if (best == pairs.end()) throw std::logic_error("the tokenizer text has too few pairs");
    const auto [left, right] = best->first;
    for (auto& [symbols, n] : words) {
      std::vector<std::string> out;
      for (std::size_t i = 0; i < symbols.size(); ++i) {
        if (i + 1 < symbols.size() && symbols[i] == left && symbols[i + 1] == right) {
          out.push_back(left + right);
          ++i;
        } else {
          out.push_back(symbols[i]);
        }
      }
      symbols = std::move(out);
    }
    // The same piece can come from two merges ("▁h"+"er", "▁he"+"r"): one token.
    if (pieces.insert(left + right).second) merged.push_back(left + right);
  }
  std::vector<std::pair<std::string, int>> chars(char_counts.begin(), char_counts.end());
  std::stable_sort(chars.begin(), chars.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  float score = 0;
  for (std::string& piece : merged) add(std::move(piece), score--, 1);  // 1: normal
  for (auto& [ch, n] : chars) add(std::move(ch), score--, 1);
  if (v.tokens.size() != kVocab)
    throw std::logic_error("the tokenizer text has too many characters");
  return v;
}

GgufWriter sample_model() {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_string("general.name", "ggufs sample");
  w.add_string("general.description",
               "A tiny llama written by ggufs-sample. Its tensors hold smooth test patterns "
               "(sines, cosines, gaussians), not trained weights; its vocabulary is learned from a "
               "paragraph about ggufs.");
  w.add_u32("general.file_type", 15);  // llama.cpp's MOSTLY_Q4_K_M: mostly Q4_K and Q6_K
  w.add_u32("general.quantization_version", 2);
  w.add_u32("llama.vocab_size", kVocab);
  w.add_u32("llama.context_length", kContext);
  w.add_u32("llama.embedding_length", kHidden);
  w.add_u32("llama.block_count", 1);
  w.add_u32("llama.feed_forward_length", kFeedForward);
  w.add_u32("llama.rope.dimension_count", kHeadDim);
  w.add_f32("llama.rope.freq_base", 10000.0f);
  w.add_u32("llama.attention.head_count", kHeads);
  w.add_u32("llama.attention.head_count_kv", kKvHeads);
  w.add_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);

  const Vocabulary vocab = sample_vocabulary();
  w.add_string("tokenizer.ggml.model", "llama");
  w.add("tokenizer.ggml.tokens", array(ValueType::kString, vocab.tokens));
  w.add("tokenizer.ggml.scores", array(ValueType::kFloat32, vocab.scores));
  w.add("tokenizer.ggml.token_type", array(ValueType::kInt32, vocab.types));
  w.add("tokenizer.ggml.bos_token_id", u32(1));
  w.add("tokenizer.ggml.eos_token_id", u32(2));
  w.add("tokenizer.ggml.unknown_token_id", u32(0));
  w.add("tokenizer.ggml.add_bos_token", Value{ValueType::kBool, true});
  w.add("tokenizer.ggml.add_eos_token", Value{ValueType::kBool, false});

  constexpr std::uint64_t H = kHidden, F = kFeedForward, V = kVocab, KV = kKvHeads * kHeadDim;
  // Token t's embedding: a sine over the dimensions whose frequency (1 to 16) and phase (24 steps
  // of a turn) step with t.
  add_tensor(w, "token_embd.weight", GGML_TYPE_Q4_K, H, V, pattern(H, V, [](double i, double t) {
               const double frequency = 1 + std::fmod(t, 16), phase = std::floor(t / 16) / 24;
               return std::sin(kTwoPi * (frequency * (i + 0.5) / H + phase));
             }));
  // A ramp from 0.75 to 1.25.
  add_tensor(w, "blk.0.attn_norm.weight", GGML_TYPE_F32, H, 1,
             pattern(H, 1, [](double i, double) { return 0.75 + 0.5 * i / (H - 1); }));
  // Row r: a cosine whose frequency grows with r, plus a bump in the middle of the row.
  add_tensor(w, "blk.0.attn_q.weight", GGML_TYPE_Q8_0, H, H, pattern(H, H, [](double i, double r) {
               return 0.5 * std::cos(kTwoPi * i / H * (1 + r / 32)) + 0.25 * gauss(i - 128, 24);
             }));
  // A 2-D gaussian hill centred on (128, 64), lowered by 0.2.
  add_tensor(w, "blk.0.attn_k.weight", GGML_TYPE_F16, H, KV, pattern(H, KV, [](double i, double r) {
               return gauss(i - 128, 48) * gauss(r - 64, 24) - 0.2;
             }));
  // Rings around (128, 64), twice as close together along the rows as along the columns.
  add_tensor(w, "blk.0.attn_v.weight", GGML_TYPE_Q6_K, H, KV,
             pattern(H, KV, [](double i, double r) {
               return 0.8 * std::cos(kTwoPi * std::hypot(i - 128, 2 * (r - 64)) / 48);
             }));
  // Diagonal stripes.
  add_tensor(
      w, "blk.0.attn_output.weight", GGML_TYPE_Q4_K, H, H,
      pattern(H, H, [](double i, double r) { return 0.6 * std::sin(kTwoPi * (i + r) / 64); }));
  // A bump in the middle, on 1.
  add_tensor(w, "blk.0.ffn_norm.weight", GGML_TYPE_F32, H, 1,
             pattern(H, 1, [](double i, double) { return 1.0 + 0.25 * gauss(i - 128, 32); }));
  // A saddle: negative in two opposite corners, positive in the other two.
  add_tensor(w, "blk.0.ffn_gate.weight", GGML_TYPE_Q4_K, H, F,
             pattern(H, F, [](double i, double r) {
               return (i - (H - 1) / 2.0) / (H / 2.0) * (r - (F - 1) / 2.0) / (F / 2.0);
             }));
  // A checkerboard of waves: sin over the columns times cos over the rows.
  add_tensor(w, "blk.0.ffn_up.weight", GGML_TYPE_Q4_K, H, F, pattern(H, F, [](double i, double r) {
               return std::sin(kTwoPi * i / 128) * std::cos(kTwoPi * r / 64);
             }));
  // Two gaussian ridges crossing diagonally, one positive, one negative.
  add_tensor(w, "blk.0.ffn_down.weight", GGML_TYPE_Q6_K, F, H,
             pattern(F, H, [](double i, double r) {
               return gauss(i - 2 * r, 32) - gauss(i - (F - 2 - 2 * r), 32);
             }));
  // Around 1, with a ripple.
  add_tensor(w, "output_norm.weight", GGML_TYPE_F32, H, 1, pattern(H, 1, [](double i, double) {
               return 1.0 + 0.25 * std::sin(kTwoPi * i / 64);
             }));
  // Token t's output row: a gaussian bump whose centre moves along the dimensions with t.
  add_tensor(w, "output.weight", GGML_TYPE_Q6_K, H, V, pattern(H, V, [](double i, double t) {
               return gauss(i - (t + 0.5) * H / V, 12) - 0.1;
             }));
  return w;
}

// --- benchmark model ---------------------------------------------------------------------------

constexpr std::uint64_t kBenchRow = 4096;       // ne[0]: 16 super-blocks of 256
constexpr std::uint64_t kBenchChunkRows = 256;  // rows generated and quantized at a time (4 MiB)
constexpr ggufs::GgmlType kBenchTypes[] = {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q8_0,
                                           GGML_TYPE_Q4_K, GGML_TYPE_Q6_K};

/// Fills rows [row0, row0 + n_rows) of benchmark tensor `tensor`: a wave along the row whose
/// amplitude varies slowly over the rows, plus cheap deterministic noise (xorshift seeded by row
/// and tensor, so the values do not depend on the chunking).
void bench_rows(std::uint32_t tensor, std::uint64_t row0, std::uint64_t n_rows,
                std::span<const float> wave, std::vector<float>& out) {
  out.resize(n_rows * kBenchRow);
  float* p = out.data();
  for (std::uint64_t r = row0; r < row0 + n_rows; ++r) {
    const float amp =
        static_cast<float>(0.75 + 0.5 * std::cos(kTwoPi * static_cast<double>(r) / 1024));
    std::uint32_t s =
        static_cast<std::uint32_t>(r * 2654435761u) ^ (tensor * 0x85ebca6bu) ^ 0x9e3779b9u;
    if (s == 0) s = 1;
    for (std::uint64_t i = 0; i < kBenchRow; ++i) {
      s ^= s << 13;
      s ^= s >> 17;
      s ^= s << 5;
      const float noise = static_cast<float>(s >> 8) * (0.25f / 16777216.0f) - 0.125f;
      *p++ = amp * wave[i] + noise;
    }
  }
}

GgufWriter bench_model(std::uint64_t size_mib) {
  // Bytes of one row of all five tensors together; enough rows that the data alone is ≥ N MiB.
  std::uint64_t row_bytes = 0;
  for (std::uint32_t type : kBenchTypes) {
    const ggufs::TypeTraits& t = *ggufs::type_traits(type);
    row_bytes += kBenchRow / t.block_size * t.type_size;
  }
  const std::uint64_t rows = (size_mib * 1024 * 1024 + row_bytes - 1) / row_bytes;

  GgufWriter w;
  w.add_string("general.architecture", "bench");
  w.add_string("general.name", "ggufs benchmark");
  w.add_string("general.description", "Benchmark model written by ggufs-sample --bench-size-mib " +
                                          std::to_string(size_mib) +
                                          ": synthetic waves plus noise.");
  static const std::vector<float> wave = [] {
    std::vector<float> v(kBenchRow);
    for (std::uint64_t i = 0; i < kBenchRow; ++i) {
      v[i] = static_cast<float>(std::sin(kTwoPi * static_cast<double>(i) / 512) +
                                0.3 * std::cos(kTwoPi * static_cast<double>(i) / 97));
    }
    return v;
  }();
  for (std::uint32_t index = 0; index < std::size(kBenchTypes); ++index) {
    const ggufs::TypeTraits& t = *ggufs::type_traits(kBenchTypes[index]);
    std::string name = "bench.";
    for (char c : t.name) name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::uint64_t n_bytes = kBenchRow / t.block_size * t.type_size * rows;
    const std::uint32_t type = t.id;
    w.add_tensor_stream(std::move(name), type, {kBenchRow, rows}, n_bytes,
                        [=](const GgufWriter::ByteSink& sink) {
                          std::vector<float> values;
                          for (std::uint64_t r = 0; r < rows; r += kBenchChunkRows) {
                            const std::uint64_t n = std::min(kBenchChunkRows, rows - r);
                            bench_rows(index, r, n, wave, values);
                            sink(ggufs::quantize(type, values));
                          }
                        });
  }
  return w;
}

int usage_error(std::string_view message) {
  std::fprintf(
      stderr,
      "ggufs-sample: %.*s\nusage: ggufs-sample [--bench-size-mib N] OUT.gguf (see --help)\n",
      static_cast<int>(message.size()), message.data());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out;
  std::uint64_t bench_mib = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fwrite(kUsage.data(), 1, kUsage.size(), stdout);
      return 0;
    }
    if (arg == "--bench-size-mib" || arg.starts_with("--bench-size-mib=")) {
      std::string_view n;
      if (arg.size() > std::string_view("--bench-size-mib").size()) {
        n = arg.substr(std::string_view("--bench-size-mib=").size());
      } else if (i + 1 < argc) {
        n = argv[++i];
      } else {
        return usage_error("--bench-size-mib needs a number of MiB");
      }
      const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), bench_mib);
      if (ec != std::errc() || end != n.data() + n.size() || bench_mib == 0 ||
          bench_mib > (std::uint64_t{1} << 20)) {
        return usage_error("--bench-size-mib: '" + std::string(n) +
                           "' is not a size from 1 to 1048576 MiB");
      }
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-')
      return usage_error("unknown option '" + std::string(arg) + "'");
    if (!out.empty()) return usage_error("only one output file may be given");
    out = arg;
  }
  if (out.empty()) return usage_error("no output file given");

  try {
    const GgufWriter w = bench_mib ? bench_model(bench_mib) : sample_model();
    w.write_file(out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ggufs-sample: %s\n", e.what());
    return 2;
  }
  return 0;
}
