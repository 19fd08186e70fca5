#include "hf_vision.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ggufs/error.h"
#include "ggufs/hf_weights.h"
#include "ggufs/names.h"
#include "hf_plan.h"

namespace ggufs {
namespace hf {
namespace {

using VS = VisionShape;

// SigLIP's vision tower (modeling_siglip.py, SiglipVisionTransformer; Idefics3's
// Idefics3VisionTransformer is the same), after the row's vision_prefix; the converter's names:
// gguf-py's tensor_mapping.py, V_ENC_*, V_POST_NORM.
constexpr VisionWeight kSiglipEmbeddings[] = {
    {"v.patch_embd.weight", "embeddings.patch_embedding.weight", VS::kPatchConv},
    {"v.patch_embd.bias", "embeddings.patch_embedding.bias", VS::kHidden},
    {"v.position_embd.weight", "embeddings.position_embedding.weight", VS::kPositions},
};

constexpr VisionWeight kSiglipLayer[] = {
    {"attn_q.weight", "self_attn.q_proj.weight", VS::kHiddenHidden},
    {"attn_q.bias", "self_attn.q_proj.bias", VS::kHidden},
    {"attn_k.weight", "self_attn.k_proj.weight", VS::kHiddenHidden},
    {"attn_k.bias", "self_attn.k_proj.bias", VS::kHidden},
    {"attn_v.weight", "self_attn.v_proj.weight", VS::kHiddenHidden},
    {"attn_v.bias", "self_attn.v_proj.bias", VS::kHidden},
    {"attn_out.weight", "self_attn.out_proj.weight", VS::kHiddenHidden},
    {"attn_out.bias", "self_attn.out_proj.bias", VS::kHidden},
    {"ln1.weight", "layer_norm1.weight", VS::kHidden},
    {"ln1.bias", "layer_norm1.bias", VS::kHidden},
    {"ln2.weight", "layer_norm2.weight", VS::kHidden},
    {"ln2.bias", "layer_norm2.bias", VS::kHidden},
    {"ffn_up.weight", "mlp.fc1.weight", VS::kFfHidden},
    {"ffn_up.bias", "mlp.fc1.bias", VS::kFf},
    {"ffn_down.weight", "mlp.fc2.weight", VS::kHiddenFf},
    {"ffn_down.bias", "mlp.fc2.bias", VS::kHidden},
};

constexpr VisionWeight kSiglipPost[] = {
    {"v.post_ln.weight", "post_layernorm.weight", VS::kHidden},
    {"v.post_ln.bias", "post_layernorm.bias", VS::kHidden},
};

// MmprojModel.set_gguf_parameters (conversion/base.py) and the families' layer norm eps.
constexpr ConfigKey kSiglipKeys[] = {
    {"embedding_length", "hidden_size"},
    {"feed_forward_length", "intermediate_size"},
    {"block_count", "num_hidden_layers"},
    {"attention.head_count", "num_attention_heads"},
    {"image_size", "image_size"},
    {"patch_size", "patch_size"},
    {"attention.layer_norm_epsilon", "layer_norm_eps", ValueKind::kNumber},
};

// Gemma 3's projector (modeling_gemma3.py, Gemma3MultiModalProjector): its input projection is
// a bare Parameter (H, T), which the converter renames "_weight" to ".weight" and stores F16
// (gemma.py, Gemma3VisionModel.filter_tensors, tensor_force_quant); its RMSNorm weight plus 1.
constexpr VisionWeight kGemma3Projector[] = {
    {"mm.input_projection.weight", "multi_modal_projector.mm_input_projection_weight",
     VS::kHiddenText},
    {"mm.soft_emb_norm.weight", "multi_modal_projector.mm_soft_emb_norm.weight", VS::kHidden, 1},
};

// Gemma 3's vision_config: SigLIP without its pooling head (configuration_gemma3.py's default
// SiglipVisionConfig has one; every Gemma 3 checkpoint says vision_use_head false).
constexpr ConfigConstant kGemma3VisionConstants[] = {{"vision_use_head", "false"}};

// Gemma3Config's token fields; the tokenizer's names (processing_gemma3.py, Gemma3Processor
// reads tokenizer.boi_token, image_token, eoi_token).
constexpr ImageToken kGemma3Tokens[] = {
    {"boi_token_index", "<start_of_image>", "boi_token"},
    {"eoi_token_index", "<end_of_image>", "eoi_token"},
    {"image_token_index", "<image_soft_token>", "image_token"},
};

// Gemma3ImageProcessor's saved fields (image_processing_gemma3.py) but size, image_mean and
// image_std, which the projector's keys give.
constexpr std::string_view kGemma3ImageProcessor = R"({
  "do_convert_rgb": true, "do_normalize": true, "do_pan_and_scan": null, "do_rescale": true,
  "do_resize": true, "image_processor_type": "Gemma3ImageProcessor",
  "pan_and_scan_max_num_crops": null, "pan_and_scan_min_crop_size": null,
  "pan_and_scan_min_ratio_to_activate": null, "resample": 2, "rescale_factor": 0.00392156862745098})";

// Idefics3's connector (modeling_idefics3.py, Idefics3Connector): pixel shuffle by scale_factor,
// then a Linear without bias (T, H·s²) (smolvlm.py: gguf-py's V_MM_... "mm.model.fc").
constexpr VisionWeight kIdefics3Projector[] = {
    {"mm.model.fc.weight", "model.connector.modality_projection.proj.weight",
     VS::kTextHiddenScaled},
};

// Idefics3Config's image token (processing_idefics3.py, Idefics3Processor, names "<image>" and
// its other tokens itself: no tokenizer field).
constexpr ImageToken kIdefics3Tokens[] = {{"image_token_id", "<image>", ""}};

// Idefics3ImageProcessor's saved fields (image_processing_idefics3.py) but size (the
// converter's clip.vision.preproc_image_size), max_image_size (the tower's image_size, as the
// Hub's SmolVLM and Idefics3 checkpoints have it), image_mean and image_std.
constexpr std::string_view kIdefics3ImageProcessor = R"({
  "do_convert_rgb": true, "do_image_splitting": true, "do_normalize": true, "do_pad": true,
  "do_rescale": true, "do_resize": true, "image_processor_type": "Idefics3ImageProcessor",
  "resample": 1,
  "rescale_factor": 0.00392156862745098})";

// Qwen2-VL's vision tower (modeling_qwen2_vl.py, Qwen2VisionTransformerPretrainedModel), after
// "visual."; the converter splits the Conv3d patch weight into its two frames and each fused qkv
// into thirds (qwenvl.py, Qwen2VLVisionModel.modify_tensors), which kConcatRows joins again.
constexpr VisionWeight kQwen2VLEmbeddings[] = {
    {"v.patch_embd.weight",
     "patch_embed.proj.weight",
     VS::kPatchConv3d,
     0,
     {"v.patch_embd.weight.1"},
     VS::kPatchConv},
};

constexpr VisionWeight kQwen2VLLayer[] = {
    {"ln1.weight", "norm1.weight", VS::kHidden},
    {"ln1.bias", "norm1.bias", VS::kHidden},
    {"ln2.weight", "norm2.weight", VS::kHidden},
    {"ln2.bias", "norm2.bias", VS::kHidden},
    {"attn_q.weight",
     "attn.qkv.weight",
     VS::kQkv,
     0,
     {"attn_k.weight", "attn_v.weight"},
     VS::kHiddenHidden},
    {"attn_q.bias", "attn.qkv.bias", VS::kQkvBias, 0, {"attn_k.bias", "attn_v.bias"}, VS::kHidden},
    {"attn_out.weight", "attn.proj.weight", VS::kHiddenHidden},
    {"attn_out.bias", "attn.proj.bias", VS::kHidden},
    {"ffn_up.weight", "mlp.fc1.weight", VS::kFfHidden},
    {"ffn_up.bias", "mlp.fc1.bias", VS::kFf},
    {"ffn_down.weight", "mlp.fc2.weight", VS::kHiddenFf},
    {"ffn_down.bias", "mlp.fc2.bias", VS::kHidden},
};

// The merger (PatchMerger): its LayerNorm ln_q (gguf-py's V_POST_NORM), then mlp.0 and mlp.2
// (V_MMPROJ, "mm.N") over s² patches concatenated.
constexpr VisionWeight kQwen2VLMergerNorm[] = {
    {"v.post_ln.weight", "merger.ln_q.weight", VS::kHidden},
    {"v.post_ln.bias", "merger.ln_q.bias", VS::kHidden},
};

