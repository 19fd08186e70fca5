// mlx/'s expert stacks (src/tree/mlx_folder.h, mlx_weights): hf/'s per-expert weights of one
// GGUF stack become the one stacked weight mlx-lm's sanitize would make of them
// (mlx_lm/models/qwen3_moe.py: model.layers.N.mlp.experts.E.gate_proj.weight for E in 0 …
// num_experts−1, stacked into model.layers.N.mlp.switch_mlp.gate_proj.weight, [E, out, in]); a
// stack not whole keeps hf/'s names, for mlx-lm to stack.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ggufs/byte_source.h"
#include "ggufs/content.h"
#include "ggufs/error.h"
#include "ggufs/ggml_type.h"
#include "ggufs/gguf.h"
#include "ggufs/gguf_writer.h"
#include "ggufs/hf_weights.h"
#include "ggufs/mlx_blocks.h"
#include "ggufs/tree.h"
#include "metadata_builder.h"
#include "mlx_folder.h"

namespace ggufs {
namespace {

using test::add_tensor;

constexpr std::pair<std::string_view, std::string_view> kStacks[] = {
    {"mlp.experts.{}.gate_proj.weight", "mlp.switch_mlp.gate_proj.weight"}};

// A qwen3moe-like layer 0: the gate stack of 3 experts of [4, 8] (numpy order [3, 4, 8]) and a
// norm; hf/'s weights for them, expert by expert (hf_weights.cpp's kSelect).
struct Layer {
  GgufFile file;
  std::vector<HfWeight> weights;
};

Layer layer() {
  Layer l;
  add_tensor(l.file, "blk.0.ffn_gate_exps.weight", {3, 4, 8});
  add_tensor(l.file, "blk.0.ffn_norm.weight", {8});
  for (std::uint64_t e = 0; e < 3; ++e) {
    HfWeight w;
    w.hf_name = "model.layers.0.mlp.experts." + std::to_string(e) + ".gate_proj.weight";
    w.shape = {4, 8};
    w.source = 0;
    w.transform = HfTransform::kSelect;
    w.index = e;
    l.weights.push_back(w);
  }
  HfWeight norm;
  norm.hf_name = "model.layers.0.post_attention_layernorm.weight";
  norm.shape = {8};
  norm.source = 1;
  l.weights.push_back(norm);
  return l;
}

// A file of tensor `t`'s pieces alone (mlx_tensors lays them out from byte 0).
Node node_of(const SafetensorsTensor& t) {
  Node n;
  n.kind = NodeKind::kComposite;
  n.pieces = t.pieces;
  n.size = n.pieces.back().at + n.pieces.back().size;
  return n;
}

std::vector<std::string> names(const MlxWeights& m) {
  std::vector<std::string> out;
  for (const HfWeight& w : m.weights) out.push_back(w.hf_name);
  return out;
}

TEST(MlxWeights, AWholeExpertStackIsOneWeightUnderMlxLmsName) {
  const Layer l = layer();
  const MlxWeights m = mlx_weights(l.file, l.weights, {kStacks, {}});
  EXPECT_EQ(names(m), (std::vector<std::string>{"model.layers.0.mlp.switch_mlp.gate_proj.weight",
                                                "model.layers.0.post_attention_layernorm.weight"}));
  EXPECT_EQ(m.stacked, (std::vector<bool>{true, false}));
  EXPECT_EQ(m.weights[0].shape, (std::vector<std::uint64_t>{3, 4, 8}));
  EXPECT_EQ(m.weights[0].transform, HfTransform::kNone);
  EXPECT_EQ(m.weights[0].source, 0u);
  // Without the row's stacks: hf/'s names.
  EXPECT_EQ(names(mlx_weights(l.file, l.weights, {})), names({l.weights, {}}));
}

TEST(MlxWeights, AStackNotWholeOrOutOfOrderKeepsHfsNames) {
  Layer l = layer();
  const std::vector<HfWeight> all = l.weights;
  l.weights.erase(l.weights.begin() + 1);  // expert 1
  EXPECT_EQ(names(mlx_weights(l.file, l.weights, {kStacks, {}})), names({l.weights, {}}));
  l.weights = all;
  std::swap(l.weights[0], l.weights[1]);
  EXPECT_EQ(names(mlx_weights(l.file, l.weights, {kStacks, {}})), names({l.weights, {}}));
  EXPECT_EQ(mlx_weights(l.file, l.weights, {kStacks, {}}).stacked, std::vector<bool>(4, false));
}

// gpt-oss (mlx_lm/models/gpt_oss.py, sanitize): mlx-lm takes the experts as gate_proj and
// up_proj [E, F, H] and down_proj [E, H, F], each with its bias [E, F] or [E, H], which are the
// converter's ffn_{gate,up,down}_exps stacks as stored; hf/'s gate_up_proj fuses the first two.
TEST(MlxWeights, GptOssExpertsAsTheirGgufStacks) {
  GgufFile f;
  add_tensor(f, "blk.0.ffn_gate_exps.weight", {4, 32, 64});
  add_tensor(f, "blk.0.ffn_up_exps.weight", {4, 32, 64});
  add_tensor(f, "blk.0.ffn_gate_exps.bias", {4, 32});
  add_tensor(f, "blk.0.ffn_up_exps.bias", {4, 32});
  HfWeight gate_up;
  gate_up.hf_name = "model.layers.0.mlp.experts.gate_up_proj";
  gate_up.shape = {4, 64, 64};
  gate_up.source = 0;
  gate_up.transform = HfTransform::kInterleaveTransposed;
  gate_up.parts = {1};
  HfWeight bias = gate_up;
  bias.hf_name = "model.layers.0.mlp.experts.gate_up_proj_bias";
  bias.shape = {4, 64};
  bias.source = 2;
  bias.parts = {3};
  constexpr MlxUnfused kGptOss[] = {
      {"mlp.experts.gate_up_proj", {"mlp.experts.gate_proj.weight", "mlp.experts.up_proj.weight"}},
      {"mlp.experts.gate_up_proj_bias",
       {"mlp.experts.gate_proj.bias", "mlp.experts.up_proj.bias"}}};
  const MlxWeights m = mlx_weights(f, {gate_up, bias}, {{}, kGptOss});
  EXPECT_EQ(names(m), (std::vector<std::string>{"model.layers.0.mlp.experts.gate_proj.weight",
                                                "model.layers.0.mlp.experts.up_proj.weight",
                                                "model.layers.0.mlp.experts.gate_proj.bias",
                                                "model.layers.0.mlp.experts.up_proj.bias"}));
  EXPECT_EQ(m.stacked, (std::vector<bool>{true, true, false, false}));
  const std::vector<std::vector<std::uint64_t>> shapes = {
      {4, 32, 64}, {4, 32, 64}, {4, 32}, {4, 32}};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(m.weights[i].shape, shapes[i]) << i;
    EXPECT_EQ(m.weights[i].source, i) << i;
    EXPECT_EQ(m.weights[i].transform, HfTransform::kNone) << i;
  }
}

// An MXFP4 stack in mlx-lm's "mxfp4" form: a block whose E8M0 exponent byte is 255 (NaN in the
// OCP MX format; ggml reads 2^127, MLX infinity) has no MLX form, found only when read: that read
// fails, naming the tensor and the row, and the rows before it read.
TEST(MlxWeights, AnMxfp4BlockOfExponent255FailsItsRead) {
  // ggml's block_mxfp4 (ggml-common.h): the exponent byte e, then 16 bytes of FP4 codes.
  std::vector<std::uint8_t> blocks(2 * 17, 0x11);
  blocks[0] = 127;
  blocks[17] = 255;  // row 1
  GgufWriter g;
  g.add_string("general.architecture", "llama");
  g.add_tensor("blk.0.ffn_gate_exps.weight", GGML_TYPE_MXFP4, {32, 2, 1}, blocks);
  const MemorySource src(g.finish());
  const GgufFile f = parse_gguf(src, "m.gguf");
  HfWeight w;
  w.hf_name = "model.layers.0.mlp.experts.gate_proj.weight";
  w.shape = {1, 2, 32};
  std::vector<SafetensorsTensor> out;
  ASSERT_NE(mlx_tensors(f, w, /*stack=*/true, /*requantize=*/0, out), nullptr);
  ASSERT_EQ(out.size(), 2u);  // .weight and .scales: no biases
  EXPECT_EQ(out[1].key, "model.layers.0.mlp.experts.gate_proj.scales");
  EXPECT_EQ(out[1].dtype, "U8");
  const Node n = node_of(out[1]);
  ASSERT_EQ(n.size, 2u);
  const ContentReader reader(f, src);
  char byte = 0;
  EXPECT_EQ(reader.read(n, &byte, 1, 0), 1u);
  EXPECT_EQ(static_cast<std::uint8_t>(byte), 127);
  try {
    reader.read(n, &byte, 1, 1);
    ADD_FAILURE() << "row 1 was served";
  } catch (const UnrepresentableError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'blk.0.ffn_gate_exps.weight': row 1"),
              std::string::npos)
        << e.what();
  }
}

