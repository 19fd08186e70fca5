// mlx/'s expert stacks (src/tree/mlx_folder.h, mlx_weights): hf/'s per-expert weights of one
// GGUF stack become the one stacked weight mlx-lm's sanitize would make of them
// (mlx_lm/models/qwen3_moe.py: model.layers.N.mlp.experts.E.gate_proj.weight for E in 0 …
// num_experts−1, stacked into model.layers.N.mlp.switch_mlp.gate_proj.weight, [E, out, in]); a
// stack not whole keeps hf/'s names, for mlx-lm to stack.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "ggufs/gguf.h"
#include "ggufs/hf_weights.h"
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

std::vector<std::string> names(const MlxWeights& m) {
  std::vector<std::string> out;
  for (const HfWeight& w : m.weights) out.push_back(w.hf_name);
  return out;
}

TEST(MlxWeights, AWholeExpertStackIsOneWeightUnderMlxLmsName) {
  const Layer l = layer();
  const MlxWeights m = mlx_weights(l.file, l.weights, kStacks);
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
  EXPECT_EQ(names(mlx_weights(l.file, l.weights, kStacks)), names({l.weights, {}}));
  l.weights = all;
  std::swap(l.weights[0], l.weights[1]);
  EXPECT_EQ(names(mlx_weights(l.file, l.weights, kStacks)), names({l.weights, {}}));
  EXPECT_EQ(mlx_weights(l.file, l.weights, kStacks).stacked, std::vector<bool>(4, false));
}

}  // namespace
}  // namespace ggufs
