// The malformed-file corpus (corpus.h): every hostile file is refused with its own message
// and offset, or served safely; no hostile file, and no sparse file claiming counts and lengths
// near 2^64, makes the parser allocate more than a little memory; the fuzz harness passes on
// every fixture and on every input that once crashed it (fuzz regressions); models of every
// architecture hf/ serves get an hf/ folder, and hostile metadata gives none, with one warning
// naming the key or tensor at fault (issue 26, item 6).
//
// This is its own executable because it replaces the global operator new to record the largest
// single allocation while a parse runs (robust under ASan too, unlike an RLIMIT_AS limit).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>

#include "corpus.h"
#include "ggufs/byte_source.h"
#include "ggufs/error.h"
#include "ggufs/folder_views.h"
#include "ggufs/ggml_type.h"
#include "ggufs/gguf.h"
#include "ggufs/gguf_writer.h"
#include "ggufs/hf_config.h"
#include "ggufs/hf_weights.h"
#include "ggufs/model.h"
#include "ggufs/names.h"
#include "ggufs/tree.h"
#include "harness.h"
#include "hf_architectures.h"
#include "hf_vision.h"

namespace {

std::atomic<bool> g_counting{false};
std::atomic<std::size_t> g_largest{0};
std::atomic<std::size_t> g_allocations{0}, g_large_allocations{0};
// A failing allocator (every thread): the allocation of at least kLarge bytes numbered g_fail_at
// (counted from 1 while g_counting) fails once; every allocation of at least g_fail_from bytes
// fails, as under an address-space limit (RLIMIT_AS) where the large blocks no longer fit.
// Smaller blocks never fail: nlohmann-json 3.11's destructor allocates (json.hpp,
// json_value::destroy: a std::vector stack of the value's children), so a failure there ends
// any program that uses it. The values ggufs still builds with it hold a few members each, so
// their destructors ask for far less than kLarge; everything of a size that grows with the file
// is written as text.
constexpr std::size_t kLarge = 4096;
std::atomic<std::size_t> g_fail_at{0};
std::atomic<std::size_t> g_fail_from{SIZE_MAX};

void* counted_alloc(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) {
    std::size_t prev = g_largest.load(std::memory_order_relaxed);
    while (n > prev && !g_largest.compare_exchange_weak(prev, n)) {
    }
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (n >= kLarge && g_large_allocations.fetch_add(1, std::memory_order_relaxed) + 1 ==
                           g_fail_at.load(std::memory_order_relaxed)) {
      throw std::bad_alloc();
    }
    if (n >= g_fail_from.load(std::memory_order_relaxed)) throw std::bad_alloc();
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
// The nothrow forms too (std::stable_sort's temporary buffer uses them): every form that pairs
// with a replaced delete must be replaced, or a block from the library's new reaches free().
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace ggufs {
namespace {

using corpus::Bytes;
constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();
// The parser's own read buffer is 64 KiB; anything near this bound is a count-driven allocation.
constexpr std::size_t kAllocationBound = 1 << 20;

// The largest single allocation made while `f` runs.
template <typename F>
std::size_t largest_allocation(F&& f) {
  g_largest = 0;
  g_allocations = 0;
  g_large_allocations = 0;
  g_counting = true;
  try {
    f();
  } catch (...) {
    g_counting = false;
    throw;
  }
  g_counting = false;
  return g_largest;
}

// Bytes `head` followed by zeros up to `size`: a sparse file that claims far more than it holds,
// so counts and lengths pass the "bytes left in the file" checks.
class SparseSource final : public ByteSource {
 public:
  SparseSource(Bytes head, std::uint64_t size) : head_(std::move(head)), size_(size) {}
  std::uint64_t size() const override { return size_; }
  std::size_t read_at(std::uint64_t offset, void* dst, std::size_t n) const override {
    if (offset >= size_) return 0;
    const auto k = static_cast<std::size_t>(std::min<std::uint64_t>(n, size_ - offset));
    std::memset(dst, 0, k);
    if (offset < head_.size()) {
      const auto h = static_cast<std::size_t>(std::min<std::uint64_t>(k, head_.size() - offset));
      std::memcpy(dst, head_.data() + offset, h);
    }
    return k;
  }

 private:
  Bytes head_;
  std::uint64_t size_;
};

// Parses `src`, expecting a ParseError at `offset` whose problem contains `problem`, with no
// allocation above kAllocationBound.
void expect_refused(const ByteSource& src, std::uint64_t offset, const std::string& problem) {
  std::size_t largest = 0;
  try {
    largest = largest_allocation([&] { parse_gguf(src, "hostile.gguf"); });
    ADD_FAILURE() << "accepted; expected '" << problem << "'";
  } catch (const ParseError& e) {
    largest = g_largest;
    EXPECT_EQ(e.file(), "hostile.gguf");
    EXPECT_EQ(e.offset(), offset) << e.what();
    EXPECT_NE(e.problem().find(problem), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()),
              "hostile.gguf: at byte " + std::to_string(offset) + ": " + e.problem());
  }
  EXPECT_LT(largest, kAllocationBound);
}

TEST(Corpus, HasAtLeast40RefusedFilesOverEveryPart) {
  const auto files = corpus::hostile_files();
  std::size_t refused = 0;
  std::map<std::string, int> parts;
  for (const auto& h : files) {
    refused += !h.accepted;
    ++parts[h.name.substr(0, h.name.find('.'))];
  }
  EXPECT_GE(refused, 40u);
  for (const char* part : {"header", "kv", "tensor", "data", "ok"}) {
    EXPECT_GE(parts[part], 4) << part;
  }
}

TEST(Corpus, EachHostileFileIsRefusedWithItsMessageOrServedSafely) {
  for (const auto& h : corpus::hostile_files()) {
    SCOPED_TRACE(h.name);
    const MemorySource src(h.bytes);
    if (h.accepted) {
      EXPECT_LT(largest_allocation([&] { parse_gguf(src, "hostile.gguf"); }), kAllocationBound);
      EXPECT_EQ(fuzz::check_tree(h.bytes), "");
    } else {
      expect_refused(src, h.offset, h.problem);
    }
  }
}

TEST(Corpus, ValidFixturesParseAndServeEveryFile) {
  for (const auto& f : corpus::valid_fixtures()) {
    SCOPED_TRACE(f.name);
    EXPECT_NO_THROW(parse_gguf(MemorySource(f.bytes), f.name));
    EXPECT_EQ(fuzz::check_tree(f.bytes), "");
  }
}

TEST(Corpus, EveryTruncationOfEveryFixtureIsRefusedCleanly) {
  for (const auto& f : corpus::valid_fixtures()) {
    for (std::size_t len = 0; len < f.bytes.size(); len += 1 + len / 64) {
      const Bytes cut(f.bytes.begin(), f.bytes.begin() + static_cast<std::ptrdiff_t>(len));
      EXPECT_EQ(fuzz::check_tree(cut), "") << f.name << " cut to " << len;
    }
  }
}

TEST(Corpus, EveryByteOfTheSmallFixtureCorruptedIsHandled) {
  // A deterministic slice of what the fuzzer does: each byte set to 0x00, 0x01, 0x7f and 0xff.
  for (const auto& f : corpus::valid_fixtures()) {
    if (f.name != "valid.small") continue;
    for (std::size_t i = 0; i < f.bytes.size(); ++i) {
      for (std::uint8_t v : {0x00, 0x01, 0x7f, 0xff}) {
        Bytes b = f.bytes;
        b[i] = v;
        EXPECT_EQ(fuzz::check_tree(b), "") << "byte " << i << " = " << int{v};
      }
    }
  }
}

TEST(Corpus, ManifestAndNameSeedsPassTheHarness) {
  for (const auto& f : corpus::manifest_seeds()) {
    EXPECT_EQ(fuzz::check_ollama_manifest(f.bytes), "") << f.name;
  }
  for (const auto& f : corpus::library_name_seeds()) {
    EXPECT_EQ(fuzz::check_library_names(f.bytes), "") << f.name;
  }
}

// --- hf/: models it serves, and metadata it must refuse (issue 26, item 6) -------------------

// The lines of `warnings`, for failure messages.
std::string lines(const std::vector<std::string>& warnings) {
  std::string out;
  for (const std::string& w : warnings) out += "\n  " + w;
  return out;
}

// The hf/ weight pieces of `tree` whose tensor has ggml type `type` (any type when negative)
// and that satisfy `pred`.
template <typename P>
std::size_t hf_pieces(const Tree& tree, const GgufFile& f, int type, P&& pred) {
  const Ino hf = tree.lookup(kRootIno, "hf");
  std::size_t n = 0;
  for (Ino ino = 1; ino <= tree.count(); ++ino) {
    const Node& node = *tree.node(ino);
    if (ino == kRootIno || node.parent != hf || node.kind != NodeKind::kComposite) continue;
    for (const Piece& p : node.pieces) {
      if (p.kind == Piece::Kind::kTensor &&
          (type < 0 || f.tensors[p.tensor].type == static_cast<std::uint32_t>(type)) && pred(p)) {
        ++n;
      }
    }
  }
  return n;
}

TEST(HfCorpus, EachModelGetsAnHfFolderThatReachesItsTransform) {
  const auto models = corpus::hf_models();
  ASSERT_EQ(models.size(), 5u);
  for (const auto& m : models) {
    SCOPED_TRACE(m.name);
    // A seed longer than scripts/fuzz's -max_len (65536) would be cut, and no longer parse.
    EXPECT_LT(m.bytes.size(), 65536u);
    const GgufFile f = parse_gguf(MemorySource(m.bytes), m.name);
    const Tree tree(f);
    const Ino hf = tree.lookup(kRootIno, "hf");
    ASSERT_NE(hf, 0u) << lines(tree.warnings());
    for (const char* name : {"config.json", "generation_config.json", "model.safetensors"}) {
      EXPECT_NE(tree.lookup(hf, name), 0u) << name;
    }
    for (const char* name :
         {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"}) {
      EXPECT_NE(tree.lookup(hf, name), 0u) << name << lines(tree.warnings());
    }
    for (const std::string& w : tree.warnings()) EXPECT_FALSE(w.starts_with("hf/")) << w;
    EXPECT_EQ(fuzz::check_tree(m.bytes), "");
  }
  // Each seed reaches the transform of its architecture (hf_weights.h), so that the fuzzer starts
  // from inputs deep in hf/'s rendering and reading.
  auto count = [&](const std::string& name, int type, auto pred) {
    for (const auto& m : models) {
      if (m.name != name) continue;
      const GgufFile f = parse_gguf(MemorySource(m.bytes), m.name);
      return hf_pieces(Tree(f), f, type, pred);
    }
    return std::size_t{0};
  };
  using Order = Piece::Order;
  const auto permuted = [](const Piece& p) { return p.order == Order::kPermuteRows; };
  EXPECT_EQ(count("hf.llama", -1, permuted), 2u);  // q and k; one F32, one F16
  EXPECT_EQ(count("hf.llama_q4k", GGML_TYPE_Q4_K, permuted), 2u);
  EXPECT_EQ(count("hf.gpt2", -1, [](const Piece& p) { return p.order == Order::kTransposed; }),
            4u);  // attn_qkv, attn_output, ffn_up, ffn_down
  EXPECT_EQ(count("hf.gemma2", -1, [](const Piece& p) { return p.add == -1.0f; }), 5u);
  EXPECT_EQ(count("hf.qwen3moe", GGML_TYPE_Q4_0, [](const Piece& p) { return p.from > 0; }), 1u);
}

// Tree builds for the refused model `r`, without hf/, with exactly one warning about hf/: "hf/ is
// not offered: …" on one line naming r.names; the rest of the mount is there.
void expect_hf_refused(const corpus::HfRefusal& r) {
  SCOPED_TRACE(r.name);
  EXPECT_LT(r.bytes.size(), 65536u);
  const GgufFile f = parse_gguf(MemorySource(r.bytes), r.name);
  std::optional<Tree> built;
  ASSERT_NO_THROW(built.emplace(f));
  const Tree& tree = *built;
  EXPECT_EQ(tree.lookup(kRootIno, "hf"), 0u) << "hf/ offered although " << r.names << " is wrong";
  std::vector<std::string> refused;
  for (const std::string& w : tree.warnings()) {
    if (w.starts_with("hf/")) refused.push_back(w);
  }
  ASSERT_EQ(refused.size(), 1u) << lines(tree.warnings());
  EXPECT_TRUE(refused[0].starts_with("hf/ is not offered: ")) << refused[0];
  EXPECT_NE(refused[0].find(r.names), std::string::npos) << refused[0];
  EXPECT_EQ(refused[0].find('\n'), std::string::npos) << refused[0];
  // The rest of the mount is served.
  for (const char* name : {"metadata", "raw", "model.gguf", "gguf.json"}) {
    EXPECT_NE(tree.lookup(kRootIno, name), 0u) << name;
  }
  EXPECT_EQ(fuzz::check_tree(r.bytes), "");
}

TEST(HfCorpus, HostileMetadataGivesNoHfAndOneWarningNamingTheKey) {
  const auto refusals = corpus::hf_refusals();
  ASSERT_GE(refusals.size(), 10u);
  for (const auto& r : refusals) {
    expect_hf_refused(r);
  }
}

TEST(HfCorpus, EveryMetadataByteOfTheHfModelsCorruptedIsHandled) {
  // A deterministic slice of what the fuzzer does to hf/'s input: each byte before the tensor
  // data (key/values and tensor infos) of the llama and the gpt2 set to 0xff (a string no longer
  // UTF-8, a count or length huge) or, every other byte, 0x00 (a count or dimension zero).
  for (const auto& m : corpus::hf_models()) {
    if (m.name != "hf.llama" && m.name != "hf.gpt2") continue;
    const std::uint64_t data_offset = parse_gguf(MemorySource(m.bytes), m.name).data_offset;
    for (std::size_t i = 0; i < data_offset; ++i) {
      Bytes b = m.bytes;
      b[i] = i % 2 ? 0x00 : 0xff;
      EXPECT_EQ(fuzz::check_tree(b), "") << m.name << ": byte " << i << " = " << int{b[i]};
    }
  }
}

TEST(HfCorpus, EveryTruncationOfEveryHfModelIsHandled) {
  for (const auto& m : corpus::hf_models()) {
    for (std::size_t len = 0; len < m.bytes.size(); len += 1 + len / 16) {
      const Bytes cut(m.bytes.begin(), m.bytes.begin() + static_cast<std::ptrdiff_t>(len));
      EXPECT_EQ(fuzz::check_tree(cut), "") << m.name << " cut to " << len;
    }
  }
}

// The hf fuzz target's seeds: one tiny model per row of the architecture table, each getting hf/
// (config.json and the weight map both, the row's own) with the row's tensors, and passing the
// hf and tree harnesses. The rows a seed cannot cover are named here, with the reason.
TEST(HfCorpus, EveryArchitectureRowHasASeedThatGetsHf) {
  // deepseek_v2: the table's DeepSeek-V2 row lists V3's router correction bias
  // (exp_probs_b.bias), whose presence makes a file the deepseek_v3 row's.
  const std::map<std::string, std::string> kNotHeld = {
      {"deepseek2/deepseek_v2/DeepseekV2ForCausalLM", "mlp.gate.e_score_correction_bias"}};
  // mistral: the row has no state_dict (gguf-py has no mistral tensor map; transformers' import
  // loads no tensors): its seed gets the tokenizer files alone, no config or weights.
  const std::set<std::string> kNoHf = {"mistral/mistral/MistralForCausalLM"};
  const auto seeds = corpus::hf_row_seeds();
  std::size_t covered = 0;
  std::set<std::string> rows;
  for (const auto& s : seeds) {
    SCOPED_TRACE(s.name + " (" + s.row + ")");
    EXPECT_TRUE(rows.insert(s.row).second);
    ASSERT_FALSE(s.bytes.empty());
    EXPECT_LE(s.bytes.size(), 65536u);  // scripts/fuzz's -max_len
    const GgufFile f = parse_gguf(MemorySource(s.bytes), s.name);
    const HfConfigResult config = render_hf_config(f);
    const HfWeightsResult weights = hf_weight_map(f);
    const Tree tree(f);
    const Ino hf = tree.lookup(kRootIno, "hf");
    EXPECT_EQ(fuzz::check_hf(s.bytes), "");
    EXPECT_EQ(fuzz::check_tree(s.bytes), "");
    if (kNoHf.contains(s.row)) {
      EXPECT_FALSE(weights.weights);
      EXPECT_TRUE(s.missing.starts_with("no weight map: ")) << s.missing;
      EXPECT_EQ(hf, 0u);
      continue;
    }
    if (!config.config || !weights.weights || hf == 0) {
      ADD_FAILURE() << "no hf/: " << config.reason << weights.reason << lines(tree.warnings());
      continue;
    }
    // The row's own (rows sharing a general.architecture are told apart by a key or a layer
    // tensor: hf_weights.cpp's choice).
    const hf::Architecture& row = hf::architectures().at(s.index);
    EXPECT_EQ(
        hf::with_layer_tensors(hf::find_architecture(config.config->model_type, row.gguf_arch), f)
            .row,
        &row);
    const auto json = nlohmann::json::parse(config.config->config_json);
    EXPECT_EQ(json["architectures"][0], std::string(row.class_name));
    EXPECT_FALSE(weights.weights->empty());
    EXPECT_NE(tree.lookup(hf, "model.safetensors"), 0u);
    const auto not_held = kNotHeld.find(s.row);
    EXPECT_EQ(s.missing, not_held == kNotHeld.end() ? "" : "without " + not_held->second);
    EXPECT_EQ(s.tensors + (not_held != kNotHeld.end()), s.entries);
    ++covered;
  }
  // Every row of hf::architectures() (58 when written), each with hf/ but kNoHf's.
  EXPECT_EQ(seeds.size(), hf::architectures().size());
  EXPECT_EQ(seeds.size(), rows.size());
  EXPECT_EQ(covered, seeds.size() - kNoHf.size());
}

// A text model with its projector attached, as the daemon pairs them.
Model paired_model(const corpus::Bytes& text, const corpus::Bytes& projector) {
  Model model;
  model.sources.push_back(std::make_unique<MemorySource>(text));
  model.file = parse_gguf(*model.sources.front(), "text");
  Model proj;
  proj.sources.push_back(std::make_unique<MemorySource>(projector));
  proj.file = parse_gguf(*proj.sources.front(), "mmproj");
  attach_projector(model, std::move(proj));
  return model;
}

// Each vision pair is one model: hf/ of it is the vision table row's class (the seeds reach
// the rows), whose folder lays out with its processor's files, and the projector passes the hf
// harness, paired with every pair's text model.
TEST(HfCorpus, EachVisionPairIsItsRowsModel) {
  const auto pairs = corpus::vision_pairs();
  ASSERT_EQ(pairs.size(), hf::vision_architectures().size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    SCOPED_TRACE(pairs[i].name);
    EXPECT_LT(pairs[i].projector.size(), 65536u);
    const Model model = paired_model(pairs[i].text, pairs[i].projector);
    const GgufFile paired = paired_file(model);
    const HfRendering hf = render_hf(model.file, &paired, &model.projector->file);
    ASSERT_TRUE(hf.vision && hf.vision->model) << (hf.vision ? hf.vision->reason : hf.model.reason);
    const auto config = nlohmann::json::parse(hf.vision->model->config.config_json);
    const hf::VisionArchitecture& row = hf::vision_architectures()[i];
    EXPECT_EQ(config["architectures"][0], row.class_name);
    // the row of the text model's type where a projector type has several (pixtral)
    EXPECT_EQ(config["text_config"]["model_type"],
              row.text_config_type.empty() ? row.text_model_type : row.text_config_type);
    std::vector<std::string> warnings;
    const FolderResult folder = hf_folder_layout(paired, hf, TreeOptions{}, warnings);
    ASSERT_TRUE(folder.folder) << folder.reason;
    EXPECT_TRUE(std::ranges::any_of(folder.folder->files, [](const FolderFile& f) {
      return f.name == "preprocessor_config.json";
    }));
    EXPECT_EQ(fuzz::check_hf(pairs[i].projector), "");
  }
}

// A projector tensor that copies what the text model holds (VisionArchitecture::left_out:
// Mistral 3's [IMG_BREAK] embedding row, which the pair's projector holds) is left out and listed
// as omitted, not refused: the only tensor of the pair no weight reads.
TEST(HfCorpus, AProjectorsCopyOfTheTextModelIsOmitted) {
  for (const corpus::VisionPair& pair : corpus::vision_pairs()) {
    if (pair.name != "vision.mistral3") continue;
    const Model model = paired_model(pair.text, pair.projector);
    const GgufFile paired = paired_file(model);
    const HfRendering hf = render_hf(model.file, &paired, &model.projector->file);
    ASSERT_TRUE(hf.vision && hf.vision->model) << (hf.vision ? hf.vision->reason : "");
    std::vector<std::string> omitted;
    for (const std::size_t t : hf.vision->model->omitted) omitted.push_back(paired.tensors[t].name);
    EXPECT_EQ(omitted, std::vector<std::string>{"v.token_embd.img_break"});
    return;
  }
  FAIL() << "no vision.mistral3 pair";
}

// A pair that is not one model still has hf/: the text model alone, whose description and
// warning give the reason (hf_folder.cpp, lay_out), as transformers' class of the text model.
TEST(HfCorpus, APairThatIsNotOneModelServesTheTextModelWithTheReason) {
  const auto refusals = corpus::vision_refusals();
  ASSERT_EQ(refusals.size(), 8u);
  for (const corpus::VisionRefusal& r : refusals) {
    SCOPED_TRACE(r.name);
    const Model model = paired_model(r.text, r.projector);
    const GgufFile paired = paired_file(model);
    const HfRendering hf = render_hf(model.file, &paired, &model.projector->file);
    std::vector<std::string> warnings;
    const FolderResult folder = hf_folder_layout(paired, hf, TreeOptions{}, warnings);
    ASSERT_TRUE(folder.folder) << folder.reason;
    EXPECT_TRUE(folder.folder->what.ends_with("; the text model alone: " + r.reason))
        << folder.folder->what;
    EXPECT_NE(std::find(warnings.begin(), warnings.end(),
                        "hf/ is the text model alone, without its projector: " + r.reason),
              warnings.end());
    std::set<std::string> names;
    for (const FolderFile& f : folder.folder->files) {
      names.insert(f.name);
      if (f.name == "config.json") {
        EXPECT_EQ(nlohmann::json::parse(f.text)["architectures"][0], r.text_class);
      }
    }
    EXPECT_TRUE(names.contains("model.safetensors"));
    EXPECT_FALSE(names.contains("preprocessor_config.json"));
    EXPECT_EQ(fuzz::check_hf(r.projector), "");
  }
}

// mlx/'s seeds reach every form: a type with an exact affine MLX form (ggml's d·q + m forms,
// mlx_blocks.h's table) serves its matrices in it with or without -o mlx_requantize; every other
// quantized type (MXFP4 and NVFP4 outside expert stacks, the K types of 16-element scales, the
// IQ grids) serves them as float, or requantized to the option's bits. Each seed passes the hf
// harness (reads of rows whose random scales MLX cannot hold fail, by design). Q2_0's seed gets
// no hf/ (transformers' reader, gguf-py, does not know the type), which the harness checks too.
TEST(HfCorpus, MlxSeedsReachEveryForm) {
  const std::set<std::string> exact = {"Q4_0", "Q4_1", "Q5_0",  "Q5_1",  "Q8_0", "Q8_1",
                                       "Q4_K", "Q5_K", "TQ1_0", "TQ2_0", "Q1_0", "Q2_0"};
  std::set<std::string> seen;
  for (const auto& m : corpus::mlx_models()) {
    SCOPED_TRACE(m.name);
    const std::string type = m.name.substr(std::string("hf.mlx.").size());
    seen.insert(type);
    const MemorySource src(m.bytes);
    const GgufFile f = parse_gguf(src, m.name);
    for (const std::uint32_t bits : {0u, 8u}) {
      TreeOptions options;
      options.mlx_requantize = bits;
      std::vector<std::string> warnings;
      const FolderResult mlx = mlx_folder_layout(f, options, warnings);
      if (type == "Q2_0") {  // not in gguf-py 0.19.0's GGMLQuantizationType: no hf/, no mlx/
        EXPECT_NE(mlx.reason.find("is unknown to gguf-py"), std::string::npos) << mlx.reason;
        continue;
      }
      ASSERT_TRUE(mlx.folder) << mlx.reason;
      std::set<std::uint32_t> forms;  // the mlx_bits of the MLX pieces (0: an exact form)
      for (const FolderFile& file : mlx.folder->files) {
        if (!file.layout) continue;
        for (const Piece& p : file.layout->pieces) {
          if (p.kind == Piece::Kind::kMlxWeight) forms.insert(p.mlx_bits);
        }
      }
      const std::set<std::uint32_t> want = exact.contains(type) ? std::set<std::uint32_t>{0}
                                           : bits               ? std::set<std::uint32_t>{bits}
                                                                : std::set<std::uint32_t>{};
      EXPECT_EQ(forms, want) << "-o mlx_requantize=" << bits;
    }
    EXPECT_EQ(fuzz::check_hf(m.bytes), "");
  }
  for (const std::string& t : exact) EXPECT_TRUE(seen.contains(t)) << t;
  for (const char* t : {"Q6_K", "Q3_K", "Q2_K", "IQ4_NL", "IQ2_XXS", "MXFP4", "NVFP4"}) {
    EXPECT_TRUE(seen.contains(t)) << t;
  }
}

TEST(HfCorpus, HfHarnessPassesTheHfModelsAndRefusals) {
  for (const auto& m : corpus::hf_models()) EXPECT_EQ(fuzz::check_hf(m.bytes), "") << m.name;
  for (const auto& r : corpus::hf_refusals()) EXPECT_EQ(fuzz::check_hf(r.bytes), "") << r.name;
}

// The dictionary libFuzzer reads (-dict=): one quoted entry a line, the table's keys and names.
TEST(HfCorpus, DictionaryHasTheTablesKeysAndTensorNames) {
  const std::string dict = corpus::hf_dictionary();
  for (const char* entry : {"\"llama.attention.head_count_kv\"\n", "\"blk.0.attn_q.weight\"\n",
                            "\"mamba2.ssm.group_count\"\n", "\"dec.blk.0.cross_attn_q.weight\"\n",
                            "\"token_embd.weight\"\n"}) {
    EXPECT_NE(dict.find(entry), std::string::npos) << entry;
  }
  std::size_t at = 0;
  while (at < dict.size()) {
    const std::size_t end = dict.find('\n', at);
    ASSERT_NE(end, std::string::npos);
    const std::string line = dict.substr(at, end - at);
    EXPECT_TRUE(line.size() >= 3 && line.front() == '"' && line.back() == '"') << line;
    at = end + 1;
  }
}

// --- sparse files: counts and lengths that the file size allows but memory does not ----------

Bytes header(std::uint64_t n_tensors, std::uint64_t n_kv) {
  ByteWriter w;
  w.bytes(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>("GGUF"), 4));
  w.u32(3);
  w.u64(n_tensors);
  w.u64(n_kv);
  return w.data();
}

template <typename F>
Bytes with(Bytes b, F&& more) {
  ByteWriter w;
  w.bytes(b);
  more(w);
  return w.data();
}

constexpr std::uint64_t kHuge = std::uint64_t{1} << 60;

TEST(SparseFiles, HugeTensorCountReservesLittle) {
  // Zeros make tensor 0 an F32 scalar named ""; tensor 1 repeats the name.
  expect_refused(SparseSource(header(1ull << 50, 0), kHuge), 48, "duplicate tensor name ''");
}

TEST(SparseFiles, HugeKeyCountReservesLittle) {
  expect_refused(SparseSource(header(0, 1ull << 50), kHuge), 24,
                 "metadata entry 0 has an empty key");
}

TEST(SparseFiles, HugeArrayIsRefusedBeforeAllocating) {
  const Bytes b = with(header(0, 1), [](ByteWriter& w) {
    w.str("k");
    w.u32(9);
    w.u32(0);
    w.u64(1ull << 40);
  });
  expect_refused(SparseSource(b, kHuge), 41,
                 "array length 1099511627776: the metadata would need more than 1024 MiB of "
                 "memory (the limit of ggufs)");
}

TEST(SparseFiles, ManyEmptyStringsAreRefusedBeforeAllocating) {
  const Bytes b = with(header(0, 1), [](ByteWriter& w) {
    w.str("k");
    w.u32(9);
    w.u32(8);
    w.u64(1ull << 28);  // 8 bytes each when parsed: 2 GiB
  });
  expect_refused(SparseSource(b, kHuge), 41, "array length 268435456: the metadata would need");
}

TEST(SparseFiles, HugeKeyIsRefusedBeforeAllocating) {
  const Bytes b = with(header(0, 1), [](ByteWriter& w) { w.u64(1ull << 40); });
  expect_refused(SparseSource(b, kHuge), 24,
                 "key of metadata entry 0: string length 1099511627776: the metadata would need "
                 "more than 1024 MiB");
}

TEST(SparseFiles, HugeStringValueIsRefusedBeforeAllocating) {
  const Bytes b = with(header(0, 1), [](ByteWriter& w) {
    w.str("k");
    w.u32(8);
    w.u64(kU64Max >> 2);
  });
  expect_refused(SparseSource(b, kHuge), 37,
                 "string value: string length 4611686018427387903 exceeds the");
  const Bytes c = with(header(0, 1), [](ByteWriter& w) {
    w.str("k");
    w.u32(8);
    w.u64(3ull << 29);
  });
  expect_refused(SparseSource(c, kHuge), 37, "string value: string length 1610612736: the");
}

TEST(SparseFiles, HugeTensorNameIsRefusedBeforeAllocating) {
  const Bytes b = with(header(1, 0), [](ByteWriter& w) { w.u64(1ull << 40); });
  expect_refused(SparseSource(b, kHuge), 24,
                 "tensor 0 name is 1099511627776 bytes; the GGUF spec allows at most 64");
}

TEST(SparseFiles, Float32SizeThatOverflowsIsRefused) {
  // Q1_0 stores 128 elements in 18 bytes: 2^62 elements fit a 2^62-byte file, but their
  // float32 size (2^64 bytes) does not fit st_size.
  const Bytes b = with(header(1, 0), [](ByteWriter& w) {
    w.str("x");
    w.u32(1);
    w.u64(1ull << 62);
    w.u32(GGML_TYPE_Q1_0);
    w.u64(0);
  });
  expect_refused(SparseSource(b, 1ull << 62), 45,
                 "tensor 'x': 4611686018427387904 elements: the float32 size overflows");
}

TEST(SparseFiles, LargestTensorThatFitsIsServed) {
  // A 2^40-element F16 tensor in a sparse 2^41-byte file: accepted, with exact sizes.
  const Bytes b = with(header(1, 0), [](ByteWriter& w) {
    w.str("x");
    w.u32(2);
    w.u64(1ull << 20);
    w.u64(1ull << 20);
    w.u32(GGML_TYPE_F16);
    w.u64(0);
  });
  const SparseSource src(b, (1ull << 41) + 96);
  GgufFile f;
  EXPECT_LT(largest_allocation([&] { f = parse_gguf(src, "big.gguf"); }), kAllocationBound);
  ASSERT_EQ(f.tensors.size(), 1u);
  EXPECT_EQ(f.tensors[0].n_bytes, 1ull << 41);
  EXPECT_EQ(f.tensors[0].n_elements, 1ull << 40);
}

// --- cost: what a view takes grows linearly with the file (issue 31) --------------------------

// Allocations made while `f` runs (every thread).
template <typename F>
std::size_t allocations(F&& f) {
  largest_allocation(std::forward<F>(f));
  return g_allocations;
}

// 20 000 tensor names that all become the same text (three bytes that are not UTF-8 each give
// U+FFFD): the k-th repeat once tried the suffixes ~2 … ~k in turn, formatting each (200 million
// strings; 12 s to mount). Now each suffix is tried once: a few allocations a name.
TEST(Cost, UniqueNamesTriesEachSuffixOnce) {
  constexpr std::size_t kNames = 20000;
  const std::string base = "model.layers.0.self_attn.q_proj.weight";  // past short-string size
  std::vector<std::string> names(kNames, base), out;
  const std::size_t made = allocations([&] { out = unique_names(names); });
  EXPECT_LT(made, 16 * kNames);
  ASSERT_EQ(out.size(), kNames);
  EXPECT_EQ(out[0], base);
  for (std::size_t k = 1; k < kNames; k += 997)
    EXPECT_EQ(out[k], base + "~" + std::to_string(k + 1));
  EXPECT_EQ(std::set<std::string>(out.begin(), out.end()).size(), kNames);
}

// The cost corpus at two sizes, scale 1 and 4: each file passes the fuzz harness, whose bound
// on what a tree holds (harness.h, kRenderedBytesPerFileByte) is the README's; the merges shape
// is refused past the merges' bound with one warning naming tokenizer.ggml.scores.
TEST(Cost, ShapesStayUnderTheBoundAtTwoSizes) {
  for (const std::size_t scale : {1, 4}) {
    for (const auto& c : corpus::cost_shapes(scale)) {
      SCOPED_TRACE(fmt::format("{} at scale {}", c.name, scale));
      EXPECT_EQ(fuzz::check_tree(c.bytes), "");
      if (c.name != "cost.merges") continue;
      const Tree tree(parse_gguf(MemorySource(c.bytes), c.name));
      EXPECT_EQ(tree.lookup(kRootIno, "hf"), 0u);
      EXPECT_EQ(std::count_if(tree.warnings().begin(), tree.warnings().end(),
                              [](const std::string& w) {
                                return w.starts_with("hf/ is not offered: tokenizer.ggml.scores");
                              }),
                1)
          << lines(tree.warnings());
    }
  }
}

// What became of a Tree built while allocations fail: "" when it was built and its hf/ is there
// or absent with a warning saying memory ran out, or it threw std::bad_alloc; else what broke.
std::string tree_under_failures(const GgufFile& f) {
  std::optional<Tree> tree;
  g_counting = true;
  try {
    tree.emplace(f);
  } catch (const std::bad_alloc&) {
  }
  g_counting = false;
  g_fail_at = 0;
  g_fail_from = SIZE_MAX;
  if (!tree) return "";
  if (tree->lookup(kRootIno, "hf")) return "";
  for (const std::string& w : tree->warnings()) {
    if (w.starts_with("hf/ is not offered: not enough memory to ") &&
        w.ends_with(" (std::bad_alloc)")) {
      return "";
    }
  }
  return "built without hf/ and without its warning:" + lines(tree->warnings());
}

// Memory that runs out while a model's views are laid out (every block of 1 MiB or more fails,
// as under an address-space limit) is an error of that model, never the end of the process:
// the vocabulary, merges and added tokens are written as text, not held as nlohmann-json values
// (whose destructor allocates, in a noexcept context while a bad_alloc unwinds: std::terminate).
TEST(NeverAbort, LargeAllocationsFailingWhileLayingOut) {
  const Bytes model = corpus::pair_vocabulary_llama(200);
  const GgufFile f = parse_gguf(MemorySource(model), "pairs.gguf");
  {
    const Tree whole(f);  // with memory to spare: hf/ and its merges are there
    ASSERT_NE(whole.lookup(kRootIno, "hf"), 0u) << lines(whole.warnings());
  }
  for (std::size_t from = std::size_t{64} << 10; from <= std::size_t{16} << 20; from *= 2) {
    g_allocations = 0;
    g_large_allocations = 0;
    g_fail_from = from;
    EXPECT_EQ(tree_under_failures(f), "") << "blocks of " << from << " bytes failing";
  }
}

// Any single allocation of kLarge bytes or more failing, anywhere in laying out a model that has
// hf/ (every hf/ model of the corpus, and the pair vocabulary), gives a model without that view
// or an exception the caller turns into an error folder: nothing allocates in a noexcept
// destructor or lets an exception out of a thread.
TEST(NeverAbort, EachLargeAllocationOfALayoutFailingOnce) {
  auto models = corpus::hf_models();
  models.push_back({"pairs", corpus::pair_vocabulary_llama(200)});
  for (const auto& m : models) {
    SCOPED_TRACE(m.name);
    const GgufFile f = parse_gguf(MemorySource(m.bytes), m.name);
    largest_allocation([&] { Tree t(f); });
    const std::size_t total = g_large_allocations;
    ASSERT_GT(total, 0u);
    for (std::size_t k = 1; k <= total; ++k) {
      g_allocations = 0;
      g_large_allocations = 0;
      g_fail_at = k;
      const std::string broke = tree_under_failures(f);
      if (!broke.empty()) {
        ADD_FAILURE() << "allocation " << k << " of " << total << " failing: " << broke;
        break;
      }
    }
  }
}

// --- regressions: inputs that once failed a check of the fuzz harness ------------------------

// Each input, built in code, with what it broke and how it was fixed.
std::vector<std::pair<std::string, Bytes>> regression_inputs() {
  std::vector<std::pair<std::string, Bytes>> out;
  // A key longer than NAME_MAX: its file could not be looked up (and over 1024 bytes the kernel
  // refused the whole metadata/ listing). Fixed by key_file_name().
  out.emplace_back("key of 300 bytes", with(header(0, 1), [](ByteWriter& w) {
                     w.str(std::string(300, 'k'));
                     w.u32(0);
                     w.u8(1);
                   }));
  out.emplace_back("key escaping to 3000 bytes", with(header(0, 1), [](ByteWriter& w) {
                     w.str(std::string(1000, '\x01'));
                     w.u32(0);
                     w.u8(1);
                   }));
  // A big-endian file (gguf-py's endianess=BIG: every header integer and the tensor data
  // byte-swapped) holding one scalar F32 tensor whose name is empty, as a 7-minute run of
  // ggufs_fuzz_tree found it. f32/ holds float32 little-endian, so the README's byte swap of
  // big-endian F32 tensors gives 00 00 c0 3f for 1.5f stored as 3f c0 00 00; the harness compared
  // it with the stored bytes. Fixed in the harness.
  out.emplace_back("big-endian F32 scalar named ''", [] {
    ByteWriter w(/*big_endian=*/true, /*version=*/3);
    w.bytes(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>("GGUF"), 4));
    w.u32(3);
    w.u64(1);  // tensors
    w.u64(1);  // key/values
    w.str("general.architecture");
    w.u32(8);  // string
    w.str("llama");
    w.str("");
    w.u32(0);  // no dimensions: one element
    w.u32(GGML_TYPE_F32);
    w.u64(0);
    w.pad_to(32);
    w.f32(1.5f);
    return w.data();
  }());
  // general.alignment 2^31 and no tensors (57 bytes, found by scripts/fuzz's -malloc_limit_mb):
  // data_offset 2^31, and gguf.json reserved twice the data offset, 1 GiB. Fixed by reserving
  // for the header bytes the file holds.
  out.emplace_back("general.alignment 2^31", with(header(0, 1), [](ByteWriter& w) {
                     w.str("general.alignment");
                     w.u32(4);  // uint32
                     w.u32(std::uint32_t{1} << 31);
                   }));
  return out;
}

TEST(FuzzRegressions, PastFailuresStayFixed) {
  for (const auto& input : regression_inputs()) {
    // (Not a structured binding: clang 14, the sanitizer build's, captures none in a lambda.)
    const std::string& name = input.first;
    const Bytes& bytes = input.second;
    EXPECT_EQ(fuzz::check_parse(bytes), "") << name;
    std::string tree;
    EXPECT_LT(largest_allocation([&] { tree = fuzz::check_tree(bytes); }), kAllocationBound)
        << name;
    EXPECT_EQ(tree, "") << name;
  }
}

// Inputs the fuzz targets found, saved as files (tests/corpus/regressions/<target>/): each
// replayed through check_parse, check_hf and check_tree.
std::vector<std::pair<std::string, Bytes>> regression_files(const std::string& folder) {
  std::vector<std::pair<std::string, Bytes>> out;
  const std::filesystem::path dir = std::filesystem::path(GGUFS_CORPUS_REGRESSIONS) / folder;
  if (!std::filesystem::is_directory(dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string file = e.path().filename().string();
    if (!e.is_regular_file() || file.starts_with(".") || file.ends_with(".md")) continue;
    std::ifstream in(e.path(), std::ios::binary);
    out.emplace_back(e.path().filename().string(),
                     Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

void replay(const std::vector<std::pair<std::string, Bytes>>& inputs) {
  for (const auto& [name, bytes] : inputs) {
    EXPECT_EQ(fuzz::check_parse(bytes), "") << name;
    EXPECT_EQ(fuzz::check_hf(bytes), "") << name;
    EXPECT_EQ(fuzz::check_tree(bytes), "") << name;
  }
}

// Inputs of ggufs_fuzz_hf (tests/corpus/regressions/hf/README.md says what each once broke).
TEST(FuzzRegressions, HfInputsStayFixed) {
  const auto inputs = regression_files("hf");
  EXPECT_GE(inputs.size(), 3u);
  replay(inputs);
}

TEST(FuzzRegressions, ManifestsThatOnceFailedStayFixed) {
  // Issue 23: a model layer whose digest is 100 000 nested arrays overflowed the stack (copying
  // and printing JSON recurse per level). Fixed by the depth limit of parse_untrusted_json.
  const std::string deep = R"({"layers":[{"mediaType":"application/vnd.ollama.image.model",)"
                           R"("digest":)" +
                           std::string(100000, '[') + std::string(100000, ']') + "}]}";
  EXPECT_EQ(fuzz::check_ollama_manifest(Bytes(deep.begin(), deep.end())), "");
  // A syntax error in a long string holding "'; expected ", the words nlohmann-json may put
  // after the token it quotes: the token was cut only up to there, and the message held the
  // rest of the string (found by the first run of ggufs_fuzz_ollama_manifest). Fixed in
  // parse_untrusted_json, which now cuts all that follows "last read: '".
  const std::string words =
      R"({"layers":[{"digest":"sha256:'; expected )" + std::string(2000, 'b') + "\xff\"}]}";
  EXPECT_EQ(fuzz::check_ollama_manifest(Bytes(words.begin(), words.end())), "");
  // A syntax error quoting "levels deep" from the manifest: the harness took it for a refusal of
  // the nesting (found by the second run). Fixed in the harness, which now tells refusals apart
  // by the words they start with.
  const std::string quoted = R"({"laylevels deep)";
  EXPECT_EQ(fuzz::check_ollama_manifest(Bytes(quoted.begin(), quoted.end())), "");
  // A number beyond the range of a double: nlohmann-json raised out_of_range, not a parse error,
  // which escaped as an exception no caller expects, its message quoting the whole number (found
  // by the third run). Fixed in parse_untrusted_json.
  const std::string number = R"({"layers":[],"size":)" + std::string(400, '1') + "e11111}";
  EXPECT_EQ(fuzz::check_ollama_manifest(Bytes(number.begin(), number.end())), "");
}

TEST(FuzzRegressions, LibraryNamesThatOnceFailedStayFixed) {
  // Two models of one name whose folder name is 244 to 255 bytes (escapes included): the name
  // was not cut (key_file_name cuts only above NAME_MAX), so the second one's "~2" made a name
  // of 256 bytes or more, which no lookup can reach (found by the first run of
  // ggufs_fuzz_library_names, with %00 escapes). Reachable: an Ollama store holding
  // manifests/…/a:b/c and …/a/b:c (both "a:b:c"), or two sub-folders of a folder library.
  for (const std::size_t length : {244, 250, 254, 255}) {
    const std::string name(length, 'n');
    const std::string lines = name + "\n" + name;
    EXPECT_EQ(fuzz::check_library_names(Bytes(lines.begin(), lines.end())), "") << length;
  }
  std::string ten;  // ten clashes: "~10" needs three bytes
  for (int i = 0; i < 10; ++i) ten += std::string(253, 'n') + "\n";
  EXPECT_EQ(fuzz::check_library_names(Bytes(ten.begin(), ten.end())), "");
}

}  // namespace
}  // namespace ggufs