// -o mlx_requantize: a matrix of a type without an MLX form (IQ4_NL) becomes MLX's own 8-bit
// form, group 32, quantized from its float32 values on read; a row holding infinity (a block
// scale d of +inf) fails its read, naming the tensor and the row, and the rows before it read.
// Without the option, and for a tensor the file stores as float, the matrix stays float.
TEST(MlxWeights, RequantizedRowsAndARowOfInfinityFailsItsRead) {
  // ggml's block_iq4_nl (ggml-common.h): d (binary16), then 16 bytes of 4-bit grid indices;
  // index 0 is kvalues_iq4nl[0] = -127, so each value of row 0 is -127·d = -127.
  std::vector<std::uint8_t> blocks(2 * 18, 0);
  blocks[1] = 0x3C;   // row 0: d = 1
  blocks[19] = 0x7C;  // row 1: d = +inf
  GgufWriter g;
  g.add_string("general.architecture", "llama");
  g.add_tensor("blk.0.attn_v.weight", GGML_TYPE_IQ4_NL, {32, 2}, blocks);
  g.add_tensor("blk.0.attn_k.weight", GGML_TYPE_F16, {32, 2}, std::vector<std::uint8_t>(128));
  const MemorySource src(g.finish());
  const GgufFile f = parse_gguf(src, "m.gguf");
  HfWeight w;
  w.hf_name = "model.layers.0.self_attn.v_proj.weight";
  w.shape = {2, 32};
  std::vector<SafetensorsTensor> out;
  EXPECT_EQ(mlx_tensors(f, w, /*stack=*/false, /*requantize=*/0, out), nullptr);
  HfWeight k = w;
  k.hf_name = "model.layers.0.self_attn.k_proj.weight";
  k.source = 1;
  EXPECT_EQ(mlx_tensors(f, k, /*stack=*/false, /*requantize=*/8, out), nullptr);
  EXPECT_TRUE(out.empty());
  const MlxBlockForm* form = mlx_tensors(f, w, /*stack=*/false, /*requantize=*/8, out);
  ASSERT_EQ(form, mlx_requantized_form(8));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].dtype, "U32");
  EXPECT_EQ(out[0].shape, (std::vector<std::uint64_t>{2, 8}));
  EXPECT_EQ(out[2].key, "model.layers.0.self_attn.v_proj.biases");
  const Node n = node_of(out[2]);
  ASSERT_EQ(n.size, 8u);
  const ContentReader reader(f, src);
  float bias = 0;
  EXPECT_EQ(reader.read(n, reinterpret_cast<char*>(&bias), 4, 0), 4u);
  EXPECT_EQ(bias, -127.0f);  // MLX's bias of a constant group: its value (quantize's edge)
  try {
    reader.read(n, reinterpret_cast<char*>(&bias), 4, 4);
    ADD_FAILURE() << "row 1 was served";
  } catch (const UnrepresentableError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'blk.0.attn_v.weight': row 1 holds NaN or "
                                         "infinity"),
              std::string::npos)
        << e.what();
  }
}

