// The vision table of hf/: one row per vision-language family, the inverse of llama.cpp's
// mmproj converter (convert_hf_to_gguf.py --mmproj; conversion/base.py, MmprojModel, and the
// family's MmprojModel subclass): which clip.projector_type it wrote, which text row it pairs
// with, the vision config's keys, the image tokens, the vision tower's and projector's
// state_dict, and the processor files. hf_vision.cpp reads it; adding a family is adding a row
// (and a round-trip case in tests/python/test_hf_vision.py). Internal to the hf layer.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "hf_architectures.h"

namespace ggufs::hf {

/// The dimensions of a vision tower, from the projector's clip.vision.* keys (elements): H
/// embedding_length, F the feed-forward width (feed_forward_length, or the first layer's
/// ffn_up rows: VisionArchitecture::ff_ratio_field), p patch_size, P positions
/// ((image_size / p)²), C channels (3: RGB), T projection_dim (the text model's hidden size), s
/// the projector's scale (VisionArchitecture::scale_default, scale_key, merge_field).
enum class VisionShape : std::uint8_t {
  kPatchConv,       // (H, C, p, p): a Conv2d patch embedding
  kPatchConv3d,     // (H, C, 2, p, p): Qwen2-VL's Conv3d over two frames
  kPositions,       // (P, H)
  kClassToken,      // (1, 1, H): InternViT's cls_token
  kPositionsClass,  // (1, P + 1, H): InternViT's position embedding, the class token's first
  kHidden,          // (H)
  kHiddenHidden,
  kQkv,               // (3H, H): q, k and v fused
  kQkvBias,           // (3H)
  kFfHidden,          // (F, H)
  kHiddenFf,          // (H, F)
  kFf,                // (F)
  kHiddenText,        // (H, T): Gemma 3's mm_input_projection_weight
  kTextHiddenScaled,  // (T, H·s²), s the scale factor: Idefics3's connector after pixel shuffle
  kScaled,            // (H·s²): Qwen2-VL's merger, s² patches concatenated
  kScaledScaled,      // (H·s², H·s²)
  kHiddenScaled,      // (H, H·s²): Mistral 3's patch merger
  kTextHidden,        // (T, H)
  kTextText,          // (T, T)
  kText               // (T)
};

/// How preprocessor_config.json gives the image size: {"height", "width"} of image_size
/// (Gemma3ImageProcessor); {"longest_edge"} of clip.vision.preproc_image_size with
/// max_image_size {"longest_edge"} of image_size (Idefics3ImageProcessor); or the pixel bounds
/// of a dynamic resolution, which no key carries (Qwen2VLImageProcessor's defaults), with the
/// patch and merge sizes; or {"longest_edge"} of image_size with patch_size {"height",
/// "width"} (PixtralImageProcessor, whose longest edge is the tower's image_size in the Hub's
/// Pixtral and Mistral 3 checkpoints).
enum class ImageSizeForm : std::uint8_t {
  kHeightWidth,
  kLongestEdge,
  kPixels,
  kLongestEdgePatches
};

/// One state_dict parameter of the vision tower or the projector: the projector's GGUF tensor
/// (after "v.blk.N." for a layer's; gguf-py's tensor_mapping.py, the V_* and V_MM_* rows) and
/// its transformers 4.57 checkpoint name (after the layer prefix for a layer's; the names
/// save_pretrained writes, which the converter reads). `add`: the constant the converter added
/// (Gemma 3's mm_soft_emb_norm, gemma.py Gemma3VisionModel.modify_tensors: + 1), taken off.
/// `permuted`: rows the converter permuted for llama.cpp's RoPE with the tower's heads
/// (llava.py, LlavaVisionModel.modify_tensors: LlamaModel.permute of Pixtral's q_proj and
/// k_proj), un-permuted (kReversePermute).
struct VisionWeight {
  std::string_view gguf;
  std::string_view hf;
  VisionShape shape;
  float add = 0;
  /// The GGUF tensors after `gguf` that the converter split the parameter into, each of shape
  /// `part_shape` as `gguf` is, concatenated again (kConcatRows): Qwen2-VL's fused qkv split in
  /// three, its Conv3d patch weight in two frames (qwenvl.py, Qwen2VLVisionModel.modify_tensors).
  std::string_view parts[2] = {};
  VisionShape part_shape = VisionShape::kHidden;
  bool permuted = false;
};

/// A projector tensor whose presence means a config hf/ does not render (Mistral 3's
/// multimodal_projector_bias: mm.1.bias), refused with `why`.
struct VisionRefusal {
  std::string_view gguf;
  std::string_view why;
};

/// A config field that holds the id of an added token of the text model's vocabulary, found by
/// its string (the converter writes the token into tokenizer.ggml.tokens, not the id); no field
/// where the processor only needs the token in the vocabulary (PixtralProcessor's [IMG_BREAK]).
struct ImageToken {
  std::string_view config;
  std::string_view token;
  /// tokenizer_config.json's extra_special_tokens name; empty where the processor names the
  /// token itself
  std::string_view tokenizer_field;
};

/// One vision-language family.
struct VisionArchitecture {
  std::string_view projector_type;   ///< clip.projector_type as the converter writes it
  std::string_view text_model_type;  ///< model_type of the text row it pairs with
  /// The text file's general.architecture, where the family's converter writes its own
  /// (qwenvl.py, Qwen2VLModel: qwen2vl); empty: any of text_model_type's rows.
  std::string_view text_gguf_arch;
  /// text_config's model_type where the class's text config is not the text row's
  /// (Qwen2VLTextConfig's qwen2_vl_text), and the text file's key suffix of its M-RoPE sections
  /// (rope.dimension_sections, the converter's mrope_section padded to 4 with zeros), written
  /// as rope_scaling's mrope_section with the fields of `mrope_json` (JSON object text: the
  /// family's constant rope type, Qwen3-VL's mrope_interleaved), as the Hub's configs write it.
  std::string_view text_config_type, mrope_key, mrope_json;
  std::string_view model_type;  ///< config.json's model_type
  std::string_view class_name;  ///< config.json's architectures[0]
  std::string_view vision_model_type;
  /// clip.vision.<gguf> → vision_config.<config> (MmprojModel.set_gguf_parameters and the
  /// family's own); kCount integers, kNumber float32 as their shortest decimal.
  std::span<const ConfigKey> vision_keys;
  std::span<const ConfigConstant> vision_constants;
  std::span<const ImageToken> image_tokens;
  /// The text model's state_dict prefixes in the checkpoint: "model." → text_prefix,
  /// "lm_head." → lm_head_prefix (the class's _checkpoint_conversion_mapping inverted, as
  /// save_pretrained writes the names).
  std::string_view text_prefix, lm_head_prefix;
  /// The vision tower's prefix; `before` and `after` are its parameters around its layers (after
  /// it), `layer` a layer's (after it and "encoder.layers.N."), `projector` the projector's (whole
  /// names).
  std::string_view vision_prefix;
  std::span<const VisionWeight> before, layer, after, projector;
  /// A layer's prefix after vision_prefix, before its index: SigLIP's "encoder.layers.",
  /// Qwen2-VL's "blocks.".
  std::string_view layer_path = "encoder.layers.";
  /// Where the feed-forward width is written as its ratio to H (Qwen2VLVisionConfig's
  /// mlp_ratio): that field, the width read off v.blk.0.ffn_up.weight (the converter writes the
  /// config's hidden_size, the merger's output, as feed_forward_length: qwenvl.py).
  std::string_view ff_ratio_field;
  /// Where the scale is the merger's (Qwen2-VL's spatial_merge_size, which no key carries): that
  /// vision_config field, s read off mm.0.weight's (H·s², H·s²) shape.
  std::string_view merge_field;
  /// Where the position embedding's row count is a config field (Qwen3VLVisionConfig's
  /// num_position_embeddings): that field, (image_size / patch_size)².
  std::string_view positions_field;
  /// Qwen3-VL's deepstack mergers (modeling_qwen3_vl.py, deepstack_merger_list): the parameters
  /// of each (after "<vision_prefix><deepstack_path>K.", K its place among the layers
  /// clip.vision.is_deepstack_layers flags), from "v.deepstack.N." of the layer N it reads
  /// (qwen3vl.py names them by absolute layer), and the vision_config field listing those layers.
  std::span<const VisionWeight> deepstack;
  std::string_view deepstack_path, deepstack_field;
  /// Where the tower alternates window and full attention (Qwen2.5-VL's fullatt_block_indexes):
  /// that vision_config field, every layer i with (i + 1) % n == 0 for n clip.vision.n_wa_pattern
  /// (qwenvl.py writes n as the first index + 1 of evenly spaced ones; llama.cpp's clip.cpp
  /// takes the full-attention layers so).
  std::string_view window_field;
  /// The projector's pooling of patches (clip.vision.projector.scale_factor): its value where the
  /// key is absent (gemma.py writes it only where it is not 4; smolvlm.py always), 0 for none; and
  /// the config field holding it, where there is one (Idefics3Config's scale_factor).
  std::uint64_t scale_default = 0;
  std::string_view scale_field;
  /// The clip.vision key suffix of that scale (llava.py writes Mistral 3's spatial_merge_size
  /// as spatial_merge_size).
  std::string_view scale_key = "projector.scale_factor";
  /// Where the tower's activation is written as a flag (clip.use_silu, clip.use_gelu: llava.py
  /// raises for any other): the vision_config field, "silu" or "gelu".
  std::string_view activation_field;
  /// processor_config.json's constant fields (JSON object text: PixtralProcessor's image
  /// tokens), and the fields given the patch size and the scale (its patch_size and
  /// spatial_merge_size).
  std::string_view processor_json, processor_patch_field, processor_scale_field;
  std::span<const VisionRefusal> refusals;
  /// Projector tensors hf/ leaves out (listed as omitted), each a copy of what the text model
  /// holds: Mistral 3's v.token_embd.img_break. Any other tensor no weight reads refuses the
  /// pairing.
  std::span<const std::string_view> left_out;
  /// config.json's top-level tie_word_embeddings is the text model's (transformers 5's
  /// Mistral3Config and InternVLConfig default it to true, and the composite model ties its
  /// lm_head by it).
  bool tie_at_top = false;
  /// vision_config's image_size and patch_size as [n, n] (InternVLVisionConfig's lists;
  /// internvl.py takes their first).
  bool sizes_as_pairs = false;
  /// The config field holding 1 / the scale (InternVLConfig's downsample_ratio: internvl.py
  /// writes int(1.0 / downsample_ratio)).
  std::string_view ratio_field;
  /// preprocessor_config.json's fields of the tile counts (GotOcr2ImageProcessor's min_patches
  /// and max_patches), from clip.vision.preproc_min_tiles / preproc_max_tiles where written
  /// (internvl.py writes them from min_dynamic_patch and max_dynamic_patch, which only the
  /// remote-code configs have), else image_processor_json's.
  std::string_view min_tiles_field, max_tiles_field;
  /// The image tokens an image becomes, (image_size / patch_size / scale)²: the config field
  /// holding it where there is one (Gemma3Config's mm_tokens_per_image;
  /// modeling_gemma3.py, Gemma3MultiModalProjector pools by kernel_size = the scale), and
  /// processor_config.json's (Gemma3Processor's image_seq_length, Idefics3Processor's
  /// image_seq_len).
  std::string_view tokens_per_image, seq_len_field;
  /// preprocessor_config.json's constant fields (JSON object text), to which the row's image
  /// size, mean and std and the processor_class are added; processor_config.json's
  /// processor_class.
  std::string_view image_processor_json;
  /// tokenizer_config.json's tokenizer_class where the processor requires one (Qwen2VLProcessor's
  /// Qwen2Tokenizer: processing_qwen2_vl.py), given where the text file's tokenizer.ggml.pre is
  /// that tokenizer's pre-tokenizer `tokenizer_pre` (transformers 5 builds the class's own
  /// pipeline from the vocabulary and merges).
  std::string_view tokenizer_class, tokenizer_pre;
  ImageSizeForm image_size = ImageSizeForm::kHeightWidth;
  std::string_view processor_class;
};

/// Every row.
std::span<const VisionArchitecture> vision_architectures();

}  // namespace ggufs::hf
