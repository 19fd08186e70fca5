// ggufs-sample: writes the embedded sample model (a tiny llama-shaped file whose tensors hold
// smooth, recognisable patterns) or, with --bench-size-mib, a large benchmark model.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <numbers>
#include <span>
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
    "Writes the embedded sample model to OUT.gguf: a tiny llama-shaped GGUF file with metadata\n"
    "of every common kind and six tensors (F32, F16, Q8_0, Q4_K, Q6_K) holding smooth patterns.\n"
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

GgufWriter sample_model() {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_string("general.name", "ggufs sample");
  w.add_string("general.description",
               "A tiny llama-shaped model written by ggufs-sample. Its tensors hold smooth test "
               "patterns (sines, cosines, gaussians), not trained weights.");
  w.add_u32("general.file_type", 15);  // llama.cpp's MOSTLY_Q4_K_M: mostly Q4_K and Q6_K
  w.add_u32("general.quantization_version", 2);
  w.add_u32("llama.context_length", 128);
  w.add_u32("llama.embedding_length", 64);
  w.add_u32("llama.block_count", 1);
  w.add_u32("llama.attention.head_count", 4);
  w.add_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.add_u32("llama.vocab_size", 16);
  w.add_string("tokenizer.ggml.model", "llama");
  w.add("tokenizer.ggml.add_bos_token", Value{ValueType::kBool, true});

  // 16 tokens: specials, a newline and a tab token, word pieces, one non-ASCII token.
  const std::vector<std::string> tokens = {"<unk>",  "<s>", "</s>",   "\n",      "\t", "▁hello",
                                           "▁world", "▁g",  "guf",    "▁tensor", "s",  "▁mount",
                                           "!",      "é",   "▁float", "32"};
  std::vector<float> scores;
  std::vector<std::int32_t> types;  // llama.cpp token types: 1 normal, 2 unknown, 3 control
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    scores.push_back(t < 3 ? 0.0f : -static_cast<float>(t - 2));
    types.push_back(t == 0 ? 2 : t < 3 ? 3 : 1);
  }
  w.add("tokenizer.ggml.tokens", array(ValueType::kString, tokens));
  w.add("tokenizer.ggml.scores", array(ValueType::kFloat32, scores));
  w.add("tokenizer.ggml.token_type", array(ValueType::kInt32, types));
  w.add("tokenizer.ggml.bos_token_id", u32(1));
  w.add("tokenizer.ggml.eos_token_id", u32(2));

  // Token t's embedding: a sine of frequency t + 1 over the 64 dimensions, fading with t.
  add_tensor(w, "token_embd.weight", GGML_TYPE_F32, 64, 16, pattern(64, 16, [](double i, double t) {
               return std::sin(kTwoPi * (t + 1) * (i + 0.5) / 64) * std::exp(-t / 32);
             }));
  // Row r: a cosine whose frequency grows with r, plus a bump in the middle of the row.
  add_tensor(w, "blk.0.attn_q.weight", GGML_TYPE_Q8_0, 256, 64,
             pattern(256, 64, [](double i, double r) {
               return 0.5 * std::cos(kTwoPi * i / 256 * (1 + r / 8)) + 0.25 * gauss(i - 128, 24);
             }));
  // A 2-D gaussian hill centred on (128, 32), lowered by 0.2.
  add_tensor(w, "blk.0.attn_k.weight", GGML_TYPE_F16, 256, 64,
             pattern(256, 64, [](double i, double r) {
               return gauss(i - 128, 48) * gauss(r - 32, 12) - 0.2;
             }));
  // A checkerboard of waves: sin over the columns times cos over the rows.
  add_tensor(w, "blk.0.ffn_up.weight", GGML_TYPE_Q4_K, 512, 128,
             pattern(512, 128, [](double i, double r) {
               return std::sin(kTwoPi * i / 128) * std::cos(kTwoPi * r / 64);
             }));
  // Two gaussian ridges crossing diagonally, one positive, one negative.
  add_tensor(w, "blk.0.ffn_down.weight", GGML_TYPE_Q6_K, 512, 128,
             pattern(512, 128, [](double i, double r) {
               return gauss(i - 4 * r, 32) - gauss(i - (508 - 4 * r), 32);
             }));
  // Around 1, with a ripple.
  add_tensor(w, "output_norm.weight", GGML_TYPE_F32, 256, 1, pattern(256, 1, [](double i, double) {
               return 1.0 + 0.25 * std::sin(kTwoPi * i / 64);
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