// A source that counts what is read from it: the bytes and the largest single read.
class CountingSource final : public ByteSource {
 public:
  explicit CountingSource(const ByteSource& inner) : inner_(inner) {}
  std::uint64_t size() const override { return inner_.size(); }
  std::size_t read_at(std::uint64_t offset, void* dst, std::size_t n) const override {
    bytes += n;
    largest = std::max(largest, n);
    return inner_.read_at(offset, dst, n);
  }
  mutable std::uint64_t bytes = 0;
  mutable std::size_t largest = 0;

 private:
  const ByteSource& inner_;
};

// A Q8_0 matrix of 4 rows of `ne0` elements and mlx/'s tensors of it (q/k-permuted where
// `permuted`, one head: GGUF rows 0, 2, 1, 3). ggml's block_q8_0 (ggml-common.h): d (binary16),
// then 32 int8 quants. Block b of row r holds d = 1 and quants (r·7 + b·3 + j) mod 256, so MLX's
// form is known without an encoder: scale d, bias −128d, each word the four quants' bytes with the
// top bit flipped.
struct Q8Matrix {
  std::uint64_t ne0;
  MemorySource src;
  GgufFile file;
  std::vector<SafetensorsTensor> out;
};

std::uint8_t q8_quant(std::uint64_t row, std::uint64_t block, std::uint64_t j) {
  return static_cast<std::uint8_t>(row * 7 + block * 3 + j);
}