constexpr VisionWeight kQwen2VLProjector[] = {
    {"mm.0.weight", "visual.merger.mlp.0.weight", VS::kScaledScaled},
    {"mm.0.bias", "visual.merger.mlp.0.bias", VS::kScaled},
    {"mm.2.weight", "visual.merger.mlp.2.weight", VS::kTextHiddenScaled},
    {"mm.2.bias", "visual.merger.mlp.2.bias", VS::kText},
};

// Qwen2VLVisionConfig's fields the converter writes (qwenvl.py renames them for
// MmprojModel.set_gguf_parameters: num_heads, depth, embed_dim; its hidden_size, the merger's
// output, as feed_forward_length). Not image_size (a constant 560 written for llama.cpp) nor the
// layer norm's eps (the text model's rms_norm_eps; the tower's LayerNorms use 1e-6).
constexpr ConfigKey kQwen2VLKeys[] = {
    {"embedding_length", "embed_dim"}, {"feed_forward_length", "hidden_size"},
    {"block_count", "depth"},          {"attention.head_count", "num_heads"},
    {"patch_size", "patch_size"},
};

// What the converter requires (temporal_patch_size 2: its assert) or the tensors fix (3
// channels); hidden_act: Qwen2-VL's tower is QuickGELU (every Qwen2-VL checkpoint's config).
constexpr ConfigConstant kQwen2VLVisionConstants[] = {
    {"hidden_act", "\"quick_gelu\""}, {"in_channels", "3"}, {"temporal_patch_size", "2"}};

// rope_scaling as the Hub's Qwen2-VL and Qwen2.5-VL configs write it (4.57's
// Qwen2VLTextConfig takes "mrope" for "default"; 5.x keeps it), with mrope_section.
constexpr std::string_view kQwen2VLRope = R"({"type": "mrope"})";

// Qwen2VLConfig's token fields; Qwen2VLProcessor names the image token itself
// (processing_qwen2_vl.py).
constexpr ImageToken kQwen2VLTokens[] = {
    {"image_token_id", "<|image_pad|>", ""},
    {"video_token_id", "<|video_pad|>", ""},
    {"vision_start_token_id", "<|vision_start|>", ""},
    {"vision_end_token_id", "<|vision_end|>", ""},
};

// Qwen2VLImageProcessor's saved fields (image_processing_qwen2_vl.py), which Qwen2.5-VL's and
// Qwen3-VL's processors take too, but patch_size, merge_size, image_mean and image_std;
// min_pixels and max_pixels (size's shortest_edge and longest_edge) are its defaults, 56·56 and
// 28·28·1280: no key carries them.
constexpr std::string_view kQwen2VLImageProcessor = R"({
  "do_convert_rgb": true, "do_normalize": true, "do_rescale": true, "do_resize": true,
  "image_processor_type": "Qwen2VLImageProcessor", "max_pixels": 1003520, "min_pixels": 3136,
  "resample": 3, "rescale_factor": 0.00392156862745098,
  "size": {"longest_edge": 1003520, "shortest_edge": 3136}, "temporal_patch_size": 2})";

// Qwen2.5-VL's tower (modeling_qwen2_5_vl.py, Qwen2_5_VisionTransformerPretrainedModel): as
// Qwen2-VL's, with RMSNorms (no bias) and a gated MLP with biases.
constexpr VisionWeight kQwen25VLLayer[] = {
    {"ln1.weight", "norm1.weight", VS::kHidden},
    {"ln2.weight", "norm2.weight", VS::kHidden},
    {"attn_q.weight",
     "attn.qkv.weight",
     VS::kQkv,
     0,
     {"attn_k.weight", "attn_v.weight"},
     VS::kHiddenHidden},
    {"attn_q.bias", "attn.qkv.bias", VS::kQkvBias, 0, {"attn_k.bias", "attn_v.bias"}, VS::kHidden},
    {"attn_out.weight", "attn.proj.weight", VS::kHiddenHidden},
    {"attn_out.bias", "attn.proj.bias", VS::kHidden},
    {"ffn_gate.weight", "mlp.gate_proj.weight", VS::kFfHidden},
    {"ffn_gate.bias", "mlp.gate_proj.bias", VS::kFf},
    {"ffn_up.weight", "mlp.up_proj.weight", VS::kFfHidden},
    {"ffn_up.bias", "mlp.up_proj.bias", VS::kFf},
    {"ffn_down.weight", "mlp.down_proj.weight", VS::kHiddenFf},
    {"ffn_down.bias", "mlp.down_proj.bias", VS::kHidden},
};

constexpr VisionWeight kQwen25VLMergerNorm[] = {
    {"v.post_ln.weight", "merger.ln_q.weight", VS::kHidden},
};

// Qwen2_5_VLVisionConfig's and Qwen3VLVisionConfig's fields the converter writes (qwenvl.py
// as they are; qwen3vl.py renames num_heads and depth for MmprojModel.set_gguf_parameters);
// out_hidden_size is the merger's output, the text model's width.
constexpr ConfigKey kQwen25VLKeys[] = {
    {"embedding_length", "hidden_size"},
    {"feed_forward_length", "intermediate_size"},
    {"block_count", "depth"},
    {"attention.head_count", "num_heads"},
    {"patch_size", "patch_size"},
    {"projection_dim", "out_hidden_size"},
};

// SiLU (qwenvl.py writes clip.use_silu for it); window_size and tokens_per_second are the
// class's defaults: no key carries them.
constexpr ConfigConstant kQwen25VLVisionConstants[] = {
    {"hidden_act", "\"silu\""}, {"in_channels", "3"}, {"temporal_patch_size", "2"}};

// Qwen3-VL's tower (modeling_qwen3_vl.py, Qwen3VLVisionModel), after "model.visual.": the
// Conv3d patch weight split in frames (with its bias), a position embedding interpolated to the
// image, q, k and v kept fused (gguf-py's V_ENC_ATTN_QKV), LayerNorms, an MLP of linear_fc1 and
// linear_fc2.
constexpr VisionWeight kQwen3VLEmbeddings[] = {
    {"v.patch_embd.weight",
     "patch_embed.proj.weight",
     VS::kPatchConv3d,
     0,
     {"v.patch_embd.weight.1"},
     VS::kPatchConv},
    {"v.patch_embd.bias", "patch_embed.proj.bias", VS::kHidden},
    {"v.position_embd.weight", "pos_embed.weight", VS::kPositions},
};

constexpr VisionWeight kQwen3VLLayer[] = {
    {"ln1.weight", "norm1.weight", VS::kHidden},
    {"ln1.bias", "norm1.bias", VS::kHidden},
    {"ln2.weight", "norm2.weight", VS::kHidden},
    {"ln2.bias", "norm2.bias", VS::kHidden},
    {"attn_qkv.weight", "attn.qkv.weight", VS::kQkv},
    {"attn_qkv.bias", "attn.qkv.bias", VS::kQkvBias},
    {"attn_out.weight", "attn.proj.weight", VS::kHiddenHidden},
    {"attn_out.bias", "attn.proj.bias", VS::kHidden},
    {"ffn_up.weight", "mlp.linear_fc1.weight", VS::kFfHidden},
    {"ffn_up.bias", "mlp.linear_fc1.bias", VS::kFf},
    {"ffn_down.weight", "mlp.linear_fc2.weight", VS::kHiddenFf},
    {"ffn_down.bias", "mlp.linear_fc2.bias", VS::kHidden},
};

// The merger (Qwen3VLVisionPatchMerger): a LayerNorm over H before the shuffle (V_POST_NORM),
// linear_fc1 and linear_fc2 (qwen3vl.py maps them to mm.0 and mm.2).
constexpr VisionWeight kQwen3VLMergerNorm[] = {
    {"v.post_ln.weight", "merger.norm.weight", VS::kHidden},
    {"v.post_ln.bias", "merger.norm.bias", VS::kHidden},
};

constexpr VisionWeight kQwen3VLProjector[] = {
    {"mm.0.weight", "model.visual.merger.linear_fc1.weight", VS::kScaledScaled},
    {"mm.0.bias", "model.visual.merger.linear_fc1.bias", VS::kScaled},
    {"mm.2.weight", "model.visual.merger.linear_fc2.weight", VS::kTextHiddenScaled},
    {"mm.2.bias", "model.visual.merger.linear_fc2.bias", VS::kText},
};

// A deepstack merger: the same, its LayerNorm after the shuffle (use_postshuffle_norm).
constexpr VisionWeight kQwen3VLDeepstack[] = {
    {"norm.weight", "norm.weight", VS::kScaled},
    {"norm.bias", "norm.bias", VS::kScaled},
    {"fc1.weight", "linear_fc1.weight", VS::kScaledScaled},
    {"fc1.bias", "linear_fc1.bias", VS::kScaled},
    {"fc2.weight", "linear_fc2.weight", VS::kTextHiddenScaled},
    {"fc2.bias", "linear_fc2.bias", VS::kText},
};

