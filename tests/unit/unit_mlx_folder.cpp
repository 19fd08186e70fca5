// mlx/'s expert stacks (src/tree/mlx_folder.h, mlx_weights): hf/'s per-expert weights of one
// GGUF stack become the one stacked weight mlx-lm's sanitize would make of them
// (mlx_lm/models/qwen3_moe.py: model.layers.N.mlp.experts.E.gate_proj.weight for E in 0 …
// num_experts−1, stacked into model.layers.N.mlp.switch_mlp.gate_proj.weight, [E, out, in]); a
// stack not whole keeps hf/'s names, for mlx-lm to stack.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ggufs