std::unique_ptr<Q8Matrix> q8_matrix(std::uint64_t ne0, bool permuted) {
  std::vector<std::uint8_t> blocks;
  blocks.reserve(4 * ne0 / 32 * 34);
  for (std::uint64_t r = 0; r < 4; ++r) {
    for (std::uint64_t b = 0; b < ne0 / 32; ++b) {
      blocks.push_back(0x00);  // d = 1.0
      blocks.push_back(0x3c);
      for (std::uint64_t j = 0; j < 32; ++j) blocks.push_back(q8_quant(r, b, j));
    }
  }
  GgufWriter g;
  g.add_string("general.architecture", "llama");
  g.add_tensor("blk.0.ffn_down.weight", GGML_TYPE_Q8_0, {ne0, 4}, blocks);
  auto m = std::unique_ptr<Q8Matrix>(new Q8Matrix{ne0, MemorySource(g.finish()), {}, {}});
  m->file = parse_gguf(m->src, "m.gguf");
  HfWeight w;
  w.hf_name = "model.layers.0.mlp.down_proj.weight";
  w.shape = {4, ne0};
  if (permuted) {
    w.transform = HfTransform::kReversePermute;
    w.n_head = 1;
  }
  EXPECT_EQ(mlx_tensors(m->file, w, /*stack=*/false, /*requantize=*/0, m->out),
            mlx_block_form(GGML_TYPE_Q8_0));
  return m;
}

// mlx/ reads cost what they read (issue #60): a read of a few bytes of a row encodes the blocks
// it covers, not the row, so the bytes read from the file and the largest single read are the
// same for rows of 2^12 and 2^20 elements (the 2^20 row was once read and encoded whole: 1.1 MB
// of blocks for 2 KiB of weight). The bytes served are MLX's form of those blocks, from the
// block layout alone, whichever part of which row the read starts in.
TEST(MlxReads, AReadEncodesOnlyTheBlocksItCovers) {
  for (const bool permuted : {false, true}) {
    std::vector<std::uint64_t> read_bytes;
    for (const std::uint64_t ne0 : {std::uint64_t{1} << 12, std::uint64_t{1} << 20}) {
      SCOPED_TRACE(::testing::Message() << "ne0 " << ne0 << (permuted ? ", permuted" : ""));
      const auto m = q8_matrix(ne0, permuted);
      ASSERT_EQ(m->out.size(), 3u);
      const Node weight = node_of(m->out[0]), biases = node_of(m->out[2]);
      ASSERT_EQ(weight.size, 4 * ne0);  // 8 bits an element
      ASSERT_EQ(biases.size, 4 * ne0 / 32 * 4);
      const CountingSource counting(m->src);
      const ContentReader reader(m->file, counting);
      // 2 KiB of the weight from a quarter into output row 1, unaligned to a block (the 1 of
      // offset), which is GGUF row 2 where permuted (hf_permuted_row).
      const std::uint64_t at = ne0 + ne0 / 4 + 1, gguf_row = permuted ? 2 : 1;
      std::vector<std::uint8_t> bytes(2048);
      ASSERT_EQ(reader.read(weight, reinterpret_cast<char*>(bytes.data()), bytes.size(), at),
                bytes.size());
      for (std::uint64_t i = 0; i < bytes.size(); ++i) {
        const std::uint64_t e = at - ne0 + i;  // element of the row (a byte of its 8-bit stream)
        ASSERT_EQ(bytes[i], q8_quant(gguf_row, e / 32, e % 32) ^ 0x80) << i;
      }
      // 2048 elements from the second of a block touch 65 blocks of 34 bytes.
      EXPECT_EQ(counting.bytes, 65u * 34);
      const std::uint64_t after_weight = counting.bytes;
      // Two biases across the boundary of output rows 0 and 1.
      float two[2] = {};
      const std::uint64_t last = ne0 / 32 * 4 - 4;
      ASSERT_EQ(reader.read(biases, reinterpret_cast<char*>(two), 8, last), 8u);
      EXPECT_EQ(two[0], -128.0f);
      EXPECT_EQ(two[1], -128.0f);
      EXPECT_EQ(counting.bytes - after_weight, 2u * 34) << "one block of each row";
      EXPECT_LE(counting.largest, 256u * 1024) << "a step's blocks at most";
      read_bytes.push_back(counting.bytes);
    }
    EXPECT_EQ(read_bytes[0], read_bytes[1]) << "the same work at both row lengths";
  }
}