// GELU's tanh form (qwen3vl.py writes clip.use_gelu; every Qwen3-VL checkpoint's
// gelu_pytorch_tanh).
constexpr ConfigConstant kQwen3VLVisionConstants[] = {
    {"hidden_act", "\"gelu_pytorch_tanh\""}, {"in_channels", "3"}, {"temporal_patch_size", "2"}};

// rope_scaling as the Hub's Qwen3-VL configs write it (Qwen3VLTextConfig's interleaved M-RoPE).
constexpr std::string_view kQwen3VLRope = R"({"mrope_interleaved": true, "rope_type": "default"})";

// Mistral 3's vision tower, Pixtral's (modeling_pixtral.py, PixtralVisionModel), after
// "vision_tower.": a Conv2d patch embedding without bias, an RMSNorm before the layers, no
// position embedding (its 2-D RoPE), RMSNorms and a gated MLP without biases; q_proj and k_proj
// permuted by the converter for llama.cpp's RoPE (llava.py, LlavaVisionModel.modify_tensors).
constexpr VisionWeight kPixtralEmbeddings[] = {
    {"v.patch_embd.weight", "patch_conv.weight", VS::kPatchConv},
    {"v.pre_ln.weight", "ln_pre.weight", VS::kHidden},
};

constexpr VisionWeight kPixtralLayer[] = {
    {"ln1.weight", "attention_norm.weight", VS::kHidden},
    {"ln2.weight", "ffn_norm.weight", VS::kHidden},
    {.gguf = "attn_q.weight",
     .hf = "attention.q_proj.weight",
     .shape = VS::kHiddenHidden,
     .permuted = true},
    {.gguf = "attn_k.weight",
     .hf = "attention.k_proj.weight",
     .shape = VS::kHiddenHidden,
     .permuted = true},
    {"attn_v.weight", "attention.v_proj.weight", VS::kHiddenHidden},
    {"attn_out.weight", "attention.o_proj.weight", VS::kHiddenHidden},
    {"ffn_gate.weight", "feed_forward.gate_proj.weight", VS::kFfHidden},
    {"ffn_up.weight", "feed_forward.up_proj.weight", VS::kFfHidden},
    {"ffn_down.weight", "feed_forward.down_proj.weight", VS::kHiddenFf},
};

// Mistral3MultiModalProjector (modeling_mistral3.py): an RMSNorm over H, the patch merger's
// Linear (H, H·s²) over s × s patches, linear_1 and linear_2 (gguf-py's V_MM_INP_NORM,
// V_MM_PATCH_MERGER, V_MMPROJ).
constexpr VisionWeight kMistral3Projector[] = {
    {"mm.input_norm.weight", "multi_modal_projector.norm.weight", VS::kHidden},
    {"mm.patch_merger.weight", "multi_modal_projector.patch_merger.merging_layer.weight",
     VS::kHiddenScaled},
    {"mm.1.weight", "multi_modal_projector.linear_1.weight", VS::kTextHidden},
    {"mm.2.weight", "multi_modal_projector.linear_2.weight", VS::kTextText},
};

// Mistral3Config's multimodal_projector_bias (false in every Mistral 3 checkpoint and the
// class's default) is not rendered: a projector with the biases is refused.
constexpr VisionRefusal kMistral3Refusals[] = {
    {"mm.1.bias",
     "a projector with biases (multimodal_projector_bias), which hf/ does not render"}};

// The text embedding's [IMG_BREAK] row, which llava.py (LlavaVisionModel.modify_tensors) writes
// for llama.cpp's clip.cpp (its pixtral projector requires it); base.py's
// MmprojModel.filter_tensors drops the language model's tensors before it now, but every older
// Mistral 3 projector holds it. The text model holds the whole embedding.
constexpr std::string_view kPixtralLeftOut[] = {"v.token_embd.img_break"};

// PixtralVisionConfig's fields MmprojModel.set_gguf_parameters writes (it has no layer norm
// eps: modeling_pixtral.py's RMSNorms use 1e-5, which llava.py writes).
constexpr ConfigKey kPixtralKeys[] = {
    {"embedding_length", "hidden_size"},  {"feed_forward_length", "intermediate_size"},
    {"block_count", "num_hidden_layers"}, {"attention.head_count", "num_attention_heads"},
    {"image_size", "image_size"},         {"patch_size", "patch_size"},
};

// Mistral3Config's image token; PixtralProcessor's other two (processing_pixtral.py) must be in
// the vocabulary too.
constexpr ImageToken kPixtralTokens[] = {
    {"image_token_index", "[IMG]", ""}, {"", "[IMG_BREAK]", ""}, {"", "[IMG_END]", ""}};

// PixtralImageProcessor's saved fields (image_processing_pixtral.py) but size, patch_size,
// image_mean and image_std.
constexpr std::string_view kPixtralImageProcessor = R"({
  "do_convert_rgb": true, "do_normalize": true, "do_rescale": true, "do_resize": true,
  "image_processor_type": "PixtralImageProcessor", "resample": 3,
  "rescale_factor": 0.00392156862745098})";

// PixtralProcessor's token fields (its defaults, as the Hub's Mistral 3 processors save them).
constexpr std::string_view kPixtralProcessor =
    R"({"image_break_token": "[IMG_BREAK]", "image_end_token": "[IMG_END]", "image_token": "[IMG]"})";

// InternVL's vision tower, InternViT (modeling_internvl.py, InternVLVisionModel), after
// "model.vision_tower.": a class token, a Conv2d patch embedding, a position embedding of the
// class token and the patches; layers of LayerNorms, biased q, k and v, the layer scales lambda_1
// and lambda_2 (gguf-py's V_ENC_ATTN_*, V_LAYER_SCALE_*), an MLP of fc1 and fc2. The converter
// (internvl.py, InternVisionModel) reads these names as Intern-S1's checkpoints have them.
constexpr VisionWeight kInternVLEmbeddings[] = {
    {"v.class_embd", "embeddings.cls_token", VS::kClassToken},
    {"v.patch_embd.weight", "embeddings.patch_embeddings.projection.weight", VS::kPatchConv},
    {"v.patch_embd.bias", "embeddings.patch_embeddings.projection.bias", VS::kHidden},
    {"v.position_embd.weight", "embeddings.position_embeddings", VS::kPositionsClass},
};

constexpr VisionWeight kInternVLLayer[] = {
    {"attn_q.weight", "attention.q_proj.weight", VS::kHiddenHidden},
    {"attn_q.bias", "attention.q_proj.bias", VS::kHidden},
    {"attn_k.weight", "attention.k_proj.weight", VS::kHiddenHidden},
    {"attn_k.bias", "attention.k_proj.bias", VS::kHidden},
    {"attn_v.weight", "attention.v_proj.weight", VS::kHiddenHidden},
    {"attn_v.bias", "attention.v_proj.bias", VS::kHidden},
    {"attn_out.weight", "attention.projection_layer.weight", VS::kHiddenHidden},
    {"attn_out.bias", "attention.projection_layer.bias", VS::kHidden},
    {"ls1.weight", "lambda_1", VS::kHidden},
    {"ls2.weight", "lambda_2", VS::kHidden},
    {"ln1.weight", "layernorm_before.weight", VS::kHidden},
    {"ln1.bias", "layernorm_before.bias", VS::kHidden},
    {"ln2.weight", "layernorm_after.weight", VS::kHidden},
    {"ln2.bias", "layernorm_after.bias", VS::kHidden},
    {"ffn_up.weight", "mlp.fc1.weight", VS::kFfHidden},
    {"ffn_up.bias", "mlp.fc1.bias", VS::kFf},
    {"ffn_down.weight", "mlp.fc2.weight", VS::kHiddenFf},
    {"ffn_down.bias", "mlp.fc2.bias", VS::kHidden},
};

// InternVLMultiModalProjector: a LayerNorm over the H·s² channels of s × s patches, linear_1 and
// linear_2 (internvl.py maps them to the remote code's mlp1.0, mlp1.1 and mlp1.3: gguf-py's
// "mm.model.mlp.N").
constexpr VisionWeight kInternVLProjector[] = {
    {"mm.model.mlp.0.weight", "model.multi_modal_projector.layer_norm.weight", VS::kScaled},
    {"mm.model.mlp.0.bias", "model.multi_modal_projector.layer_norm.bias", VS::kScaled},
    {"mm.model.mlp.1.weight", "model.multi_modal_projector.linear_1.weight", VS::kTextHiddenScaled},
    {"mm.model.mlp.1.bias", "model.multi_modal_projector.linear_1.bias", VS::kText},
    {"mm.model.mlp.3.weight", "model.multi_modal_projector.linear_2.weight", VS::kTextText},
    {"mm.model.mlp.3.bias", "model.multi_modal_projector.linear_2.bias", VS::kText},
};

