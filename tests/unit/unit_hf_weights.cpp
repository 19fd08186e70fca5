// Unit tests of hf_weight_map (src/hf/hf_weights.cpp): the reverse permutation's row mapping
// written out by hand from transformers' formula, and hostile shapes, heads and counts (no map,
// a one-line reason; never an exception). Names, shapes and values are checked against
// transformers itself in tests/python/test_hf_weights.py.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "ggufs/gguf.h"
#include "ggufs/hf_weights.h"
#include "metadata_builder.h"

namespace ggufs {
namespace {

using namespace ggufs::test;  // metadata_builder.h

// Layer n's attention of the tiny llama below (q, k, v, o).
void add_llama_attention(GgufFile& f, int n) {
  add_tensor(f, fmt::format("blk.{}.attn_q.weight", n), {16, 16});
  add_tensor(f, fmt::format("blk.{}.attn_k.weight", n), {8, 16});
  add_tensor(f, fmt::format("blk.{}.attn_v.weight", n), {8, 16});
  add_tensor(f, fmt::format("blk.{}.attn_output.weight", n), {16, 16});
}

// Layer n's MLP of width 40 (gate, up, down) and its two norms: with add_llama_attention, every
// parameter LlamaDecoderLayer builds (modeling_llama.py: LlamaAttention, LlamaMLP and
// input_layernorm, post_attention_layernorm).
void add_llama_mlp_norms(GgufFile& f, int n) {
  add_tensor(f, fmt::format("blk.{}.ffn_gate.weight", n), {40, 16});
  add_tensor(f, fmt::format("blk.{}.ffn_up.weight", n), {40, 16});
  add_tensor(f, fmt::format("blk.{}.ffn_down.weight", n), {16, 40});
  add_tensor(f, fmt::format("blk.{}.attn_norm.weight", n), {16});
  add_tensor(f, fmt::format("blk.{}.ffn_norm.weight", n), {16});
}

void add_llama_layer(GgufFile& f, int n) {
  add_llama_attention(f, n);
  add_llama_mlp_norms(f, n);
}

// A one-layer llama as llama.cpp's converter writes it: hidden 16, 4 heads of 4, 2 kv heads,
// feed-forward 40, tied embeddings.
GgufFile tiny_llama() {
  GgufFile f = tiny_decoder("llama", 1);
  add(f, "general.name", str("tiny"));
  add(f, "llama.vocab_size", u32(10));
  add_tensor(f, "token_embd.weight", {10, 16});
  add_llama_layer(f, 0);
  add_tensor(f, "output_norm.weight", {16});
  return f;
}

void erase_tensor(GgufFile& f, std::string_view name) {
  std::erase_if(f.tensors, [&](const TensorInfo& t) { return t.name == name; });
}

TensorInfo* tensor(GgufFile& f, const std::string& name) {
  for (TensorInfo& t : f.tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

GgufFile tiny_qwen3moe();

void expect_refused(const GgufFile& f, const std::string& needle) {
  const HfWeightsResult r = hf_weight_map(f);
  EXPECT_FALSE(r.weights.has_value()) << "mapped although " << needle << " is at fault";
  EXPECT_NE(r.reason.find(needle), std::string::npos) << "reason: " << r.reason;
  EXPECT_EQ(r.reason.find('\n'), std::string::npos) << "reason: " << r.reason;
}

// Expected rows derived by hand from transformers 4.57.6's
// LlamaTensorProcessor._reverse_permute_weights: w.reshape(n, d, 2, cols).swapaxes(2, 1)
// .reshape(rows, cols). GGUF row r = h·2d + 2i + j is element (h, i, j) of the (n, d, 2) view;
// after the swap, HF rows run over (h, j, i) in order. For rows 8, n 2 (d 2): h=0 gives
// (j=0: i=0,1 → GGUF rows 0, 2), (j=1: i=0,1 → rows 1, 3); h=1 gives 4, 6, 5, 7.
TEST(HfWeights, PermutationRowsByHand) {
  const std::vector<std::uint64_t> expected = {0, 2, 1, 3, 4, 6, 5, 7};
  for (std::uint64_t r = 0; r < 8; ++r) EXPECT_EQ(hf_permuted_row(r, 8, 2), expected[r]) << r;
}

// rows 12, n 1 (d 6): HF rows (j=0: i=0..5 → GGUF 0, 2, 4, 6, 8, 10), (j=1: → 1, 3, 5, 7, 9, 11):
// the even rows, then the odd ones.
TEST(HfWeights, PermutationOneHeadByHand) {
  const std::vector<std::uint64_t> expected = {0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11};
  for (std::uint64_t r = 0; r < 12; ++r) EXPECT_EQ(hf_permuted_row(r, 12, 1), expected[r]) << r;
}

// rows 4, n 2 (d 1): each head's two rows are (i=0, j=0), (i=0, j=1): the identity.
TEST(HfWeights, PermutationHeadDimTwoIsIdentity) {
  for (std::uint64_t r = 0; r < 4; ++r) EXPECT_EQ(hf_permuted_row(r, 4, 2), r);
}

// qwen.py, _LinearAttentionVReorderBase (its docstring): HF keeps value heads grouped by key
// head, [G0_v0, G0_v1, G1_v0, G1_v1] for 2 key heads of 2 value heads each; the converter tiles
// them, [G0_v0, G1_v0, G0_v1, G1_v1]. So HF heads 0, 1, 2, 3 are GGUF heads 0, 2, 1, 3; with 3
// value heads a key head, [G0_v0, G1_v0, G0_v1, G1_v1, G0_v2, G1_v2]: HF heads 0..5 are GGUF
// heads 0, 2, 4, 1, 3, 5.
TEST(HfWeights, UntiledValueHeadsByHand) {
  const std::vector<std::uint64_t> two = {0, 2, 1, 3}, three = {0, 2, 4, 1, 3, 5};
  for (std::uint64_t h = 0; h < 4; ++h) EXPECT_EQ(hf_untiled_head(h, 2, 4), two[h]) << h;
  for (std::uint64_t h = 0; h < 6; ++h) EXPECT_EQ(hf_untiled_head(h, 2, 6), three[h]) << h;
  for (std::uint64_t h = 0; h < 5; ++h) EXPECT_EQ(hf_untiled_head(h, 5, 5), h) << h;
}

// A two-layer qwen35: layer 0's gated delta net (inner 24 of 2 key heads of state 8,
// `value_heads` value heads, kernel 4), layer 1's gated attention (q_proj holds the output gate
// too: 2 · 4 heads of 4), the MLP and norms Qwen3_5DecoderLayer builds in every layer.
GgufFile tiny_qwen35(std::uint64_t value_heads) {
  GgufFile f = tiny_decoder("qwen35", 2);
  add(f, "qwen35.ssm.conv_kernel", u32(4));
  add(f, "qwen35.ssm.inner_size", u32(24));
  add(f, "qwen35.ssm.state_size", u32(8));
  add(f, "qwen35.ssm.time_step_rank", u32(value_heads));
  add(f, "qwen35.ssm.group_count", u32(2));
  add(f, "qwen35.attention.key_length", u32(4));
  add(f, "qwen35.attention.value_length", u32(4));
  // Layer 0 linear attention, layer 1 full (qwen.py writes the recurrent layers so).
  add(f, "qwen35.attention.recurrent_layers", arr(ValueType::kUint32, {u32(1), u32(0)}));
  add(f, "tokenizer.ggml.tokens", arr(ValueType::kString, {str("a"), str("b"), str("c")}));
  add_tensor(f, "token_embd.weight", {3, 16});
  const std::uint64_t heads = value_heads ? value_heads : 1;
  add_tensor(f, "blk.0.ssm_dt.bias", {heads});
  add_tensor(f, "blk.0.ssm_a", {heads});
  add_tensor(f, "blk.0.ssm_conv1d.weight", {56, 4});
  add_tensor(f, "blk.0.ssm_norm.weight", {24 / heads});
  add_tensor(f, "blk.0.ssm_out.weight", {16, 24});
  add_tensor(f, "blk.0.attn_qkv.weight", {56, 16});
  add_tensor(f, "blk.0.attn_gate.weight", {24, 16});
  add_tensor(f, "blk.0.ssm_beta.weight", {heads, 16});
  add_tensor(f, "blk.0.ssm_alpha.weight", {heads, 16});
  add_tensor(f, "blk.1.attn_q.weight", {32, 16});
  add_tensor(f, "blk.1.attn_k.weight", {8, 16});
  add_tensor(f, "blk.1.attn_v.weight", {8, 16});
  add_tensor(f, "blk.1.attn_output.weight", {16, 16});
  add_tensor(f, "blk.1.attn_q_norm.weight", {4});
  add_tensor(f, "blk.1.attn_k_norm.weight", {4});
  for (const int n : {0, 1}) {
    add_tensor(f, fmt::format("blk.{}.ffn_gate.weight", n), {40, 16});
    add_tensor(f, fmt::format("blk.{}.ffn_up.weight", n), {40, 16});
    add_tensor(f, fmt::format("blk.{}.ffn_down.weight", n), {16, 40});
    add_tensor(f, fmt::format("blk.{}.attn_norm.weight", n), {16});
    add_tensor(f, fmt::format("blk.{}.post_attention_norm.weight", n), {16});
  }
  return f;
}

// A qwen35 file whose linear attention's head counts are not whole value heads per key head
// (ssm.group_count 2 key heads; ssm.time_step_rank 0 or 3 value heads) gets no map and a
// reason: never a division by zero or a wrong regrouping.
TEST(HfWeights, Qwen35ValueHeadsNotWholePerKeyHeadRefused) {
  for (const std::uint64_t nv : {0u, 3u}) {
    // 0: the config's linear_value_head_dim (inner size / value heads) is refused first.
    expect_refused(tiny_qwen35(nv),
                   nv ? "not whole value heads per key head" : "linear_num_value_heads");
  }
}

TEST(HfWeights, TinyLlamaMaps) {
  const HfWeightsResult r = hf_weight_map(tiny_llama());
  ASSERT_TRUE(r.weights.has_value()) << r.reason;
  const std::vector<HfWeight>& w = *r.weights;
  ASSERT_EQ(w.size(), 11u);  // embeddings, 4 projections, 3 MLP matrices, 2 norms, final norm
  EXPECT_EQ(w[0].hf_name, "model.embed_tokens.weight");
  EXPECT_EQ(w[1].hf_name, "model.layers.0.self_attn.q_proj.weight");
  // q is permuted with the attention heads, k with the kv heads (hostile files below).
  EXPECT_EQ(w[1].transform, HfTransform::kReversePermute);
  EXPECT_EQ(w[1].n_head, 4u);
  EXPECT_EQ(w[2].hf_name, "model.layers.0.self_attn.k_proj.weight");
  EXPECT_EQ(w[2].transform, HfTransform::kReversePermute);
  EXPECT_EQ(w[2].n_head, 2u);
  EXPECT_EQ(w[2].shape, (std::vector<std::uint64_t>{8, 16}));
  EXPECT_EQ(w[3].transform, HfTransform::kNone);
  EXPECT_EQ(w[5].hf_name, "model.layers.0.mlp.gate_proj.weight");
  EXPECT_EQ(w[9].hf_name, "model.layers.0.post_attention_layernorm.weight");
  EXPECT_EQ(w[10].hf_name, "model.norm.weight");
}

// Layer n of a Gemma 3n of hidden 16, 4 heads of 4, 4 AltUp inputs, LAuReL rank 2, per-layer
// input 8 and MLP width `ff`: what Gemma3nTextDecoderLayer builds in every layer
// (modeling_gemma3n.py) but k_proj, v_proj and k_norm, which the KV-sharing layers lack under
// transformers 5.
void add_gemma3n_layer(GgufFile& f, int n, std::uint64_t ff) {
  auto t = [&](std::string_view name, std::vector<std::uint64_t> shape) {
    add_tensor(f, fmt::format("blk.{}.{}", n, name), shape);
  };
  t("attn_q.weight", {16, 16});
  t("attn_output.weight", {16, 16});
  t("attn_q_norm.weight", {4});
  t("ffn_gate.weight", {ff, 16});
  t("ffn_up.weight", {ff, 16});
  t("ffn_down.weight", {16, ff});
  for (const std::string_view norm :
       {"attn_norm.weight", "post_attention_norm.weight", "ffn_norm.weight", "post_ffw_norm.weight",
        "altup_router_norm.weight", "laurel_post_norm.weight", "post_norm.weight"}) {
    t(norm, {16});
  }
  t("altup_correct_coef.weight", {4, 4});
  t("altup_predict_coef.weight", {16, 4});
  t("altup_router.weight", {4, 16});
  t("laurel_l.weight", {2, 16});
  t("laurel_r.weight", {16, 2});
  t("inp_gate.weight", {8, 16});
  t("proj.weight", {16, 8});
}

// A Gemma 3n of two layers, its vocabulary padded as the converter pads it.
GgufFile tiny_gemma3n() {
  GgufFile f = tiny_decoder("gemma3n", 2);
  *find(f, "gemma3n.feed_forward_length") = arr(ValueType::kUint32, {u32(40), u32(24)});
  add(f, "gemma3n.altup.num_inputs", u32(4));
  add(f, "gemma3n.embedding_length_per_layer_input", u32(8));
  add(f, "tokenizer.ggml.tokens", arr(ValueType::kString, std::vector<Value>(262400, str("x"))));
  add_tensor(f, "per_layer_token_embd.weight", {262400, 16});
  add(f, "gemma3n.attention.key_length", u32(4));
  add_tensor(f, "altup_proj.weight", {3, 16, 16});
  for (const int n : {0, 1}) add_gemma3n_layer(f, n, n == 0 ? 40 : 24);
  // Layer 1 reuses layer 0's keys and values (num_kv_shared_layers 1).
  add(f, "gemma3n.attention.shared_kv_layers", u32(1));
  add_tensor(f, "blk.0.attn_k.weight", {8, 16});
  add_tensor(f, "blk.0.attn_v.weight", {8, 16});
  add_tensor(f, "blk.0.attn_k_norm.weight", {4});
  return f;
}

// Gemma 3n: the per-layer embeddings without the converter's zero padding (gemma.py,
// Gemma3NModel.modify_tensors pads Google's 262144 rows to vocab_size 262400), the stacked AltUp
// projections one per matrix (altup_num_inputs 4: three), an intermediate_size a layer.
TEST(HfWeights, Gemma3nPaddingStacksAndWidths) {
  GgufFile f = tiny_gemma3n();
  const HfWeightsResult r = hf_weight_map(f);
  ASSERT_TRUE(r.weights.has_value()) << r.reason;
  std::vector<std::string> names;
  for (const HfWeight& w : *r.weights) {
    if (w.hf_name.find("up_proj") != std::string::npos || !w.hf_name.starts_with("model.layers.")) {
      names.push_back(w.hf_name);
    }
    if (w.hf_name == "model.embed_tokens_per_layer.weight") {
      EXPECT_EQ(w.shape, (std::vector<std::uint64_t>{262144, 16}));
      EXPECT_EQ(w.transform, HfTransform::kFirstRows);
    }
    if (w.hf_name.starts_with("model.altup_projections.")) {
      EXPECT_EQ(w.transform, HfTransform::kSelect);
      EXPECT_EQ(w.hf_name, fmt::format("model.altup_projections.{}.weight", w.index));
      EXPECT_EQ(w.shape, (std::vector<std::uint64_t>{16, 16}));
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{
                       "model.layers.0.mlp.up_proj.weight", "model.layers.1.mlp.up_proj.weight",
                       "model.altup_projections.0.weight", "model.altup_projections.1.weight",
                       "model.altup_projections.2.weight", "model.embed_tokens_per_layer.weight"}));
  tensor(f, "blk.1.ffn_up.weight")->ne[1] = 40;  // layer 1's width is 24
  expect_refused(f, "blk.1.ffn_up.weight");
  tensor(f, "blk.1.ffn_up.weight")->ne[1] = 24;
  tensor(f, "altup_proj.weight")->ne[2] = 2;
  expect_refused(f, "is no stack of altup_num_inputs − 1 = 3 matrices");
}

TEST(HfWeights, NoConfigGivesItsReason) {
  GgufFile f = tiny_llama();
  f.kv.erase(f.kv.begin());  // general.architecture
  expect_refused(f, "general.architecture");
}

TEST(HfWeights, UnsupportedArchitectures) {
  GgufFile f = tiny_llama();
  *find(f, "general.name") = str("mistral");
  expect_refused(f, "mistral");
  f = tiny_llama();
  *find(f, "general.architecture") = str("bert");
  expect_refused(f, "bert");
}

TEST(HfWeights, RowsNotAMultipleOfTwiceTheHeads) {
  GgufFile f = tiny_llama();
  // 3 kv heads: k's 8 rows are not a multiple of 6 (transformers' reshape would fail).
  *find(f, "llama.attention.head_count_kv") = u32(3);
  expect_refused(f, "blk.0.attn_k.weight");
  f = tiny_llama();
  tensor(f, "blk.0.attn_q.weight")->ne = {16, 14, 1, 1};
  expect_refused(f, "blk.0.attn_q.weight");
}

TEST(HfWeights, ShapeAgainstTheConfig) {
  GgufFile f = tiny_llama();
  tensor(f, "blk.0.attn_v.weight")->ne = {16, 16, 1, 1};  // 4 heads' worth, config says 2
  expect_refused(f, "blk.0.attn_v.weight");
  f = tiny_llama();
  tensor(f, "token_embd.weight")->ne = {16, 11, 1, 1};  // vocab 10
  expect_refused(f, "token_embd.weight");
  f = tiny_llama();
  tensor(f, "output_norm.weight")->n_dims = 0;
  expect_refused(f, "output_norm.weight");
}

TEST(HfWeights, ZeroKvHeads) {
  GgufFile f = tiny_llama();
  *find(f, "llama.attention.head_count_kv") = u32(0);
  expect_refused(f, "blk.0.attn_k.weight");
}

TEST(HfWeights, HugeCountsNeverThrowNorHang) {
  GgufFile f = tiny_llama();
  *find(f, "llama.block_count") = u64(UINT64_MAX);
  *find(f, "llama.attention.head_count") = u64(UINT64_MAX / 2);
  *find(f, "llama.attention.head_count_kv") = u64(UINT64_MAX / 2);
  EXPECT_NO_THROW({
    const HfWeightsResult r = hf_weight_map(f);
    EXPECT_FALSE(r.weights.has_value());
  });
  // 2 × 2⁶³ heads wraps to 0 in 64 bits: no division by zero.
  f = tiny_llama();
  *find(f, "llama.attention.head_count") = u64(std::uint64_t{1} << 63);
  *find(f, "llama.attention.head_count_kv") = u64(std::uint64_t{1} << 63);
  EXPECT_NO_THROW(expect_refused(f, "blk.0.attn_q.weight"));
}

TEST(HfWeights, UnmappedTensorsAreSkipped) {
  GgufFile f = tiny_llama();
  add_tensor(f, "rope_freqs.weight", {2});  // no HF parameter (llama3's rope factors)
  const HfWeightsResult r = hf_weight_map(f);
  ASSERT_TRUE(r.weights.has_value()) << r.reason;
  EXPECT_EQ(r.weights->size(), 11u);
}

// A layer tensor the model has no layer for is no tensor of this model: refused with its name,
// never dropped unseen (a stray layer tensor once also switched falcon's row: below).
TEST(HfWeights, LayerTensorsOutsideTheModelsLayersRefused) {
  GgufFile f = tiny_llama();
  add_tensor(f, "blk.1.attn_q.weight", {16, 16});  // past block_count 1
  expect_refused(f, "tensor 'blk.1.attn_q.weight' is no layer");
  f = tiny_llama();
  add_tensor(f, "blk.00.attn_v.weight", {8, 16});  // not a name the converter writes
  expect_refused(f, "tensor 'blk.00.attn_v.weight' is no layer");
}

// block_count 4 with tensors for layer 0 only: transformers would initialise layers 1 to 3 at
// random (from_pretrained warns at most).
TEST(HfWeights, ALayerWithoutTensorsRefused) {
  GgufFile f = tiny_llama();
  *find(f, "llama.block_count") = u32(4);
  expect_refused(f, "layer 1 of 4 holds no tensor (no 'blk.1.*')");
  // The same file with the layers there maps.
  for (const int n : {1, 2, 3}) add_llama_layer(f, n);
  EXPECT_TRUE(hf_weight_map(f).weights.has_value()) << hf_weight_map(f).reason;
}

// A llama whose layer 1 lacks the k_proj layer 0 has: LlamaForCausalLM would initialise
// model.layers.1.self_attn.k_proj.weight at random (from_pretrained only warns). A llama's
// layers are all alike (modeling_llama.py, LlamaDecoderLayer), so one holding a tensor layer 0
// lacks is refused too.
TEST(HfWeights, ALayerLackingATensorTheOthersHoldRefused) {
  auto two_layers = [] {
    GgufFile f = tiny_llama();
    *find(f, "llama.block_count") = u32(2);
    add_llama_layer(f, 1);
    return f;
  };
  GgufFile f = two_layers();
  const HfWeightsResult whole = hf_weight_map(f);
  ASSERT_TRUE(whole.weights.has_value()) << whole.reason;
  EXPECT_EQ(whole.weights->size(), 20u);  // embeddings, 9 + 9 of the layers, the final norm
  erase_tensor(f, "blk.1.attn_k.weight");
  expect_refused(f, "layer 1 of 2 has no 'blk.1.attn_k.weight', which layer 0 holds");
  // A tensor no row entry names stays a tensor hf/ omits, in any layer.
  f = two_layers();
  add_tensor(f, "blk.1.no_such.weight", {16});
  EXPECT_TRUE(hf_weight_map(f).weights.has_value()) << hf_weight_map(f).reason;
}

// LlamaDecoderLayer builds k_proj, gate_proj and post_attention_layernorm in every layer
// (modeling_llama.py, LlamaAttention, LlamaMLP): a llama whose layers all lack one is alike
// layer by layer, yet LlamaForCausalLM would initialise that parameter at random in each
// (from_pretrained only warns). Refused naming layer 0's tensor and the class.
TEST(HfWeights, ATensorItsClassBuildsInEveryLayerAbsentFromAllRefused) {
  for (const std::string missing : {"attn_k.weight", "ffn_gate.weight", "ffn_norm.weight"}) {
    GgufFile f = tiny_llama();
    *find(f, "llama.block_count") = u32(4);
    for (const int n : {1, 2, 3}) add_llama_layer(f, n);
    ASSERT_TRUE(hf_weight_map(f).weights.has_value()) << hf_weight_map(f).reason;
    for (const int n : {0, 1, 2, 3}) erase_tensor(f, fmt::format("blk.{}.{}", n, missing));
    expect_refused(f, fmt::format("layer 0 of 4 has no 'blk.0.{}', which LlamaForCausalLM builds "
                                  "in every layer",
                                  missing));
  }
}

// StableLmAttention builds its q/k/v biases only under use_qkv_bias, StableLmDecoderLayer its
// post_attention_layernorm only without use_parallel_residual (modeling_stablelm.py), and hf/
// sets both fields from the tensors (hf_config.cpp): a StableLM maps with or without them. A
// layer 1 alone holding a q bias is refused, as is a StableLM without input_layernorm's bias,
// which nn.LayerNorm builds in every layer.
TEST(HfWeights, AParameterBuiltUnderAConfigFieldMayBeAbsent) {
  auto stablelm = [](bool biases, bool ffn_norm) {
    GgufFile f = tiny_decoder("stablelm", 2);
    add(f, "stablelm.vocab_size", u32(10));
    add(f, "stablelm.attention.layer_norm_epsilon", f32(1e-5f));
    add_tensor(f, "token_embd.weight", {10, 16});
    for (const int n : {0, 1}) {
      add_llama_attention(f, n);
      if (biases) {
        add_tensor(f, fmt::format("blk.{}.attn_q.bias", n), {16});
        add_tensor(f, fmt::format("blk.{}.attn_k.bias", n), {8});
        add_tensor(f, fmt::format("blk.{}.attn_v.bias", n), {8});
      }
      add_tensor(f, fmt::format("blk.{}.ffn_gate.weight", n), {40, 16});
      add_tensor(f, fmt::format("blk.{}.ffn_up.weight", n), {40, 16});
      add_tensor(f, fmt::format("blk.{}.ffn_down.weight", n), {16, 40});
      add_tensor(f, fmt::format("blk.{}.attn_norm.weight", n), {16});
      add_tensor(f, fmt::format("blk.{}.attn_norm.bias", n), {16});
      if (ffn_norm) {
        add_tensor(f, fmt::format("blk.{}.ffn_norm.weight", n), {16});
        add_tensor(f, fmt::format("blk.{}.ffn_norm.bias", n), {16});
      }
    }
    add_tensor(f, "output_norm.weight", {16});
    add_tensor(f, "output_norm.bias", {16});
    return f;
  };
  for (const bool biases : {false, true}) {
    for (const bool ffn_norm : {false, true}) {
      const HfWeightsResult r = hf_weight_map(stablelm(biases, ffn_norm));
      ASSERT_TRUE(r.weights.has_value()) << r.reason;
      // The embeddings, 9 parameters a layer (3 biases, 2 norm parameters more), the final norm.
      EXPECT_EQ(r.weights->size(), 1 + 2 * (9 + (biases ? 3 : 0) + (ffn_norm ? 2 : 0)) + 2);
    }
  }
  GgufFile f = stablelm(false, true);
  add_tensor(f, "blk.1.attn_q.bias", {16});
  expect_refused(f, "layer 1 of 2 holds 'blk.1.attn_q.bias', which layer 0 has not");
  f = stablelm(true, true);
  for (const int n : {0, 1}) erase_tensor(f, fmt::format("blk.{}.attn_norm.bias", n));
  expect_refused(f,
                 "layer 0 of 2 has no 'blk.0.attn_norm.bias', which StableLmForCausalLM builds in "
                 "every layer");
}

// A GraniteMoeHybrid of one layer a KV head count in `kv_heads` (0: a Mamba layer, granite.py
// writes it so), with a dense shared MLP of 40 and layer 0's attention.
GgufFile tiny_granitehybrid(std::vector<Value> kv_heads) {
  GgufFile f = tiny_decoder("granitehybrid", static_cast<std::uint32_t>(kv_heads.size()));
  *find(f, "granitehybrid.attention.head_count_kv") = arr(ValueType::kUint32, std::move(kv_heads));
  add(f, "granitehybrid.vocab_size", u32(10));
  add(f, "granitehybrid.expert_shared_feed_forward_length", u32(40));
  add_tensor(f, "token_embd.weight", {10, 16});
  add_llama_attention(f, 0);
  return f;
}

// GraniteMoeHybridDecoderLayer builds shared_mlp in every layer (modeling_granitemoehybrid.py),
// which the converter writes as ffn_*_shexp beside experts and as the plain ffn_* in a dense
// model (granite.py, GraniteHybridModel.modify_tensors): either stands for the other, and a layer
// with neither is refused naming the first.
TEST(HfWeights, AnAlternativeStandsForARequiredTensor) {
  GgufFile f = tiny_granitehybrid({u32(2)});
  add_llama_mlp_norms(f, 0);  // ffn_gate and ffn_up: shared_mlp.input_linear's halves
  const HfWeightsResult r = hf_weight_map(f);
  ASSERT_TRUE(r.weights.has_value()) << r.reason;
  EXPECT_TRUE(std::any_of(r.weights->begin(), r.weights->end(), [](const HfWeight& w) {
    return w.hf_name == "model.layers.0.shared_mlp.input_linear.weight";
  }));
  for (const char* t : {"ffn_gate.weight", "ffn_up.weight", "ffn_down.weight"}) {
    erase_tensor(f, fmt::format("blk.0.{}", t));
  }
  expect_refused(f,
                 "layer 0 of 1 has no 'blk.0.ffn_gate_shexp.weight', which "
                 "GraniteMoeHybridForCausalLM builds in every layer");
}

// A two-layer lfm2: attention in layer 0 (q, k, v, out_proj, q/k layernorms), the short
// convolution in layer 1 (lfm2.py writes its KV heads as 0), the MLP and norms in both.
GgufFile tiny_lfm2() {
  GgufFile f = tiny_decoder("lfm2", 2);
  *find(f, "lfm2.attention.head_count_kv") = arr(ValueType::kUint32, {u32(2), u32(0)});
  add(f, "lfm2.vocab_size", u32(10));
  add(f, "lfm2.shortconv.l_cache", u32(3));
  add_tensor(f, "token_embd.weight", {10, 16});
  add_llama_attention(f, 0);  // LFM2's q, k, v and out_proj (no q/k permutation)
  add_tensor(f, "blk.0.attn_q_norm.weight", {4});
  add_tensor(f, "blk.0.attn_k_norm.weight", {4});
  add_tensor(f, "blk.1.shortconv.conv.weight", {16, 3});
  add_tensor(f, "blk.1.shortconv.in_proj.weight", {48, 16});
  add_tensor(f, "blk.1.shortconv.out_proj.weight", {16, 16});
  for (const int n : {0, 1}) add_llama_mlp_norms(f, n);  // LFM2's w1, w3, w2 and norms
  return f;
}

// LFM2's layers are attention or short convolution by layer_types (modeling_lfm2.py,
// Lfm2DecoderLayer; lfm2.py writes it as 0 KV heads in a convolution layer): an attention layer
// 0 and a convolution layer 1 hold different tensors and map; the MLP and norms every layer has
// (feed_forward, operator_norm, ffn_norm) are not of a layer kind, and a layer lacking one is
// refused.
TEST(HfWeights, AHybridsLayerKindsMap) {
  GgufFile f = tiny_lfm2();
  const HfWeightsResult r = hf_weight_map(f);
  ASSERT_TRUE(r.weights.has_value()) << r.reason;
  std::vector<std::string> names;
  for (const HfWeight& w : *r.weights) names.push_back(w.hf_name);
  EXPECT_NE(std::find(names.begin(), names.end(), "model.layers.0.self_attn.k_proj.weight"),
            names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "model.layers.1.conv.in_proj.weight"),
            names.end());
  erase_tensor(f, "blk.1.ffn_norm.weight");
  expect_refused(f, "layer 1 of 2 has no 'blk.1.ffn_norm.weight', which layer 0 holds");
}

// Each layer holds each group of its kind's tensors wholly (hf::LayerGroup) and one of the
// alternatives: Lfm2DecoderLayer builds self_attn (q, k, v, out_proj and the q/k layernorms) in
// a full_attention layer and the short convolution (conv, in_proj, out_proj) in the others, so a
// layer with neither, or with part of one, would be served with parameters transformers
// initialises at random.
TEST(HfWeights, AHybridLayerHoldsItsKindWhole) {
  auto lfm2 = tiny_lfm2;
  ASSERT_TRUE(hf_weight_map(lfm2()).weights.has_value()) << hf_weight_map(lfm2()).reason;
  // (a) Layer 1 without its short convolution, and no attention either: named as the kind
  // layer_types gives it.
  GgufFile f = lfm2();
  for (const char* t : {"conv.weight", "in_proj.weight", "out_proj.weight"}) {
    erase_tensor(f, fmt::format("blk.1.shortconv.{}", t));
  }
  expect_refused(f,
                 "layer 1 of 2 has no 'blk.1.shortconv.conv.weight', which Lfm2ForCausalLM builds "
                 "in every 'conv' layer of layer_types");
  // Layer 1's convolution where the KV heads make it an attention layer (layer_types
  // "full_attention": lfm2.py writes a convolution layer's as 0).
  f = lfm2();
  *find(f, "lfm2.attention.head_count_kv") = arr(ValueType::kUint32, {u32(2), u32(2)});
  expect_refused(f,
                 "layer 1 of 2 has no 'blk.1.attn_q.weight', which Lfm2ForCausalLM builds in "
                 "every 'full_attention' layer of layer_types");
  // (b) Layer 0's attention without k_proj; layer 1 a q_proj beside its convolution and no
  // other attention tensor; layer 1's convolution without in_proj.
  f = lfm2();
  erase_tensor(f, "blk.0.attn_k.weight");
  expect_refused(f,
                 "layer 0 of 2 has no 'blk.0.attn_k.weight', which Lfm2ForCausalLM builds in "
                 "every layer holding 'blk.0.attn_q.weight'");
  f = lfm2();
  add_tensor(f, "blk.1.attn_q.weight", {16, 16});
  expect_refused(f,
                 "layer 1 of 2 has no 'blk.1.attn_k.weight', which Lfm2ForCausalLM builds in "
                 "every layer holding 'blk.1.attn_q.weight'");
  f = lfm2();
  erase_tensor(f, "blk.1.shortconv.in_proj.weight");
  expect_refused(f,
                 "layer 1 of 2 has no 'blk.1.shortconv.in_proj.weight', which Lfm2ForCausalLM "
                 "builds in every layer holding 'blk.1.shortconv.conv.weight'");
}

// (c) Qwen3.5's gated delta net (modeling_qwen3_5.py, Qwen3_5GatedDeltaNet: dt_bias, A_log,
// conv1d, norm, out_proj, in_proj_qkv, in_proj_z, in_proj_b, in_proj_a) and GraniteMoeHybrid's
// Mamba-2 mixer (GraniteMoeHybridMambaLayer) come whole: half of one is refused by the first
// tensor it lacks.
TEST(HfWeights, HalfALinearAttentionOrMambaLayerRefused) {
  const GgufFile f = tiny_qwen35(2);
  ASSERT_TRUE(hf_weight_map(f).weights.has_value()) << hf_weight_map(f).reason;
  GgufFile half = f;
  for (const char* t : {"ssm_conv1d.weight", "ssm_norm.weight", "ssm_beta.weight"}) {
    erase_tensor(half, fmt::format("blk.0.{}", t));
  }
  expect_refused(half,
                 "layer 0 of 2 has no 'blk.0.ssm_conv1d.weight', which Qwen3_5ForCausalLM builds "
                 "in every layer holding 'blk.0.ssm_dt.bias'");
  half = f;
  erase_tensor(half, "blk.1.attn_k_norm.weight");
  expect_refused(half,
                 "layer 1 of 2 has no 'blk.1.attn_k_norm.weight', which Qwen3_5ForCausalLM builds "
                 "in every layer holding 'blk.1.attn_q.weight'");

  // GraniteMoeHybrid: attention in layer 0, a Mamba-2 mixer (inner 32 in 2 groups of state 4, 4
  // heads, kernel 4) in layer 1, a dense shared MLP in both.
  GgufFile g = tiny_granitehybrid({u32(2), u32(0)});
  add(g, "granitehybrid.ssm.conv_kernel", u32(4));
  add(g, "granitehybrid.ssm.inner_size", u32(32));
  add(g, "granitehybrid.ssm.state_size", u32(4));
  add(g, "granitehybrid.ssm.time_step_rank", u32(4));
  add(g, "granitehybrid.ssm.group_count", u32(2));
  add_tensor(g, "blk.1.ssm_dt.bias", {4});
  add_tensor(g, "blk.1.ssm_a", {4});
  add_tensor(g, "blk.1.ssm_d", {4});
  add_tensor(g, "blk.1.ssm_conv1d.weight", {48, 4});
  add_tensor(g, "blk.1.ssm_conv1d.bias", {48});
  add_tensor(g, "blk.1.ssm_in.weight", {84, 16});
  add_tensor(g, "blk.1.ssm_norm.weight", {2, 16});
  add_tensor(g, "blk.1.ssm_out.weight", {16, 32});
  for (const int n : {0, 1}) add_llama_mlp_norms(g, n);
  ASSERT_TRUE(hf_weight_map(g).weights.has_value()) << hf_weight_map(g).reason;
  // Layer 1's mixer where the KV heads make it an attention layer (granite.py writes a Mamba
  // layer's as 0).
  GgufFile attention = g;
  *find(attention, "granitehybrid.attention.head_count_kv") =
      arr(ValueType::kUint32, {u32(2), u32(2)});
  expect_refused(attention,
                 "layer 1 of 2 has no 'blk.1.attn_q.weight', which GraniteMoeHybridForCausalLM "
                 "builds in every 'attention' layer of layer_types");
  erase_tensor(g, "blk.1.ssm_in.weight");
  erase_tensor(g, "blk.1.ssm_out.weight");
  expect_refused(g,
                 "layer 1 of 2 has no 'blk.1.ssm_in.weight', which GraniteMoeHybridForCausalLM "
                 "builds in every layer holding 'blk.1.ssm_dt.bias'");
}

// Where the config gives no kind a layer (Jamba's attn_layer_offset and _period name the
// attention layers, the others' mixer is Mamba: modeling_jamba.py, JambaDecoderLayer), a layer
// still holds one of its mixers: layer 1 here holds its MLP and norms only.
TEST(HfWeights, ALayerWithNoneOfItsAlternativesRefused) {
  GgufFile f = tiny_decoder("jamba", 2);
  *find(f, "jamba.attention.head_count_kv") = arr(ValueType::kUint32, {u32(2), u32(0)});
  add(f, "tokenizer.ggml.tokens", arr(ValueType::kString, {str("a"), str("b"), str("c")}));
  add(f, "jamba.ssm.conv_kernel", u32(4));
  add(f, "jamba.ssm.inner_size", u32(32));
  add(f, "jamba.ssm.state_size", u32(4));
  add(f, "jamba.ssm.time_step_rank", u32(2));
  add_tensor(f, "token_embd.weight", {3, 16});
  add_llama_attention(f, 0);
  for (const int n : {0, 1}) add_llama_mlp_norms(f, n);
  // Layer 1 is a Mamba layer by head_count_kv (attn_layer_offset 0, attn_layer_period 2:
  // JambaConfig.layers_block_type), holding neither mixer, then attention instead.
  const std::string mamba_layer_1 =
      "layer 1 of 2 has no 'blk.1.ssm_conv1d.weight', which JambaForCausalLM builds in every "
      "'mamba' layer of attn_layer_offset and attn_layer_period";
  expect_refused(f, mamba_layer_1);
  add_llama_attention(f, 1);
  expect_refused(f, mamba_layer_1);
}

// Gemma 3n's layers before the last num_kv_shared_layers compute their own keys and values
// (modeling_gemma3n.py, Gemma3nTextAttention: is_kv_shared_layer), so hold k_proj, v_proj and
// k_norm; a file whose such layer lacks them would get them initialised at random.
TEST(HfWeights, ALayerOfItsOwnKeysAndValuesHoldsThem) {
  GgufFile f = tiny_gemma3n();
  ASSERT_TRUE(hf_weight_map(f).weights.has_value()) << hf_weight_map(f).reason;
  GgufFile g = f;
  for (const char* t : {"attn_k.weight", "attn_v.weight", "attn_k_norm.weight"}) {
    erase_tensor(g, fmt::format("blk.0.{}", t));
  }
  expect_refused(g,
                 "layer 0 of 2 has no 'blk.0.attn_k.weight', which Gemma3nForCausalLM builds in "
                 "every 'unshared' layer of num_kv_shared_layers");
  // No layer shares: layer 1 computes its own too.
  g = f;
  *find(g, "gemma3n.attention.shared_kv_layers") = u32(0);
  expect_refused(g, "layer 1 of 2 has no 'blk.1.attn_k.weight'");
}

// T5's layer 0, of the encoder and of the decoder, holds the relative attention bias
// (modeling_t5.py, T5Stack: T5Block(has_relative_attention_bias=bool(i == 0))); without it
// T5ForConditionalGeneration would initialise it at random.
TEST(HfWeights, T5sFirstLayerHoldsTheRelativeAttentionBias) {
  GgufFile f;
  f.path = "tiny.gguf";
  f.version = 3;
  add(f, "general.architecture", str("t5"));
  add(f, "t5.block_count", u32(2));
  add(f, "t5.decoder_block_count", u32(2));
  add(f, "t5.context_length", u32(128));
  add(f, "t5.embedding_length", u32(16));
  add(f, "t5.feed_forward_length", u32(40));
  add(f, "t5.attention.head_count", u32(4));
  add(f, "t5.attention.key_length", u32(4));
  add(f, "t5.attention.layer_norm_epsilon", f32(1e-6f));
  add(f, "t5.attention.relative_buckets_count", u32(8));
  add(f, "tokenizer.ggml.tokens", arr(ValueType::kString, {str("a"), str("b"), str("c")}));
  add_tensor(f, "token_embd.weight", {3, 16});
  for (const char* stack : {"enc", "dec"}) {
    for (const int n : {0, 1}) {
      auto t = [&](std::string_view name, std::vector<std::uint64_t> shape) {
        add_tensor(f, fmt::format("{}.blk.{}.{}", stack, n, name), std::move(shape));
      };
      for (const char* m : {"attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_o.weight"}) {
        t(m, {16, 16});
      }
      t("attn_norm.weight", {16});
      t("ffn_gate.weight", {40, 16});
      t("ffn_up.weight", {40, 16});
      t("ffn_down.weight", {16, 40});
      t("ffn_norm.weight", {16});
      if (std::string_view(stack) == "dec") {
        for (const char* m : {"cross_attn_q.weight", "cross_attn_k.weight", "cross_attn_v.weight",
                              "cross_attn_o.weight"}) {
          t(m, {16, 16});
        }
        t("cross_attn_norm.weight", {16});
      }
      if (n == 0) t("attn_rel_b.weight", {8, 4});
    }
  }
  add_tensor(f, "enc.output_norm.weight", {16});
  add_tensor(f, "dec.output_norm.weight", {16});
  add_tensor(f, "output.weight", {3, 16});
  ASSERT_TRUE(hf_weight_map(f).weights.has_value()) << hf_weight_map(f).reason;
  GgufFile g = f;
  erase_tensor(g, "enc.blk.0.attn_rel_b.weight");
  expect_refused(g,
                 "layer 0 of 2 has no 'enc.blk.0.attn_rel_b.weight', which "
                 "T5ForConditionalGeneration builds in every 'has_relative_attention_bias' layer "
                 "of T5Stack");
  g = f;
  erase_tensor(g, "dec.blk.0.attn_rel_b.weight");
  expect_refused(g, "layer 0 of 2 has no 'dec.blk.0.attn_rel_b.weight'");
}

// (d) GLM-4.5's layers before first_k_dense_replace (leading_dense_block_count) hold the dense
// MLP, the others the MoE (modeling_glm4_moe.py, Glm4MoeDecoderLayer; Glm4MoeMoE: the router
// with its correction bias, the experts, the shared experts): a layer with neither, with
// experts without their router, or with the other kind than the key gives it, is refused.
TEST(HfWeights, ADenseThenMoeLayerHoldsItsMlpWhole) {
  GgufFile f = tiny_decoder("glm4moe", 2);
  add(f, "glm4moe.vocab_size", u32(10));
  add(f, "glm4moe.expert_count", u32(4));
  add(f, "glm4moe.expert_used_count", u32(2));
  add(f, "glm4moe.expert_feed_forward_length", u32(8));
  add(f, "glm4moe.expert_shared_count", u32(1));
  add(f, "glm4moe.leading_dense_block_count", u32(1));
  add_tensor(f, "token_embd.weight", {10, 16});
  for (const int n : {0, 1}) {
    add_llama_attention(f, n);
    add_tensor(f, fmt::format("blk.{}.attn_norm.weight", n), {16});
    add_tensor(f, fmt::format("blk.{}.post_attention_norm.weight", n), {16});
  }
  add_tensor(f, "blk.0.ffn_gate.weight", {40, 16});
  add_tensor(f, "blk.0.ffn_up.weight", {40, 16});
  add_tensor(f, "blk.0.ffn_down.weight", {16, 40});
  add_tensor(f, "blk.1.ffn_gate_exps.weight", {4, 8, 16});
  add_tensor(f, "blk.1.ffn_up_exps.weight", {4, 8, 16});
  add_tensor(f, "blk.1.ffn_down_exps.weight", {4, 16, 8});
  add_tensor(f, "blk.1.ffn_gate_inp.weight", {4, 16});
  add_tensor(f, "blk.1.exp_probs_b.bias", {4});
  add_tensor(f, "blk.1.ffn_gate_shexp.weight", {8, 16});
  add_tensor(f, "blk.1.ffn_up_shexp.weight", {8, 16});
  add_tensor(f, "blk.1.ffn_down_shexp.weight", {16, 8});
  ASSERT_TRUE(hf_weight_map(f).weights.has_value()) << hf_weight_map(f).reason;
  GgufFile g = f;
  for (const char* t : {"ffn_gate_exps.weight", "ffn_up_exps.weight", "ffn_down_exps.weight",
                        "ffn_gate_inp.weight", "exp_probs_b.bias", "ffn_gate_shexp.weight",
                        "ffn_up_shexp.weight", "ffn_down_shexp.weight"}) {
    erase_tensor(g, fmt::format("blk.1.{}", t));
  }
  expect_refused(g,
                 "layer 1 of 2 has no 'blk.1.ffn_gate_inp.weight', which Glm4MoeForCausalLM "
                 "builds in every 'moe' layer of first_k_dense_replace");
  // Both layers dense by the key, layer 1 holding the MoE.
  g = f;
  *find(g, "glm4moe.leading_dense_block_count") = u32(2);
  expect_refused(g,
                 "layer 1 of 2 has no 'blk.1.ffn_gate.weight', which Glm4MoeForCausalLM builds in "
                 "every 'dense' layer of first_k_dense_replace");
  g = f;
  erase_tensor(g, "blk.1.ffn_gate_inp.weight");
  expect_refused(g,
                 "layer 1 of 2 has no 'blk.1.ffn_gate_inp.weight', which Glm4MoeForCausalLM "
                 "builds in every layer holding 'blk.1.ffn_gate_exps.weight'");
}

// A tensor of no elements gets no map, whatever its other dimensions say: at 300 000 and at
// 1 200 000 empty experts (two sizes), refused before any loop over them.
TEST(HfWeights, ZeroElementTensorsRefused) {
  for (const std::uint64_t experts : {300'000u, 1'200'000u}) {
    GgufFile f = tiny_qwen3moe();
    *find(f, "qwen3moe.expert_count") = u32(experts);
    tensor(f, "blk.0.ffn_gate_inp.weight")->ne = {16, experts, 1, 1};
    tensor(f, "blk.0.ffn_gate_exps.weight")->ne = {0, 768, experts, 1};
    tensor(f, "blk.0.ffn_gate_exps.weight")->n_elements = 0;
    tensor(f, "blk.0.ffn_down_exps.weight")->ne = {768, 0, experts, 1};
    tensor(f, "blk.0.ffn_down_exps.weight")->n_elements = 0;
    expect_refused(f, fmt::format("tensor 'blk.0.ffn_gate_exps.weight' holds no elements (ne [0, "
                                  "768, {}])",
                                  experts));
  }
}

// GraniteMoe's input_linear (E, 2F, H) is split by transformers at F (modeling_granitemoe.py,
// GraniteMoeParallelExperts output chunk(2)): gate rows F+1 and up rows F−1 sum to 2F, but
// served as one they would put a gate row in the up half.
TEST(HfWeights, AFusedSplitEachPartItsOwnWidth) {
  GgufFile f = tiny_decoder("granitemoe", 1);
  add(f, "granitemoe.vocab_size", u32(10));
  add(f, "granitemoe.expert_count", u32(2));
  add(f, "granitemoe.expert_used_count", u32(1));
  add_tensor(f, "token_embd.weight", {10, 16});
  add_llama_attention(f, 0);
  add_tensor(f, "blk.0.attn_norm.weight", {16});
  add_tensor(f, "blk.0.ffn_norm.weight", {16});
  add_tensor(f, "blk.0.ffn_gate_inp.weight", {2, 16});
  add_tensor(f, "blk.0.ffn_gate_exps.weight", {2, 40, 16});
  add_tensor(f, "blk.0.ffn_up_exps.weight", {2, 40, 16});
  add_tensor(f, "blk.0.ffn_down_exps.weight", {2, 16, 40});
  const HfWeightsResult r = hf_weight_map(f);
  ASSERT_TRUE(r.weights.has_value()) << r.reason;
  tensor(f, "blk.0.ffn_gate_exps.weight")->ne = {16, 41, 2, 1};
  tensor(f, "blk.0.ffn_up_exps.weight")->ne = {16, 39, 2, 1};
  expect_refused(f, "tensor 'blk.0.ffn_up_exps.weight' has not the 41 rows");
}

// A llama that carries llama.expert_count but no experts is no Mixtral: MixtralForCausalLM would
// drop its MLP and initialise the experts at random.
TEST(HfWeights, AVariantNeedsItsTensorsInEveryLayer) {
  GgufFile f = tiny_llama();
  add(f, "llama.expert_count", u32(4));
  add_tensor(f, "blk.0.ffn_gate.weight", {40, 16});
  expect_refused(f, "no tensor 'blk.0.ffn_gate_exps.weight': MixtralForCausalLM needs it");
  // Two layers, the experts in layer 0 only.
  f = tiny_llama();
  *find(f, "llama.block_count") = u32(2);
  add(f, "llama.expert_count", u32(2));
  add_tensor(f, "blk.0.ffn_gate_exps.weight", {2, 40, 16});
  add_tensor(f, "blk.1.attn_norm.weight", {16});
  expect_refused(f, "no tensor 'blk.1.ffn_gate_exps.weight'");
}

// Falcon's new decoder names a layer's two norms ln_attn and ln_mlp only where every layer has
// two (FalconConfig's num_ln_in_parallel_attn): one stray norm_2 past the layers once switched a
// one-layer falcon's row, serving layer 0's norm as ln_mlp; one in some layers only is refused.
TEST(HfWeights, AStrayTensorSwitchesNoRow) {
  auto falcon = [](std::uint32_t layers) {
    GgufFile f;
    f.path = "falcon.gguf";
    f.version = 3;
    add(f, "general.architecture", str("falcon"));
    add(f, "falcon.block_count", u32(layers));
    add(f, "falcon.context_length", u32(128));
    add(f, "falcon.embedding_length", u32(16));
    add(f, "falcon.feed_forward_length", u32(64));
    add(f, "falcon.attention.head_count", u32(4));
    add(f, "falcon.attention.head_count_kv", u32(2));
    add(f, "falcon.attention.layer_norm_epsilon", f32(1e-5f));
    std::vector<Value> tokens;
    for (int i = 0; i < 10; ++i) tokens.push_back(str(fmt::format("t{}", i)));
    add(f, "tokenizer.ggml.tokens", arr(ValueType::kString, tokens));
    add_tensor(f, "token_embd.weight", {10, 16});
    for (std::uint32_t n = 0; n < layers; ++n) {  // FalconDecoderLayer's (modeling_falcon.py)
      add_tensor(f, fmt::format("blk.{}.attn_norm.weight", n), {16});
      add_tensor(f, fmt::format("blk.{}.attn_norm.bias", n), {16});
      add_tensor(f, fmt::format("blk.{}.attn_qkv.weight", n), {32, 16});
      add_tensor(f, fmt::format("blk.{}.attn_output.weight", n), {16, 16});
      add_tensor(f, fmt::format("blk.{}.ffn_up.weight", n), {64, 16});
      add_tensor(f, fmt::format("blk.{}.ffn_down.weight", n), {16, 64});
    }
    return f;
  };
  GgufFile f = falcon(1);
  const HfWeightsResult one = hf_weight_map(f);
  ASSERT_TRUE(one.weights.has_value()) << one.reason;
  EXPECT_TRUE(std::any_of(one.weights->begin(), one.weights->end(), [](const HfWeight& w) {
    return w.hf_name == "transformer.h.0.input_layernorm.weight";
  }));
  add_tensor(f, "blk.7.attn_norm_2.weight", {16});
  expect_refused(f, "tensor 'blk.7.attn_norm_2.weight' is no layer");
  f = falcon(2);
  add_tensor(f, "blk.1.attn_norm_2.weight", {16});
  expect_refused(f, "no tensor 'blk.0.attn_norm_2.weight': FalconForCausalLM needs it");
}

// ssm.group_count 2⁶³ (2·g wraps to 0 in 64 bits) over qwen3next's fused qkvz once ended the
// process with SIGFPE; now refused with a reason.
TEST(HfWeights, AGroupCountNear2To63NeverDividesByZero) {
  GgufFile f = tiny_decoder("qwen3next", 1);
  add(f, "qwen3next.vocab_size", u32(10));
  add(f, "qwen3next.attention.key_length", u32(4));
  add(f, "qwen3next.ssm.conv_kernel", u32(4));
  add(f, "qwen3next.ssm.inner_size", u32(0));
  add(f, "qwen3next.ssm.state_size", u32(4));
  add(f, "qwen3next.ssm.time_step_rank", u64(std::uint64_t{1} << 63));
  add(f, "qwen3next.ssm.group_count", u64(std::uint64_t{1} << 63));
  add(f, "qwen3next.full_attention_interval", u32(2));
  add_tensor(f, "token_embd.weight", {10, 16});
  add_tensor(f, "blk.0.attn_qkv.weight", {8, 16});
  add_tensor(f, "blk.0.attn_gate.weight", {0, 16});
  EXPECT_NO_THROW(EXPECT_FALSE(hf_weight_map(f).weights.has_value()));
}

// MLA's kv_a_proj_with_mqa has kv_lora_rank + qk_rope_head_dim rows (modeling_deepseek_v2.py,
// DeepseekV2Attention). With kv_lora_rank 2⁶⁴ − 1 and 2 rope dims, that sum wrapped to 1 in 64
// bits, and a one-row tensor passed as the parameter of a 2⁶⁴-row config; the sum is checked now.
TEST(HfWeights, AnMlaRankNear2To64NeverWrapsTheShape) {
  GgufFile f = tiny_decoder("deepseek2", 1);
  add(f, "deepseek2.vocab_size", u32(10));
  add(f, "deepseek2.attention.kv_lora_rank", u64(UINT64_MAX));
  add(f, "deepseek2.rope.dimension_count", u32(2));
  add(f, "deepseek2.attention.key_length_mla", u32(6));
  add(f, "deepseek2.leading_dense_block_count", u32(1));
  add_tensor(f, "token_embd.weight", {10, 16});
  add_tensor(f, "blk.0.attn_kv_a_mqa.weight", {1, 16});
  // The rest of the layer's required tensors, a dense MLP among them, checked after kv_a_mqa's
  // shape (q_proj, or the query LoRA under q_lora_rank, is not required).
  for (const std::string_view t : {"attn_kv_a_norm.weight", "attn_k_b.weight", "attn_v_b.weight",
                                   "attn_output.weight", "attn_norm.weight", "ffn_norm.weight",
                                   "ffn_gate.weight", "ffn_up.weight", "ffn_down.weight"}) {
    add_tensor(f, fmt::format("blk.0.{}", t), {16});
  }
  expect_refused(f, "tensor 'blk.0.attn_kv_a_mqa.weight': the config's shape overflows");
}

// A one-layer qwen3moe with 4 experts of 768 (Qwen3MoeConfig's moe_intermediate_size).
GgufFile tiny_qwen3moe() {
  GgufFile f;
  f.path = "moe.gguf";
  f.version = 3;
  add(f, "general.architecture", str("qwen3moe"));
  add(f, "qwen3moe.block_count", u32(1));
  add(f, "qwen3moe.context_length", u32(128));
  add(f, "qwen3moe.embedding_length", u32(16));
  add(f, "qwen3moe.attention.head_count", u32(4));
  add(f, "qwen3moe.attention.head_count_kv", u32(2));
  add(f, "qwen3moe.attention.key_length", u32(8));
  add(f, "qwen3moe.expert_count", u32(4));
  add(f, "qwen3moe.vocab_size", u32(10));
  add_tensor(f, "blk.0.ffn_gate_inp.weight", {4, 16});
  add_tensor(f, "blk.0.ffn_gate_exps.weight", {4, 768, 16});
  add_tensor(f, "blk.0.ffn_down_exps.weight", {4, 16, 768});
  // The rest of Qwen3MoeDecoderLayer (modeling_qwen3_moe.py): attention of 4 and 2 heads of 8
  // with q/k norms, the experts' up projections, the two norms.
  add_tensor(f, "blk.0.attn_q.weight", {32, 16});
  add_tensor(f, "blk.0.attn_k.weight", {16, 16});
  add_tensor(f, "blk.0.attn_v.weight", {16, 16});
  add_tensor(f, "blk.0.attn_output.weight", {16, 32});
  add_tensor(f, "blk.0.attn_q_norm.weight", {8});
  add_tensor(f, "blk.0.attn_k_norm.weight", {8});
  add_tensor(f, "blk.0.ffn_up_exps.weight", {4, 768, 16});
  add_tensor(f, "blk.0.attn_norm.weight", {16});
  add_tensor(f, "blk.0.ffn_norm.weight", {16});
  return f;
}

TEST(HfWeights, ExpertsSplitExpertByExpert) {
  const HfWeightsResult r = hf_weight_map(tiny_qwen3moe());
  ASSERT_TRUE(r.weights.has_value()) << r.reason;
  const std::vector<HfWeight>& w = *r.weights;
  // 4 projections and 2 norms of attention, the router, 4 experts of 3, the layer's 2 norms.
  ASSERT_EQ(w.size(), 6u + 1 + 4 * 3 + 2);
  EXPECT_EQ(w[6].hf_name, "model.layers.0.mlp.gate.weight");
  EXPECT_EQ(w[10].hf_name, "model.layers.0.mlp.experts.1.gate_proj.weight");
  EXPECT_EQ(w[10].transform, HfTransform::kSelect);
  EXPECT_EQ(w[10].index, 1u);
  EXPECT_EQ(w[10].shape, (std::vector<std::uint64_t>{768, 16}));
  EXPECT_EQ(w[11].hf_name, "model.layers.0.mlp.experts.1.up_proj.weight");
  EXPECT_EQ(w[12].hf_name, "model.layers.0.mlp.experts.1.down_proj.weight");
  EXPECT_EQ(w[12].shape, (std::vector<std::uint64_t>{16, 768}));
}

TEST(HfWeights, HostileExperts) {
  GgufFile f = tiny_qwen3moe();
  *find(f, "qwen3moe.expert_count") = u32(5);  // the stacks hold 4
  expect_refused(f, "blk.0.ffn_gate_inp.weight");
  f = tiny_qwen3moe();
  tensor(f, "blk.0.ffn_gate_exps.weight")->ne = {16, 768, 3, 1};
  expect_refused(f, "ffn_gate_exps");
  f = tiny_qwen3moe();
  add_tensor(f, "blk.0.ffn_odd_exps.weight", {4, 16});  // transformers' KeyError
  expect_refused(f, "ffn_odd_exps");
  f = tiny_qwen3moe();
  *find(f, "qwen3moe.expert_count") = u64(UINT64_MAX);
  EXPECT_NO_THROW(EXPECT_FALSE(hf_weight_map(f).weights.has_value()));
}

// expert_count is only a number: the expert loop runs where a layer holds a stack, each stack
// checked to hold that many experts first. Here 4 096 dots1 layers hold their attention, norms
// and a dense MLP (dots1's MLP is dense or experts by layer: kDenseOrMoe), with expert_count
// 10 000 000: looping the experts of every layer anyway took 0.17 s a layer (11 s for 64
// layers).
TEST(HfWeights, ExpertCountLoopsOnlyWhereALayerHasStacks) {
  constexpr std::uint32_t kLayers = 4096;
  GgufFile f = tiny_decoder("dots1", kLayers);
  add(f, "dots1.vocab_size", u32(10));
  add(f, "dots1.expert_count", u32(10'000'000));
  for (std::uint32_t n = 0; n < kLayers; ++n) {
    add_llama_attention(f, static_cast<int>(n));
    add_tensor(f, fmt::format("blk.{}.attn_q_norm.weight", n), {4});
    add_tensor(f, fmt::format("blk.{}.attn_k_norm.weight", n), {4});
    add_tensor(f, fmt::format("blk.{}.attn_norm.weight", n), {16});
    add_tensor(f, fmt::format("blk.{}.ffn_norm.weight", n), {16});
  }
  GgufFile dense = f;
  add(dense, "dots1.leading_dense_block_count", u32(kLayers));
  for (std::uint32_t n = 0; n < kLayers; ++n) {
    add_tensor(dense, fmt::format("blk.{}.ffn_gate.weight", n), {40, 16});
    add_tensor(dense, fmt::format("blk.{}.ffn_up.weight", n), {40, 16});
    add_tensor(dense, fmt::format("blk.{}.ffn_down.weight", n), {16, 40});
  }
  const HfWeightsResult r = hf_weight_map(dense);
  ASSERT_TRUE(r.weights.has_value()) << r.reason;
  ASSERT_EQ(r.weights->size(), kLayers * 11);
  EXPECT_EQ(r.weights->back().hf_name, "model.layers.4095.post_attention_layernorm.weight");
  // The MoE in every layer (Dots1MoE: the stacks, the router, its correction bias, the shared
  // experts), under that expert_count: refused before any expert is emitted.
  for (std::uint32_t n = 0; n < kLayers; ++n) {
    add_tensor(f, fmt::format("blk.{}.ffn_gate_exps.weight", n), {4, 768, 16});
    add_tensor(f, fmt::format("blk.{}.ffn_up_exps.weight", n), {4, 768, 16});
    add_tensor(f, fmt::format("blk.{}.ffn_down_exps.weight", n), {4, 16, 768});
    add_tensor(f, fmt::format("blk.{}.ffn_gate_inp.weight", n), {4, 16});
    add_tensor(f, fmt::format("blk.{}.exp_probs_b.bias", n), {4});
    for (const char* p : {"gate", "up", "down"}) {
      add_tensor(f, fmt::format("blk.{}.ffn_{}_shexp.weight", n, p), {16, 16});
    }
  }
  expect_refused(f, "tensor 'blk.0.ffn_gate_exps.weight': fewer than the 10000000 experts");
}

// A two-layer GLM-5 (glm.py, GlmMoeDsaModel): hidden 16, 4 heads; MLA with LoRA ranks 8, a head's
// 2 nope and 4 rope dims, values of 4 (kv_b_proj as the converter splits it: attn_k_b per head
// transposed, attn_v_b); the DSA indexer's 2 heads of 4 in layer 0 only, the "full" layer
// (attention.indexer.types [true, false]); layer 0 dense, layer 1 two experts of 8 and one
// shared (modeling_glm_moe_dsa.py).
GgufFile tiny_glm_dsa() {
  GgufFile f = tiny_decoder("glm-dsa", 2);
  const std::string a = "glm-dsa.";
  add(f, a + "attention.q_lora_rank", u32(8));
  add(f, a + "attention.kv_lora_rank", u32(8));
  add(f, a + "rope.dimension_count", u32(4));
  add(f, a + "attention.key_length_mla", u32(6));
  add(f, a + "attention.value_length_mla", u32(4));
  add(f, a + "leading_dense_block_count", u32(1));
  add(f, a + "expert_count", u32(2));
  add(f, a + "expert_used_count", u32(1));
  add(f, a + "expert_feed_forward_length", u32(8));
  add(f, a + "expert_shared_count", u32(1));
  add(f, a + "attention.indexer.head_count", u32(2));
  add(f, a + "attention.indexer.key_length", u32(4));
  add(f, a + "attention.indexer.top_k", u32(2));
  add(f, a + "attention.indexer.types", arr(ValueType::kBool, {boolean(true), boolean(false)}));
  add(f, "tokenizer.ggml.tokens", arr(ValueType::kString, {str("a"), str("b"), str("c")}));
  add_tensor(f, "token_embd.weight", {3, 16});
  for (const int n : {0, 1}) {
    const std::string b = fmt::format("blk.{}.", n);
    add_tensor(f, b + "attn_q_a.weight", {8, 16});
    add_tensor(f, b + "attn_q_a_norm.weight", {8});
    add_tensor(f, b + "attn_q_b.weight", {24, 8});
    add_tensor(f, b + "attn_kv_a_mqa.weight", {12, 16});
    add_tensor(f, b + "attn_kv_a_norm.weight", {8});
    add_tensor(f, b + "attn_k_b.weight", {4, 8, 2});
    add_tensor(f, b + "attn_v_b.weight", {4, 4, 8});
    add_tensor(f, b + "attn_output.weight", {16, 16});
    add_tensor(f, b + "attn_norm.weight", {16});
    add_tensor(f, b + "ffn_norm.weight", {16});
  }
  add_tensor(f, "blk.0.indexer.attn_q_b.weight", {8, 8});
  add_tensor(f, "blk.0.indexer.attn_k.weight", {4, 16});
  add_tensor(f, "blk.0.indexer.k_norm.weight", {4});
  add_tensor(f, "blk.0.indexer.k_norm.bias", {4});
  add_tensor(f, "blk.0.indexer.proj.weight", {2, 16});
  add_tensor(f, "blk.0.ffn_gate.weight", {40, 16});
  add_tensor(f, "blk.0.ffn_up.weight", {40, 16});
  add_tensor(f, "blk.0.ffn_down.weight", {16, 40});
  add_tensor(f, "blk.1.ffn_gate_inp.weight", {2, 16});
  add_tensor(f, "blk.1.exp_probs_b.bias", {2});
  add_tensor(f, "blk.1.ffn_gate_exps.weight", {2, 8, 16});
  add_tensor(f, "blk.1.ffn_up_exps.weight", {2, 8, 16});
  add_tensor(f, "blk.1.ffn_down_exps.weight", {2, 16, 8});
  add_tensor(f, "blk.1.ffn_gate_shexp.weight", {8, 16});
  add_tensor(f, "blk.1.ffn_up_shexp.weight", {8, 16});
  add_tensor(f, "blk.1.ffn_down_shexp.weight", {16, 8});
  add_tensor(f, "output_norm.weight", {16});
  add_tensor(f, "output.weight", {3, 16});
  return f;
}

// GlmMoeDsaAttention builds the indexer in a "full" layer and none in a "shared" one: a file
// whose layers say otherwise is no such model, either way.
TEST(HfWeights, GlmDsaIndexerOnlyInItsFullLayers) {
  const HfWeightsResult r = hf_weight_map(tiny_glm_dsa());
  ASSERT_TRUE(r.weights.has_value()) << r.reason;
  EXPECT_TRUE(std::any_of(r.weights->begin(), r.weights->end(), [](const HfWeight& w) {
    return w.hf_name == "model.layers.0.self_attn.indexer.wq_b.weight";
  }));
  GgufFile shared_holds = tiny_glm_dsa();
  add_tensor(shared_holds, "blk.1.indexer.attn_q_b.weight", {8, 8});
  add_tensor(shared_holds, "blk.1.indexer.attn_k.weight", {4, 16});
  add_tensor(shared_holds, "blk.1.indexer.k_norm.weight", {4});
  add_tensor(shared_holds, "blk.1.indexer.k_norm.bias", {4});
  add_tensor(shared_holds, "blk.1.indexer.proj.weight", {2, 16});
  expect_refused(shared_holds,
                 "layer 1 of 2 holds 'blk.1.indexer.attn_q_b.weight', which "
                 "GlmMoeDsaForCausalLM builds only in 'full' layers of "
                 "indexer_types (this one is 'shared')");
  GgufFile full_lacks = tiny_glm_dsa();
  std::erase_if(full_lacks.tensors,
                [](const TensorInfo& t) { return t.name.starts_with("blk.0.indexer."); });
  expect_refused(full_lacks,
                 "layer 0 of 2 has no 'blk.0.indexer.attn_q_b.weight', which "
                 "GlmMoeDsaForCausalLM builds in every 'full' layer of indexer_types");
}

}  // namespace
}  // namespace ggufs