// mlx/'s tensors of `name`, one 2-row matrix of ggml type `type` (`blocks` as stored) under hf/'s
// `hf_name`, laid out with -o mlx_requantize=`requantize`: each part (weight, scales, biases)
// reads row 0, and fails row 1 with an UnrepresentableError whose message holds `why`.
void expect_row_1_unrepresentable(GgmlType type, std::vector<std::uint8_t> blocks,
                                  const std::string& name, const std::string& hf_name,
                                  std::uint32_t requantize, const std::string& why) {
  GgufWriter g;
  g.add_string("general.architecture", "llama");
  g.add_tensor(name, type, {32, 2}, std::move(blocks));
  const MemorySource src(g.finish());
  const GgufFile f = parse_gguf(src, "m.gguf");
  HfWeight w;
  w.hf_name = hf_name;
  w.shape = {2, 32};
  std::vector<SafetensorsTensor> out;
  ASSERT_EQ(mlx_tensors(f, w, /*stack=*/false, requantize, out),
            requantize ? mlx_requantized_form(requantize) : mlx_block_form(type));
  ASSERT_EQ(out.size(), 3u);
  const ContentReader reader(f, src);
  for (const SafetensorsTensor& t : out) {
    SCOPED_TRACE(t.key);
    const Node n = node_of(t);
    const std::uint64_t row = n.size / 2;
    std::vector<char> bytes(row);
    EXPECT_EQ(reader.read(n, bytes.data(), row, 0), row);
    try {
      reader.read(n, bytes.data(), row, row);
      ADD_FAILURE() << "row 1 was served";
    } catch (const UnrepresentableError& e) {
      EXPECT_NE(std::string(e.what()).find("tensor '" + name + "': row 1 " + why),
                std::string::npos)
          << e.what();
    }
  }
}

// An exact form that is not exact for one block: a Q4_0 block of d = +inf (ggml's (q − 8)·inf is
// ±inf, or NaN at q = 8; MLX's inf·q + (−8·inf) NaN for every q) fails the reads of its row
// (weight, scales and biases), naming the tensor and the row; the other row is served.
TEST(MlxReads, AnInfiniteBlockScaleFailsItsRowsReads) {
  // ggml's block_q4_0 (ggml-common.h): d (binary16), then 16 bytes of 4-bit quants.
  std::vector<std::uint8_t> blocks(2 * 18, 0x98);
  blocks[0] = 0x00;  // row 0: d = 1
  blocks[1] = 0x3c;
  blocks[18] = 0x00;  // row 1: d = +inf
  blocks[19] = 0x7c;
  expect_row_1_unrepresentable(GGML_TYPE_Q4_0, std::move(blocks), "blk.0.attn_v.weight",
                               "model.layers.0.self_attn.v_proj.weight", 0, "has a block scale");
}

// -o mlx_requantize of finite values whose range overflows float32: an MXFP4 matrix outside an
// expert stack (requantized) whose row 1 has exponent byte 252 and codes ±6 (±6·2^125 =
// ±2.55e38, finite; hf/ serves them). MLX's quantize would give scale −inf and every weight NaN;
// the row's reads fail instead, and row 0 (exponent 127) is served.
TEST(MlxReads, ARequantizedGroupWhoseRangeOverflowsFailsItsRead) {
  // ggml's block_mxfp4 (ggml-common.h): the E8M0 exponent e, then 16 bytes of E2M1 codes
  // (code 7 is +6, 15 is −6: kvalues_mxfp4).
  std::vector<std::uint8_t> blocks(2 * 17, 0xf7);
  blocks[0] = 127;
  blocks[17] = 252;
  expect_row_1_unrepresentable(GGML_TYPE_MXFP4, std::move(blocks), "blk.0.attn_q.weight",
                               "model.layers.0.self_attn.q_proj.weight", 8,
                               "holds NaN or infinity, or a group whose range");
}

}  // namespace
}  // namespace ggufs