// InternViT-300M's form, which the row's tensors are (biased q, k and v; LayerNorms); the 6B
// tower's q/k norms are refused.
constexpr ConfigConstant kInternVLVisionConstants[] = {
    {"attention_bias", "true"}, {"norm_type", R"("layer_norm")"}, {"use_qk_norm", "false"}};

constexpr VisionRefusal kInternVLRefusals[] = {
    {"v.blk.0.attn_q_norm.weight",
     "q/k norms (use_qk_norm: InternViT-6B), which hf/ does not render"}};

// InternVLConfig's image token; InternVLProcessor reads the tokenizer's start_image_token,
// end_image_token, context_image_token and video_token (processing_internvl.py).
constexpr ImageToken kInternVLTokens[] = {
    {"image_token_id", "<IMG_CONTEXT>", "context_image_token"},
    {"", "<img>", "start_image_token"},
    {"", "</img>", "end_image_token"},
    {"", "<video>", "video_token"},
};

// GotOcr2ImageProcessor's saved fields (image_processing_got_ocr2.py) but size, image_mean and
// image_std: tiling on (crop_to_patches), of 1 to 12 tiles, as the Hub's InternVL checkpoints
// have it (the class's default is off; no key carries it).
constexpr std::string_view kInternVLImageProcessor = R"({
  "crop_to_patches": true, "do_convert_rgb": true, "do_normalize": true, "do_rescale": true,
  "do_resize": true, "image_processor_type": "GotOcr2ImageProcessor", "max_patches": 12,
  "min_patches": 1, "resample": 3, "rescale_factor": 0.00392156862745098})";

// Mistral Small 3.x (Mistral3ForConditionalGeneration of a mistral text model).
constexpr VisionArchitecture kMistral3 = {
    .projector_type = "pixtral",
    .text_model_type = "mistral",
    .text_gguf_arch = "mistral3",
    .model_type = "mistral3",
    .class_name = "Mistral3ForConditionalGeneration",
    .vision_model_type = "pixtral",
    .vision_keys = kPixtralKeys,
    .image_tokens = kPixtralTokens,
    .text_prefix = "language_model.model.",
    .lm_head_prefix = "language_model.lm_head.",
    .vision_prefix = "vision_tower.",
    .before = kPixtralEmbeddings,
    .layer = kPixtralLayer,
    .projector = kMistral3Projector,
    .layer_path = "transformer.layers.",
    // Mistral3Config's spatial_merge_size (its default 2 where llava.py found none to write)
    .scale_default = 2,
    .scale_field = "spatial_merge_size",
    .scale_key = "spatial_merge_size",
    .activation_field = "hidden_act",
    .processor_json = kPixtralProcessor,
    .processor_patch_field = "patch_size",
    .processor_scale_field = "spatial_merge_size",
    .refusals = kMistral3Refusals,
    .left_out = kPixtralLeftOut,
    .tie_at_top = true,
    .image_processor_json = kPixtralImageProcessor,
    .image_size = ImageSizeForm::kLongestEdgePatches,
    .processor_class = "PixtralProcessor"};

// InternVL 2.5 / 3 (InternViT-300M, a Qwen2 text model).
constexpr VisionArchitecture kInternVL = {
    .projector_type = "internvl",
    .text_model_type = "qwen2",
    .model_type = "internvl",
    .class_name = "InternVLForConditionalGeneration",
    .vision_model_type = "internvl_vision",
    // InternVLVisionConfig's fields are SigLIP's names; image_size and patch_size lists
    .vision_keys = kSiglipKeys,
    .vision_constants = kInternVLVisionConstants,
    .image_tokens = kInternVLTokens,
    .text_prefix = "model.language_model.",
    .lm_head_prefix = "lm_head.",
    .vision_prefix = "model.vision_tower.",
    .before = kInternVLEmbeddings,
    .layer = kInternVLLayer,
    .projector = kInternVLProjector,
    .layer_path = "encoder.layer.",
    // internvl.py always writes it
    .scale_default = 2,
    .activation_field = "hidden_act",
    .refusals = kInternVLRefusals,
    .tie_at_top = true,
    .sizes_as_pairs = true,
    .ratio_field = "downsample_ratio",
    .min_tiles_field = "min_patches",
    .max_tiles_field = "max_patches",
    .tokens_per_image = "image_seq_length",
    .seq_len_field = "image_seq_length",
    .image_processor_json = kInternVLImageProcessor,
    .image_size = ImageSizeForm::kHeightWidth,
    .processor_class = "InternVLProcessor"};

// `row` beside a text model of another type.
constexpr VisionArchitecture with_text_model(VisionArchitecture row, std::string_view type) {
  row.text_model_type = type;
  return row;
}

constexpr VisionArchitecture kVisionRows[] = {
    {.projector_type = "gemma3",
     .text_model_type = "gemma3_text",
     .model_type = "gemma3",
     .class_name = "Gemma3ForConditionalGeneration",
     .vision_model_type = "siglip_vision_model",
     .vision_keys = kSiglipKeys,
     .vision_constants = kGemma3VisionConstants,
     .image_tokens = kGemma3Tokens,
     .text_prefix = "language_model.model.",
     .lm_head_prefix = "language_model.lm_head.",
     .vision_prefix = "vision_tower.vision_model.",
     .before = kSiglipEmbeddings,
     .layer = kSiglipLayer,
     .after = kSiglipPost,
     .projector = kGemma3Projector,
     .scale_default = 4,
     .tokens_per_image = "mm_tokens_per_image",
     .seq_len_field = "image_seq_length",
     .image_processor_json = kGemma3ImageProcessor,
     .image_size = ImageSizeForm::kHeightWidth,
     .processor_class = "Gemma3Processor"},
    {.projector_type = "idefics3",
     .text_model_type = "llama",
     .model_type = "idefics3",
     .class_name = "Idefics3ForConditionalGeneration",
     .vision_model_type = "idefics3_vision",
     .vision_keys = kSiglipKeys,
     .image_tokens = kIdefics3Tokens,
     .text_prefix = "model.text_model.",
     .lm_head_prefix = "lm_head.",
     .vision_prefix = "model.vision_model.",
     .before = kSiglipEmbeddings,
     .layer = kSiglipLayer,
     .after = kSiglipPost,
     .projector = kIdefics3Projector,
     .scale_default = 2,
     .scale_field = "scale_factor",
     .seq_len_field = "image_seq_len",
     .image_processor_json = kIdefics3ImageProcessor,
     .image_size = ImageSizeForm::kLongestEdge,
     .processor_class = "Idefics3Processor"},
    {.projector_type = "qwen2vl_merger",
     .text_model_type = "qwen2",
     .text_gguf_arch = "qwen2vl",
     .text_config_type = "qwen2_vl_text",
     .mrope_key = "rope.dimension_sections",
     .mrope_json = kQwen2VLRope,
     .model_type = "qwen2_vl",
     .class_name = "Qwen2VLForConditionalGeneration",
     .vision_model_type = "qwen2_vl",
     .vision_keys = kQwen2VLKeys,
     .vision_constants = kQwen2VLVisionConstants,
     .image_tokens = kQwen2VLTokens,
     .text_prefix = "model.",
     .lm_head_prefix = "lm_head.",
     .vision_prefix = "visual.",
     .before = kQwen2VLEmbeddings,
     .layer = kQwen2VLLayer,
     .after = kQwen2VLMergerNorm,
     .projector = kQwen2VLProjector,
     .layer_path = "blocks.",
     .ff_ratio_field = "mlp_ratio",
     .merge_field = "spatial_merge_size",
     .image_processor_json = kQwen2VLImageProcessor,
     .tokenizer_class = "Qwen2Tokenizer",
     .tokenizer_pre = "qwen2",
     .image_size = ImageSizeForm::kPixels,
     .processor_class = "Qwen2VLProcessor"},
    {.projector_type = "qwen2.5vl_merger",
     .text_model_type = "qwen2",
     .text_gguf_arch = "qwen2vl",
     .text_config_type = "qwen2_5_vl_text",
     .mrope_key = "rope.dimension_sections",
     .mrope_json = kQwen2VLRope,
     .model_type = "qwen2_5_vl",
     .class_name = "Qwen2_5_VLForConditionalGeneration",
     .vision_model_type = "qwen2_5_vl",
     .vision_keys = kQwen25VLKeys,
     .vision_constants = kQwen25VLVisionConstants,
     .image_tokens = kQwen2VLTokens,
     .text_prefix = "model.",
     .lm_head_prefix = "lm_head.",
     .vision_prefix = "visual.",
     .before = kQwen2VLEmbeddings,
     .layer = kQwen25VLLayer,
     .after = kQwen25VLMergerNorm,
     .projector = kQwen2VLProjector,
     .layer_path = "blocks.",
     .merge_field = "spatial_merge_size",
     .window_field = "fullatt_block_indexes",
     .image_processor_json = kQwen2VLImageProcessor,
     .tokenizer_class = "Qwen2Tokenizer",
     .tokenizer_pre = "qwen2",
     .image_size = ImageSizeForm::kPixels,
     .processor_class = "Qwen2_5_VLProcessor"},
    {.projector_type = "qwen3vl_merger",
     .text_model_type = "qwen3",
     .text_gguf_arch = "qwen3vl",
     .text_config_type = "qwen3_vl_text",
     .mrope_key = "rope.dimension_sections",
     .mrope_json = kQwen3VLRope,
     .model_type = "qwen3_vl",
     .class_name = "Qwen3VLForConditionalGeneration",
     .vision_model_type = "qwen3_vl",
     .vision_keys = kQwen25VLKeys,
     .vision_constants = kQwen3VLVisionConstants,
     .image_tokens = kQwen2VLTokens,
     .text_prefix = "model.language_model.",
     .lm_head_prefix = "lm_head.",
     .vision_prefix = "model.visual.",
     .before = kQwen3VLEmbeddings,
     .layer = kQwen3VLLayer,
     .after = kQwen3VLMergerNorm,
     .projector = kQwen3VLProjector,
     .layer_path = "blocks.",
     .merge_field = "spatial_merge_size",
     .positions_field = "num_position_embeddings",
     .deepstack = kQwen3VLDeepstack,
     .deepstack_path = "deepstack_merger_list.",
     .deepstack_field = "deepstack_visual_indexes",
     .image_processor_json = kQwen2VLImageProcessor,
     .tokenizer_class = "Qwen2Tokenizer",
     .tokenizer_pre = "qwen2",
     .image_size = ImageSizeForm::kPixels,
     .processor_class = "Qwen3VLProcessor"},
    kMistral3,
    // Ministral 3's vision-language models (Ministral-3-*-2512): the same projector beside a
    // ministral3 text model (transformers 5 only).
    with_text_model(kMistral3, "ministral3"),
    kInternVL,
    // InternVL 3.5: the same projector beside a Qwen3 text model
    with_text_model(kInternVL, "qwen3"),
};

}  // namespace

std::span<const VisionArchitecture> vision_architectures() { return kVisionRows; }

}  // namespace hf

namespace {

using hf::numpy_shape;
using hf::shape_text;
using hf::VisionArchitecture;
using hf::VisionShape;
using hf::VisionWeight;
using nlohmann::json;

// Bounds that keep a hostile projector's work linear in its bytes: no real tower has more
// layers or larger images (SigLIP so400m: 27 layers; Qwen2-VL's 14-pixel patches of 4K frames).
constexpr std::uint64_t kMaxVisionLayers = 4096;
constexpr std::uint64_t kMaxImageSize = 1 << 16;

HfModelResult refuse(std::string reason) { return {std::nullopt, std::move(reason)}; }

std::optional<std::uint64_t> positive(const Value* v) {
  if (!v) return std::nullopt;
  if (const auto* u = std::get_if<std::uint64_t>(&v->data); u && *u > 0) return *u;
  if (const auto* i = std::get_if<std::int64_t>(&v->data); i && *i > 0) {
    return static_cast<std::uint64_t>(*i);
  }
  return std::nullopt;
}

// A float32 (or float64) key's value as config.json holds it: float32 as its shortest decimal.
std::optional<double> finite_number(const Value* v) {
  if (!v) return std::nullopt;
  double d = 0;
  if (const auto* f = std::get_if<float>(&v->data)) {
    d = hf::shortest_decimal(*f);
  } else if (const auto* g = std::get_if<double>(&v->data)) {
    d = *g;
  } else {
    return std::nullopt;
  }
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

// clip.vision.image_mean / image_std: three float32 values (RGB).
std::optional<json> channel_floats(const Value* v) {
  const auto* a = v ? std::get_if<Array>(&v->data) : nullptr;
  if (!a || a->elem_type() != ValueType::kFloat32 || a->size() != 3) return std::nullopt;
  json out = json::array();
  for (std::size_t i = 0; i < 3; ++i) {
    const Value e = a->at(i);
    const auto d = finite_number(&e);
    if (!d) return std::nullopt;
    out.push_back(*d);
  }
  return out;
}

// The vision tower's dimensions (VisionShape), in elements.
struct VisionDims {
  std::uint64_t hidden = 0, ff = 0, patch = 0, positions = 0, text = 0, layers = 0, scale = 0;
  std::uint64_t heads = 0;
  std::uint64_t ff_key = 0;  // clip.vision.feed_forward_length as written
};

// The torch shape the class gives a parameter of shape `s`.
std::vector<std::uint64_t> shape_of(VisionShape s, const VisionDims& d) {
  switch (s) {
    case VisionShape::kPatchConv:
      return {d.hidden, 3, d.patch, d.patch};
    case VisionShape::kPatchConv3d:
      return {d.hidden, 3, 2, d.patch, d.patch};
    case VisionShape::kPositions:
      return {d.positions, d.hidden};
    case VisionShape::kClassToken:
      return {1, 1, d.hidden};
    case VisionShape::kPositionsClass: {
      const hf::Size rows = hf::sum(d.positions, 1);
      if (!rows) return {};
      return {1, *rows, d.hidden};
    }
    case VisionShape::kHidden:
      return {d.hidden};
    case VisionShape::kHiddenHidden:
      return {d.hidden, d.hidden};
    case VisionShape::kQkv:
    case VisionShape::kQkvBias: {
      const hf::Size rows = hf::mul(d.hidden, 3);
      if (!rows) return {};
      if (s == VisionShape::kQkvBias) return {*rows};
      return {*rows, d.hidden};
    }
    case VisionShape::kFfHidden:
      return {d.ff, d.hidden};
    case VisionShape::kHiddenFf:
      return {d.hidden, d.ff};
    case VisionShape::kFf:
      return {d.ff};
    case VisionShape::kHiddenText:
      return {d.hidden, d.text};
    case VisionShape::kTextHiddenScaled:
    case VisionShape::kScaled:
    case VisionShape::kScaledScaled:
    case VisionShape::kHiddenScaled: {
      const hf::Size in = hf::mul(hf::mul(d.hidden, d.scale), d.scale);
      if (!in) return {};  // overflows: no tensor has this shape
      if (s == VisionShape::kScaled) return {*in};
      if (s == VisionShape::kScaledScaled) return {*in, *in};
      if (s == VisionShape::kHiddenScaled) return {d.hidden, *in};
      return {d.text, *in};
    }
    case VisionShape::kTextHidden:
      return {d.text, d.hidden};
    case VisionShape::kTextText:
      return {d.text, d.text};
    case VisionShape::kText:
      return {d.text};
  }
  return {};
}

// What the projector adds to the text model: its config, weights and files.
struct Vision {
  const VisionArchitecture* row = nullptr;
  VisionDims d;
  json vision_config = json::object();
  json top = json::object();  // the image-token fields and tokens_per_image
  json preprocessor;
  std::uint64_t tokens_per_image = 0;
  json tokenizer_fields = json::object();
  std::vector<std::uint64_t> deepstack;  // the layers the deepstack mergers read
};

// The numpy shape of the projector's tensor `name`, or empty.
std::vector<std::uint64_t> tensor_shape(const GgufFile& projector, std::string_view name) {
  for (const TensorInfo& t : projector.tensors) {
    if (t.name == name) return numpy_shape(t);
  }
  return {};
}

// Where the row reads a dimension off a tensor (ff_ratio_field, merge_field): the field's value
// into vision_config and the dimension into `d`, or why there is none.
std::string tensor_dims(const GgufFile& projector, const VisionArchitecture& row, Vision& v) {
  if (!row.ff_ratio_field.empty()) {
    // mlp_hidden_dim = int(embed_dim * mlp_ratio) (modeling_qwen2_vl.py, Qwen2VLVisionBlock)
    const auto up = tensor_shape(projector, "v.blk.0.ffn_up.weight");
    if (up.size() != 2 || up[1] != v.d.hidden || up[0] == 0 || up[0] % v.d.hidden != 0) {
      return fmt::format(
          "the projector's v.blk.0.ffn_up.weight has shape {}, not a whole multiple of its "
          "embedding_length {} by it",
          shape_text(up), v.d.hidden);
    }
    v.d.ff = up[0];
    v.vision_config[std::string(row.ff_ratio_field)] = up[0] / v.d.hidden;
    // feed_forward_length is the merger's output (qwenvl.py): the text model's width
    if (v.d.ff_key != v.d.text) {
      return fmt::format(
          "the projector's clip.vision.feed_forward_length ({}), its merger's output, is not the "
          "model's hidden_size ({}): they are not one model",
          v.d.ff_key, v.d.text);
    }
  }
  if (!row.merge_field.empty()) {
    // PatchMerger: hidden_size = context_dim * spatial_merge_size**2
    const auto mm0 = tensor_shape(projector, "mm.0.weight");
    std::uint64_t s = 0;
    if (mm0.size() == 2 && mm0[0] == mm0[1] && mm0[0] % v.d.hidden == 0) {
      const std::uint64_t s2 = mm0[0] / v.d.hidden;
      // rows² elements fit in 64 bits (the parser), so rows < 2^32: under 2^16 steps
      while ((s + 1) * (s + 1) <= s2) ++s;
      if (s * s != s2) s = 0;
    }
    if (s == 0) {
      return fmt::format(
          "the projector's mm.0.weight has shape {}, not (H·s², H·s²) of its embedding_length "
          "H {}",
          shape_text(mm0), v.d.hidden);
    }
    v.d.scale = s;
    v.vision_config[std::string(row.merge_field)] = s;
  }
  return "";
}

// The layers whose output a deepstack merger reads (VisionArchitecture::deepstack): those
// clip.vision.is_deepstack_layers flags (qwen3vl.py: one bool a layer), into `v`.
std::string deepstack_layers(const GgufFile& projector, const VisionArchitecture& row, Vision& v) {
  if (row.deepstack.empty()) return "";
  const Value* flags = hf::find_key(projector, "clip.vision.is_deepstack_layers");
  const auto* a = flags ? std::get_if<Array>(&flags->data) : nullptr;
  if (!a || a->elem_type() != ValueType::kBool || a->size() != v.d.layers) {
    return fmt::format(
        "the projector's clip.vision.is_deepstack_layers is not {} booleans, one a layer",
        v.d.layers);
  }
  json indexes = json::array();
  for (std::size_t i = 0; i < a->size(); ++i) {
    const Value e = a->at(i);
    const auto* b = std::get_if<bool>(&e.data);
    if (b && *b) {
      v.deepstack.push_back(i);
      indexes.push_back(i);
    }
  }
  v.vision_config[std::string(row.deepstack_field)] = std::move(indexes);
  return "";
}

// The row, the vision_config and the dimensions from the projector's keys.
std::string read_keys(const GgufFile& paired, const GgufFile& projector, const json& text_config,
                      Vision& v) {
  const auto* type = hf::find_key(projector, "clip.projector_type");
  const auto* name = type ? std::get_if<std::string>(&type->data) : nullptr;
  if (!name) return "the projector has no clip.projector_type string";
  // Of the projector type's rows, the one of the text model's type (pixtral: Mistral Small 3's
  // and Ministral 3's), else its first, which then names what it pairs with.
  const std::string text_type = text_config.value("model_type", "");
  for (const VisionArchitecture& row : hf::vision_architectures()) {
    if (row.projector_type != *name) continue;
    if (!v.row || (v.row->text_model_type != text_type && row.text_model_type == text_type)) {
      v.row = &row;
    }
  }
  if (!v.row) {
    return fmt::format("the projector's clip.projector_type '{}' has no row", printable(*name));
  }
  const VisionArchitecture& row = *v.row;
  const Value* arch = hf::find_key(paired, "general.architecture");
  const auto* text_arch = arch ? std::get_if<std::string>(&arch->data) : nullptr;
  if (text_type != row.text_model_type ||
      (!row.text_gguf_arch.empty() && (!text_arch || *text_arch != row.text_gguf_arch))) {
    // Named by general.architecture where the row requires one and the file's is another, else
    // by the text model's model_type.
    const bool by_arch =
        !row.text_gguf_arch.empty() && (!text_arch || *text_arch != row.text_gguf_arch);
    return fmt::format(
        "a {} projector pairs with a {} model, not {}", row.projector_type,
        by_arch ? row.text_gguf_arch : row.text_model_type,
        by_arch ? (text_arch ? printable(*text_arch) : std::string("none")) : printable(text_type));
  }
  v.vision_config["model_type"] = row.vision_model_type;
  for (const hf::ConfigKey& k : row.vision_keys) {
    const std::string key = fmt::format("clip.vision.{}", k.gguf);
    const Value* value = hf::find_key(projector, key);
    if (k.kind == hf::ValueKind::kNumber) {
      const auto d = finite_number(value);
      if (!d) return fmt::format("the projector's {} is absent or not a finite number", key);
      v.vision_config[std::string(k.config)] = *d;
      continue;
    }
    const auto n = positive(value);
    if (!n) return fmt::format("the projector's {} is absent or not a positive integer", key);
    const bool pair = row.sizes_as_pairs && (k.gguf == "image_size" || k.gguf == "patch_size");
    v.vision_config[std::string(k.config)] = pair ? json::array({*n, *n}) : json(*n);
  }
  for (const hf::ConfigConstant& c : row.vision_constants) {
    v.vision_config[std::string(c.config)] = json::parse(c.json);
  }
  if (!row.activation_field.empty()) {
    const auto flag = [&](std::string_view key) {
      const Value* value = hf::find_key(projector, key);
      const auto* b = value ? std::get_if<bool>(&value->data) : nullptr;
      return b && *b;
    };
    const bool silu = flag("clip.use_silu"), gelu = flag("clip.use_gelu");
    if (silu == gelu) {
      return "the projector's tower is not one activation: clip.use_silu and clip.use_gelu are "
             "not one true and one absent or false";
    }
    v.vision_config[std::string(row.activation_field)] = silu ? "silu" : "gelu";
  }
  // The dimensions, from the keys every projector has (MmprojModel.set_gguf_parameters).
  std::uint64_t image = 0, heads = 0;
  for (auto [suffix, to] : {std::pair{"embedding_length", &v.d.hidden},
                            {"feed_forward_length", &v.d.ff_key},
                            {"patch_size", &v.d.patch},
                            {"block_count", &v.d.layers},
                            {"image_size", &image},
                            {"attention.head_count", &heads}}) {
    const std::string key = fmt::format("clip.vision.{}", suffix);
    const auto n = positive(hf::find_key(projector, key));
    if (!n) return fmt::format("the projector's {} is absent or not a positive integer", key);
    *to = *n;
  }
  v.d.ff = v.d.ff_key;
  v.d.heads = heads;
  if (v.d.layers > kMaxVisionLayers || image > kMaxImageSize || v.d.hidden % heads != 0) {
    return fmt::format(
        "the projector's vision tower ({} layers, images of {} pixels, {} heads "
        "of a width of {}) is none its class builds",
        v.d.layers, image, heads, v.d.hidden);
  }
  const auto projection = positive(hf::find_key(projector, "clip.vision.projection_dim"));
  v.d.text = text_config.value("hidden_size", std::uint64_t{0});
  if (!projection || *projection != v.d.text) {
    return fmt::format(
        "the projector's clip.vision.projection_dim ({}) is not the model's "
        "hidden_size ({}): they are not one model",
        projection ? fmt::format("{}", *projection) : std::string("absent"), v.d.text);
  }
  if (std::string why = tensor_dims(projector, row, v); !why.empty()) return why;
  if (!row.window_field.empty()) {
    const auto n = positive(hf::find_key(projector, "clip.vision.n_wa_pattern"));
    if (!n || *n > v.d.layers) {
      return "the projector's clip.vision.n_wa_pattern is absent, not a positive integer or "
             "above its block_count";
    }
    // n ≤ block_count ≤ kMaxVisionLayers: at most that many entries, and i + n never wraps
    json full = json::array();
    for (std::uint64_t i = *n - 1; i < v.d.layers; i += *n) full.push_back(i);
    v.vision_config[std::string(row.window_field)] = std::move(full);
  }
  // The position embedding's rows, where the tower has one (a dynamic resolution's image_size is
  // no dimension but for them: qwenvl.py writes 560 whatever it is; qwen3vl.py derives it from
  // num_position_embeddings).
  const bool positions =
      row.image_size != hf::ImageSizeForm::kPixels || !row.positions_field.empty();
  if (positions && image % v.d.patch != 0) {
    return fmt::format("the projector's image_size {} is not a multiple of its patch_size {}",
                       image, v.d.patch);
  }
  const std::uint64_t side = image / v.d.patch;
  const hf::Size rows = hf::mul(side, side);
  if (!rows) {
    return fmt::format("the projector's {} patches a side are more positions than 64 bits count",
                       side);
  }
  v.d.positions = *rows;
  if (!row.positions_field.empty())
    v.vision_config[std::string(row.positions_field)] = v.d.positions;
  if (std::string why = deepstack_layers(projector, row, v); !why.empty()) return why;
  // A tower of fixed-size images: the image tokens it makes.
  if (row.image_size != hf::ImageSizeForm::kPixels) {
    if (row.scale_default != 0) {
      const Value* scale_key =
          hf::find_key(projector, fmt::format("clip.vision.{}", row.scale_key));
      v.d.scale = scale_key ? positive(scale_key).value_or(0) : row.scale_default;
      if (v.d.scale == 0 || side % v.d.scale != 0) {
        return fmt::format("the projector's clip.vision.{} does not divide its {} patches a side",
                           row.scale_key, side);
      }
      // (side / s)² ≤ side², the positions' count: no overflow
      v.tokens_per_image = (side / v.d.scale) * (side / v.d.scale);
      if (!row.tokens_per_image.empty()) {
        v.top[std::string(row.tokens_per_image)] = v.tokens_per_image;
      }
      if (!row.scale_field.empty()) v.top[std::string(row.scale_field)] = v.d.scale;
      if (!row.ratio_field.empty()) {
        v.top[std::string(row.ratio_field)] = 1.0 / static_cast<double>(v.d.scale);
      }
    }
  }
  const auto mean = channel_floats(hf::find_key(projector, "clip.vision.image_mean"));
  const auto std_dev = channel_floats(hf::find_key(projector, "clip.vision.image_std"));
  if (!mean || !std_dev) {
    return "the projector's clip.vision.image_mean or image_std is not three finite float32s";
  }
  v.preprocessor = json::parse(row.image_processor_json);
  v.preprocessor["processor_class"] = row.processor_class;  // as the processor saves it
  v.preprocessor["image_mean"] = *mean;
  v.preprocessor["image_std"] = *std_dev;
  for (auto [field, key] : {std::pair{row.min_tiles_field, "clip.vision.preproc_min_tiles"},
                            std::pair{row.max_tiles_field, "clip.vision.preproc_max_tiles"}}) {
    if (field.empty() || !hf::find_key(projector, key)) continue;
    const auto n = positive(hf::find_key(projector, key));
    if (!n || *n > kMaxImageSize) {
      return fmt::format("the projector's {} is not a positive integer up to {}", key,
                         kMaxImageSize);
    }
    v.preprocessor[std::string(field)] = *n;
  }
  if (row.image_size == hf::ImageSizeForm::kHeightWidth) {
    v.preprocessor["size"] = {{"height", image}, {"width", image}};
    return "";
  }
  if (row.image_size == hf::ImageSizeForm::kPixels) {
    v.preprocessor["patch_size"] = v.d.patch;
    v.preprocessor["merge_size"] = v.d.scale;
    return "";
  }
  if (row.image_size == hf::ImageSizeForm::kLongestEdgePatches) {
    v.preprocessor["size"] = {{"longest_edge", image}};
    v.preprocessor["patch_size"] = {{"height", v.d.patch}, {"width", v.d.patch}};
    return "";
  }
  const auto edge = positive(hf::find_key(projector, "clip.vision.preproc_image_size"));
  if (!edge || *edge > kMaxImageSize) {
    return "the projector's clip.vision.preproc_image_size is absent or not a positive integer";
  }
  v.preprocessor["size"] = {{"longest_edge", *edge}};
  v.preprocessor["max_image_size"] = {{"longest_edge", image}};
  return "";
}

// The image tokens' ids, by their strings in the text model's vocabulary.
std::string image_tokens(const GgufFile& paired, Vision& v) {
  const Value* tokens = hf::find_key(paired, "tokenizer.ggml.tokens");
  const auto* a = tokens ? std::get_if<Array>(&tokens->data) : nullptr;
  if (!a || a->elem_type() != ValueType::kString) {
    return "the model has no tokenizer.ggml.tokens to find its image tokens in";
  }
  json extra = json::object();
  for (const hf::ImageToken& t : v.row->image_tokens) {
    std::optional<std::size_t> id;
    for (std::size_t i = 0; i < a->size() && !id; ++i) {
      if (a->string_at(i) == t.token) id = i;
    }
    if (!id) return fmt::format("the model's vocabulary has no image token '{}'", t.token);
    if (!t.config.empty()) v.top[std::string(t.config)] = *id;
    if (t.tokenizer_field.empty()) continue;
    extra[std::string(t.tokenizer_field)] = t.token;
    v.tokenizer_fields[std::string(t.tokenizer_field)] = t.token;
  }
  if (!extra.empty()) v.tokenizer_fields["extra_special_tokens"] = std::move(extra);
  if (!v.row->tokenizer_class.empty()) {
    const Value* pre = hf::find_key(paired, "tokenizer.ggml.pre");
    const auto* name = pre ? std::get_if<std::string>(&pre->data) : nullptr;
    if (!name || *name != v.row->tokenizer_pre) {
      return fmt::format("{} takes a {} tokenizer, and the model's tokenizer.ggml.pre is {}",
                         v.row->processor_class, v.row->tokenizer_pre,
                         name ? fmt::format("'{}'", printable(*name)) : std::string("absent"));
    }
    v.tokenizer_fields["tokenizer_class"] = v.row->tokenizer_class;
  }
  v.tokenizer_fields["processor_class"] = v.row->processor_class;
  return "";
}

// The tensors entry `e` was split into after its first (VisionWeight::parts), each of the
// first's shape, as `w`'s kConcatRows parts.
std::string add_parts(const GgufFile& paired, std::size_t first,
                      const std::map<std::string_view, std::size_t>& by_name, const Vision& v,
                      const VisionWeight& e, const std::string& gguf_prefix, HfWeight& w,
                      std::vector<bool>& used) {
  w.transform = HfTransform::kConcatRows;
  for (const std::string_view part : e.parts) {
    if (part.empty()) continue;
    const std::string gguf = gguf_prefix + std::string(part);
    const auto it = by_name.find(gguf);
    if (it == by_name.end()) {
      return fmt::format("the projector has no '{}', which {} builds", printable(gguf),
                         v.row->class_name);
    }
    const std::vector<std::uint64_t> shape = numpy_shape(paired.tensors[first + it->second]);
    if (shape != w.shape) {
      return fmt::format("the projector's '{}' has shape {}, not its first part's {}",
                         printable(gguf), shape_text(shape), shape_text(w.shape));
    }
    w.parts.push_back(first + it->second);
    used[it->second] = true;
  }
  return "";
}

// Appends the vision weights of `entries` (under `prefix`, each GGUF name after `gguf_prefix`).
std::string add_weights(const GgufFile& paired, std::size_t first,
                        const std::map<std::string_view, std::size_t>& by_name, const Vision& v,
                        std::span<const VisionWeight> entries, const std::string& prefix,
                        const std::string& gguf_prefix, std::vector<HfWeight>& out,
                        std::vector<bool>& used) {
  for (const VisionWeight& e : entries) {
    const std::string gguf = gguf_prefix + std::string(e.gguf);
    const auto it = by_name.find(gguf);
    if (it == by_name.end()) {
      return fmt::format("the projector has no '{}', which {} builds", printable(gguf),
                         v.row->class_name);
    }
    const TensorInfo& t = paired.tensors[first + it->second];
    HfWeight w;
    w.hf_name = prefix + std::string(e.hf);
    w.source = first + it->second;
    w.shape = numpy_shape(t);
    const std::vector<std::uint64_t> want = shape_of(e.shape, v.d);
    const std::vector<std::uint64_t> stored =
        e.parts[0].empty() ? want : shape_of(e.part_shape, v.d);
    if (w.shape != stored) {
      return fmt::format("the projector's '{}' has shape {}, the config gives {} {}",
                         printable(gguf), shape_text(w.shape), w.hf_name, shape_text(stored));
    }
    if (e.add != 0) {
      w.transform = HfTransform::kAddConstant;
      w.constant = -e.add;
    }
    if (e.permuted) {
      // LlamaModel.permute reshapes the rows as (heads, 2, rows / heads / 2)
      const hf::Size pair_rows = hf::mul(2, v.d.heads);  // 2 × 2⁶³ heads would wrap to 0
      if (!pair_rows || v.d.hidden % *pair_rows != 0) {
        return fmt::format(
            "the projector's '{}' has {} rows, not a whole number of pairs for each of its {} "
            "heads",
            printable(gguf), v.d.hidden, v.d.heads);
      }
      w.transform = HfTransform::kReversePermute;
      w.n_head = v.d.heads;
    }
    if (!e.parts[0].empty()) {
      if (std::string why = add_parts(paired, first, by_name, v, e, gguf_prefix, w, used);
          !why.empty()) {
        return why;
      }
      w.shape = want;
    }
    used[it->second] = true;
    out.push_back(std::move(w));
  }
  return "";
}

// The text model's weights under the checkpoint's names, then the vision tower's and the
// projector's; or why not. A projector is its tensors, as a text model is (hf_plan.cpp,
// index_tensors): one no weight reads (a layer past clip.vision.block_count, a bias or norm the
// class does not build, a deepstack merger of a layer clip.vision.is_deepstack_layers does not
// flag) is a model other than the one served, refused by name; only the row's left_out join
// `omitted`.
std::string weights(const GgufFile& paired, const GgufFile& projector, const HfModel& text,
                    const Vision& v, std::vector<HfWeight>& out,
                    std::vector<std::size_t>& omitted) {
  const VisionArchitecture& row = *v.row;
  for (HfWeight w : text.weights) {
    if (w.hf_name.starts_with("model.")) {
      w.hf_name = std::string(row.text_prefix) + w.hf_name.substr(6);
    } else if (w.hf_name.starts_with("lm_head.")) {
      w.hf_name = std::string(row.lm_head_prefix) + w.hf_name.substr(8);
    }
    out.push_back(std::move(w));
  }
  omitted = text.omitted;
  const std::size_t first = paired.tensors.size() - projector.tensors.size();
  std::map<std::string_view, std::size_t> by_name;
  for (std::size_t i = 0; i < projector.tensors.size(); ++i) {
    by_name.emplace(projector.tensors[i].name, i);
  }
  for (const hf::VisionRefusal& r : row.refusals) {
    if (by_name.contains(r.gguf)) return fmt::format("the projector has '{}': {}", r.gguf, r.why);
  }
  std::vector<bool> used(projector.tensors.size());
  const std::string tower(row.vision_prefix);
  std::string why = add_weights(paired, first, by_name, v, row.before, tower, "", out, used);
  for (std::uint64_t n = 0; why.empty() && n < v.d.layers; ++n) {
    why = add_weights(paired, first, by_name, v, row.layer,
                      fmt::format("{}{}{}.", tower, row.layer_path, n), fmt::format("v.blk.{}.", n),
                      out, used);
  }
  if (why.empty()) why = add_weights(paired, first, by_name, v, row.after, tower, "", out, used);
  for (std::size_t k = 0; why.empty() && k < v.deepstack.size(); ++k) {
    why = add_weights(paired, first, by_name, v, row.deepstack,
                      fmt::format("{}{}{}.", tower, row.deepstack_path, k),
                      fmt::format("v.deepstack.{}.", v.deepstack[k]), out, used);
  }
  if (why.empty()) why = add_weights(paired, first, by_name, v, row.projector, "", "", out, used);
  if (!why.empty()) return why;
  for (std::size_t i = 0; i < used.size(); ++i) {
    if (used[i]) continue;
    const std::string_view name = projector.tensors[i].name;
    if (std::find(row.left_out.begin(), row.left_out.end(), name) == row.left_out.end()) {
      return fmt::format("the projector's tensor '{}' is not part of the {} its keys describe",
                         printable(name), row.class_name);
    }
    omitted.push_back(first + i);
  }
  return "";
}

// text_config as the class's own text config has it: its model_type, and the M-RoPE sections of
// the text file as rope_scaling (VisionArchitecture::text_config_type, mrope_key); or why not.
std::string class_text_config(const GgufFile& paired, const VisionArchitecture& row, json& inner) {
  if (!row.text_config_type.empty()) inner["model_type"] = row.text_config_type;
  if (row.mrope_key.empty()) return "";
  const std::string key = fmt::format("{}.{}", row.text_gguf_arch, row.mrope_key);
  const Value* value = hf::find_key(paired, key);
  const auto* a = value ? std::get_if<Array>(&value->data) : nullptr;
  // base.py, TextModel.set_gguf_parameters: [t, h, w] padded with zeros to 4
  std::vector<std::uint64_t> sections;
  for (std::size_t i = 0; a && i < a->size() && i < 4; ++i) {
    const Value e = a->at(i);
    if (const auto* u = std::get_if<std::uint64_t>(&e.data)) sections.push_back(*u);
    if (const auto* n = std::get_if<std::int64_t>(&e.data); n && *n >= 0) {
      sections.push_back(static_cast<std::uint64_t>(*n));
    }
  }
  const std::uint64_t hidden = inner.value("hidden_size", std::uint64_t{0});
  const std::uint64_t heads = inner.value("num_attention_heads", std::uint64_t{0});
  const std::uint64_t head_dim = inner.value("head_dim", heads ? hidden / heads : 0);
  // apply_multimodal_rotary_pos_emb (modeling_qwen2_vl.py) splits head_dim into the sections
  // twice over; checked, as sections near 2⁶³ would wrap to any head size
  hf::Size rotated = 0;
  for (std::size_t i = 0; i < 3 && i < sections.size(); ++i) {
    rotated = hf::sum(rotated, hf::mul(2, sections[i]));
  }
  if (!a || a->size() != 4 || sections.size() != 4 || sections[3] != 0 || rotated != head_dim) {
    return fmt::format(
        "the model's {} is not three M-RoPE sections and a 0 that together rotate its head "
        "size ({})",
        key, head_dim);
  }
  json rope = json::parse(row.mrope_json);
  rope["mrope_section"] = {sections[0], sections[1], sections[2]};
  inner["rope_scaling"] = std::move(rope);
  return "";
}

HfModelResult vision_model(const GgufFile& paired, const GgufFile& projector, const HfModel& text) {
  // transformers reads the pair's two files with gguf-py: what it fails on, it fails on here.
  if (std::string why = hf::unreadable_file(projector); !why.empty()) {
    return refuse("the projector's " + why);
  }
  const json text_config = json::parse(text.config.config_json);
  Vision v;
  if (std::string why = read_keys(paired, projector, text_config, v); !why.empty()) {
    return refuse(why);
  }
  if (std::string why = image_tokens(paired, v); !why.empty()) return refuse(why);
  HfModel out;
  if (std::string why = weights(paired, projector, text, v, out.weights, out.omitted);
      !why.empty()) {
    return refuse(why);
  }
  const VisionArchitecture& row = *v.row;
  // The text model's config is text_config; the composite config holds the token ids and the
  // class (save_pretrained writes architectures at the top).
  json top = v.top;
  json inner = text_config;
  for (const char* field : {"architectures", "transformers_version", "dtype"}) inner.erase(field);
  if (std::string why = class_text_config(paired, row, inner); !why.empty()) return refuse(why);
  for (const char* field : {"bos_token_id", "eos_token_id", "pad_token_id"}) {
    if (inner.contains(field)) top[field] = inner[field];
  }
  if (row.tie_at_top) top["tie_word_embeddings"] = inner.value("tie_word_embeddings", true);
  top["model_type"] = row.model_type;
  top["architectures"] = json::array({std::string(row.class_name)});
  if (text_config.contains("transformers_version")) {
    top["transformers_version"] = text_config["transformers_version"];
  }
  if (text_config.contains("dtype")) top["dtype"] = text_config["dtype"];
  top["text_config"] = std::move(inner);
  top["vision_config"] = v.vision_config;
  const auto dump = [](const json& j) {
    return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  };
  out.config = text.config;
  out.config.config_json = dump(top);
  out.config.model_type = row.model_type;
  out.config.mlx_config_json.clear();
  out.config.mlx_absent = "mlx/ serves the text model alone";
  out.extra_files.emplace_back("preprocessor_config.json", dump(v.preprocessor));
  json processor = row.processor_json.empty() ? json::object() : json::parse(row.processor_json);
  processor["processor_class"] = row.processor_class;
  if (!row.seq_len_field.empty()) processor[std::string(row.seq_len_field)] = v.tokens_per_image;
  if (!row.processor_patch_field.empty()) {
    processor[std::string(row.processor_patch_field)] = v.d.patch;
  }
  if (!row.processor_scale_field.empty()) {
    processor[std::string(row.processor_scale_field)] = v.d.scale;
  }
  out.extra_files.emplace_back("processor_config.json", dump(processor));
  out.tokenizer_fields = v.tokenizer_fields.dump();
  return {std::move(out), ""};
}

}  // namespace

HfModelResult render_hf_vision(const GgufFile& paired, const GgufFile& projector,
                               const HfModel& text) {
  try {
    return vision_model(paired, projector, text);
  } catch (const std::exception& e) {  // bad_alloc: the daemon stays up (error.h)
    return refuse(not_enough_memory(e, "render its vision tower")
                      .value_or(fmt::format("no vision model: {}", e.what())));
  }
}

}  // namespace ggufs
