"""The round trip of hf/ for vision-language models: a model llama.cpp's converter split into a
text GGUF and an mmproj GGUF must come back, through ggufs's hf/ folder of the pair, as that
same model, with its processor.

Per family (a row of FAMILIES): a tiny random model of transformers' own
...ForConditionalGeneration class (torch.manual_seed; every parameter perturbed), with a real
SentencePiece tokenizer trained offline (test_hf_roundtrip.py's trainer) holding the image tokens
as pieces of its model, and the family's real processor (its image processor with non-default mean and
std), is saved with save_pretrained; convert_hf_to_gguf.py converts that folder twice (--outtype
f32: the text model, and --mmproj); ggufs mounts the text GGUF with --mmproj, and from the
mount's hf/:

  state_dict   the same names and shapes as the original checkpoint's model.safetensors, bit
               for bit the reference values: the original's, taken through the files as the
               converter writes them (the row's `file`: a norm stored plus one, w + 1 - 1 in
               float32; a tensor the converter always stores F16, rounded to float16).
  processor    AutoProcessor's pixel_values and input_ids for an image and a text, equal to
               the original processor's.
  logits       for that input, torch.equal to the original model's, the original carrying the
               reference weights; and 20 greedy tokens, equal.
  config       every field of the original's config (text_config and vision_config field by
               field; floats as float32, the precision GGUF stores them in) equal in hf/'s.

Expected values come from the original model and llama.cpp's converter, never from ggufs.
Needs llama.cpp's source tree ($GGUFS_LLAMA_CPP, else /var/cache/ggufs-tests/llama.cpp),
sentencepiece and pillow; the tests skip with a message without them, and where transformers
lacks a family's class.
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")
pytest.importorskip("PIL", reason="pillow is not installed: the image processors need it")
from PIL import Image  # noqa: E402

import llama_converter  # noqa: E402
from safetensors.torch import load_file  # noqa: E402

from test_hf_roundtrip import (CONFIG_IGNORED, LLAMA_CPP, _bpe_from_llama_cpp,  # noqa: E402
                               _tok_class, _train_spm)

# CLIP's normalization (not Gemma 3's 0.5): the processor's mean and std must come from the file
CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
CLIP_STD = [0.26862954, 0.26130258, 0.27577711]


# The Hub's Qwen2-VL and Qwen2.5-VL checkpoints name the language model model. and the tower
# visual., which 4.57's save_pretrained writes and the converter maps (qwenvl.py); transformers 5
# saves both under model. (model.language_model., model.visual.), as Qwen3-VL's are named.
QWEN2_VL_NAMES = ((r"^model\.visual\.", "visual."), (r"^model\.language_model\.", "model."))


def _mistral3(text_config, requires=None):
    """The row of Mistral 3 (Mistral3ForConditionalGeneration), of the given text model."""
    return dict(
        cls="Mistral3ForConditionalGeneration",
        config_cls="Mistral3Config",
        requires=requires,
        tokenizer="spm-llama",
        # PixtralProcessor's own token strings (processing_pixtral.py)
        pieces=("[IMG]", "[IMG_BREAK]", "[IMG_END]"),
        token_fields={"image_token_index": "[IMG]"},
        config=dict(
            text_config=dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                             max_position_embeddings=512, rms_norm_eps=1e-5,
                             tie_word_embeddings=False, **text_config),
            # Pixtral's tower: 64-pixel images (the longest edge) of 8-pixel patches, merged
            # 2 by 2; SiLU, as Mistral Small 3.1's; three layers, as the converter's tensor map
            # needs one more than the projector's linear_2
            vision_config=dict(model_type="pixtral", hidden_size=32, intermediate_size=48,
                               num_hidden_layers=3, num_attention_heads=2, image_size=64,
                               patch_size=8, hidden_act="silu"),
            spatial_merge_size=2,
            # as the Hub's checkpoints are (transformers 5's Mistral3Config defaults it to true)
            tie_word_embeddings=False),
        processor=lambda tok: _pixtral_processor(tok),
        prompt="[IMG]Describe it.",
        file={},
        tower="vision_tower.",
        skip={"5": {check: (
            "transformers 5's PixtralProcessor needs torchvision (processing_pixtral.py imports "
            "image_processing_pixtral.py, which imports it), which the tests do not install")
            for check in ("processor", "logits")}},
    )


def _qwen_vl(cls, config_cls, processor_class, vision_config, text_config=None,
             hub_names=QWEN2_VL_NAMES, tower="visual."):
    """The row of a Qwen-VL family (Qwen2-VL, Qwen2.5-VL, Qwen3-VL): the same tokens and
    processor, their own tower, processor class and text model's extra fields."""
    return dict(
        cls=cls,
        config_cls=config_cls,
        # Qwen2's byte-level BPE (llama.cpp's ggml-vocab-qwen2.gguf, as test_hf_roundtrip.py's
        # qwen2 cases) with Qwen2-VL's added tokens
        tokenizer="qwen2",
        pieces=("<|vision_start|>", "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>",
                "<|video_pad|>"),
        token_fields={"image_token_id": "<|image_pad|>", "video_token_id": "<|video_pad|>",
                      "vision_start_token_id": "<|vision_start|>",
                      "vision_end_token_id": "<|vision_end|>"},
        config=dict(
            text_config=dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2,
                             max_position_embeddings=512, rms_norm_eps=1e-6,
                             **(text_config or dict(
                                 rope_scaling={"type": "mrope", "mrope_section": [2, 3, 3]}))),
            vision_config=vision_config),
        # the processor wants a video processor, which needs torchvision: the image processor
        # and the tokenizer are saved, and the processor is built from them (_qwen2vl_processor);
        # min_pixels and max_pixels are the class's (no key carries them)
        processor=lambda tok: transformers.Qwen2VLImageProcessor(
            patch_size=8, merge_size=2, image_mean=CLIP_MEAN, image_std=CLIP_STD),
        load_processor=lambda path: _qwen2vl_processor(path, processor_class),
        processor_class=processor_class,
        prompt="<|vision_start|><|image_pad|><|vision_end|>Describe it.",
        hub_names=hub_names,
        # the converter takes the class from architectures, which the Hub's configs have and
        # 4.57's save_pretrained leaves out
        hub_config=dict(architectures=[cls]),
        # the Hub's configs are flat: the config class gives text_config their token ids
        text_token_ids=True,
        file={},
        tower=tower,
    )


def _internvl(text_class, text_config):
    """InternVL's row beside a text model of `text_class` (`text_config` its text_config's
    own fields): Qwen2's for InternVL 2.5 / 3, Qwen3's for InternVL 3.5."""
    return dict(
        cls="InternVLForConditionalGeneration",
        config_cls="InternVLConfig",
        # InternVL3's language model is Qwen2.5's: Qwen2's byte-level BPE with InternVL's tokens
        tokenizer="qwen2",
        pieces=("<img>", "</img>", "<IMG_CONTEXT>", "<video>"),
        # the tokenizer's names InternVLProcessor reads (processing_internvl.py)
        image_tokens={"start_image_token": "<img>", "end_image_token": "</img>",
                      "context_image_token": "<IMG_CONTEXT>", "video_token": "<video>"},
        token_fields={"image_token_id": "<IMG_CONTEXT>"},
        config=dict(
            text_config=dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2,
                             max_position_embeddings=512, rms_norm_eps=1e-6,
                             tie_word_embeddings=False, **text_config),
            # InternViT-300M's form: 32-pixel tiles of 8-pixel patches (4 a side), shuffled by
            # 2 (downsample_ratio 0.5): 4 image tokens a tile; biased q, k, v; four layers, as
            # the converter's tensor map needs one more than the projector's mlp1.3
            vision_config=dict(hidden_size=32, intermediate_size=48, num_hidden_layers=4,
                               num_attention_heads=2, image_size=[32, 32], patch_size=[8, 8],
                               attention_bias=True),
            image_seq_length=4, downsample_ratio=0.5,
            # untied (transformers 5's InternVLConfig defaults it to true)
            tie_word_embeddings=False),
        # the converter takes the text and vision classes from the sub-configs
        # (conversion/base.py, get_model_architecture), as Intern-S1's configs name them
        hub_text_config=dict(architectures=[text_class]),
        hub_vision_config=dict(architectures=["InternVisionModel"]),
        # the checkpoint's names as the converter reads them (internvl.py,
        # InternVisionModel.filter_tensors: Intern-S1's) and transformers 5 saves them
        hub_names=((r"^language_model\.model\.", "model.language_model."),
                   (r"^language_model\.lm_head\.", "lm_head."),
                   (r"^vision_tower\.", "model.vision_tower."),
                   (r"^multi_modal_projector\.", "model.multi_modal_projector.")),
        # tiles of the tower's 32 pixels, as the Hub's InternVL processors (crop_to_patches);
        # the processor wants a video processor, which needs torchvision: the image processor
        # and the tokenizer are saved, and the processor is built from them
        processor=lambda tok: transformers.GotOcr2ImageProcessor(
            size={"height": 32, "width": 32}, crop_to_patches=True, image_mean=CLIP_MEAN,
            image_std=CLIP_STD),
        load_processor=lambda path: _internvl_processor(path),
        processor_class="InternVLProcessor",
        prompt="<IMG_CONTEXT>Describe it.",
        # text_config holds the token ids, as the Hub's InternVL configs' (Qwen2's) do
        text_token_ids=True,
        file={},
        tower="model.vision_tower.",
    )


# One row a family. cls, config_cls: transformers' classes; tokenizer: "spm-gemma", "spm-llama"
# or "qwen2"; pieces: the image tokens, pieces of its SentencePiece model (qwen2: added tokens);
# image_tokens: the
# tokenizer's extra_special_tokens; token_fields: config fields holding an image token's id, by
# the token; config: the config class's kwargs
# (text_config, vision_config, ...); processor(tokenizer): the family's real processor; prompt:
# the text the processor expands; load_processor(path): how the processor is loaded where
# AutoProcessor cannot (its class, processor_class, named in preprocessor_config.json);
# hub_names: (regular expression, replacement) taking the names save_pretrained writes to the
# Hub checkpoints' ones where they differ; hub_text_config, hub_config: text_config and top
# fields the Hub's configs have and save_pretrained leaves out; text_token_ids: text_config
# holds the token ids too; tower: the vision
# tower's state_dict prefix; xfail: {transformers major version: {check: why hf/ fails it}}
# (strict: a check that starts passing fails the suite); file: what the converter does to values, by a regular
# expression of the names: "plus_one" stores w + 1, "f16" stores float16 whatever --outtype says;
# skip: {transformers major version: {check: why it cannot run there}}; requires: a class its
# text model needs (where transformers lacks it, the family skips).
FAMILIES = {
    "gemma3": dict(
        cls="Gemma3ForConditionalGeneration",
        config_cls="Gemma3Config",
        tokenizer="spm-gemma",
        pieces=("<start_of_image>", "<end_of_image>", "<image_soft_token>"),
        image_tokens={"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>",
                      "image_token": "<image_soft_token>"},
        token_fields={"boi_token_index": "<start_of_image>", "eoi_token_index": "<end_of_image>",
                      "image_token_index": "<image_soft_token>"},
        config=dict(
            text_config=dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2, head_dim=32,
                             max_position_embeddings=512, sliding_window=16,
                             query_pre_attn_scalar=32, rope_local_base_freq=20000.0,
                             rope_scaling=dict(rope_type="linear", factor=8.0)),
            # 64-pixel images of 8-pixel patches: 8 a side, pooled by 4 (Gemma 3's kernel) to
            # 2 a side, 4 image tokens
            vision_config=dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                               num_attention_heads=2, image_size=64, patch_size=8,
                               layer_norm_eps=1e-6, vision_use_head=False),
            mm_tokens_per_image=4),
        processor=lambda tok: transformers.Gemma3Processor(
            image_processor=transformers.Gemma3ImageProcessor(
                size={"height": 64, "width": 64}, image_mean=CLIP_MEAN, image_std=CLIP_STD),
            tokenizer=tok, image_seq_length=4),
        prompt="<start_of_image> Describe it.",
        # transformers 5 saves SiglipVisionModel's tower without its vision_model level; the
        # Hub's checkpoints (which the converter maps) and 4.57 have it
        hub_names=((r"^vision_tower\.(?!vision_model\.)", "vision_tower.vision_model."),),
        # the text model's RMSNorms (gemma.py, Gemma3Model.norm_shift) and the projector's
        # (Gemma3VisionModel.modify_tensors); not SigLIP's LayerNorms
        file=dict(plus_one=r"^language_model\..*norm\.weight$|mm_soft_emb_norm\.weight$",
                  f16=r"mm_input_projection_weight$"),
        tower="vision_tower.vision_model.",
    ),
    "idefics3": dict(
        cls="Idefics3ForConditionalGeneration",
        config_cls="Idefics3Config",
        tokenizer="spm-llama",
        # Idefics3Processor's own token strings (processing_idefics3.py)
        pieces=("<image>", "<fake_token_around_image>", "<global-img>", "<end_of_utterance>"),
        token_fields={"image_token_id": "<image>"},
        config=dict(
            text_config=dict(model_type="llama", hidden_size=64, intermediate_size=96,
                             num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                             max_position_embeddings=512, rms_norm_eps=1e-5),
            # 32-pixel images of 8-pixel patches: 4 a side, shuffled by 2: 4 image tokens
            vision_config=dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                               num_attention_heads=2, image_size=32, patch_size=8),
            scale_factor=2),
        # the converter takes the text model's class from text_config (conversion/base.py,
        # get_model_architecture), as the Hub's Idefics3 and SmolVLM configs name it
        hub_text_config=dict(architectures=["LlamaForCausalLM"]),
        # images resized to a longest edge of 64, split into tiles of the tower's 32 pixels
        processor=lambda tok: transformers.Idefics3Processor(
            image_processor=transformers.Idefics3ImageProcessor(
                size={"longest_edge": 64}, max_image_size={"longest_edge": 32},
                image_mean=CLIP_MEAN, image_std=CLIP_STD),
            tokenizer=tok, image_seq_len=4),
        prompt="<image>Describe it.",
        file={},
        tower="model.vision_model.",
        xfail={"5": {"processor": (
            "transformers 5's LlamaTokenizer, built from tokenizer.model, puts no '▁' before "
            "text that follows a special token (<fake_token_around_image><row_1_col_1>: its "
            "Metaspace prepends only to the first piece); hf/'s tokenizer.json does, as 4.57's "
            "LlamaTokenizerFast (legacy) does")}},
    ),
    "qwen2vl": _qwen_vl(
        "Qwen2VLForConditionalGeneration", "Qwen2VLConfig", "Qwen2VLProcessor",
        # 8-pixel patches merged 2 by 2; a feed-forward width of 3 × 32, not the merger's output
        # 64 (which the converter writes as feed_forward_length); three layers, as the
        # converter's tensor map needs one more than the merger's mlp.2
        dict(depth=3, embed_dim=32, hidden_size=64, num_heads=2, mlp_ratio=3, patch_size=8,
             spatial_merge_size=2)),
    "qwen2_5_vl": _qwen_vl(
        "Qwen2_5_VLForConditionalGeneration", "Qwen2_5_VLConfig", "Qwen2_5_VLProcessor",
        # four layers, full attention in layers 1 and 3 (the converter's n_wa_pattern 2);
        # RMSNorms and a gated MLP of 48
        dict(depth=4, hidden_size=32, intermediate_size=48, num_heads=2, out_hidden_size=64,
             patch_size=8, spatial_merge_size=2, fullatt_block_indexes=[1, 3])),
    "qwen3_vl": _qwen_vl(
        "Qwen3VLForConditionalGeneration", "Qwen3VLConfig", "Qwen3VLProcessor",
        # a 4 × 4 position embedding (interpolated to the image), deepstack mergers reading
        # layers 0 and 2 (the text model's layers 0 and 1 take their features)
        dict(depth=3, hidden_size=32, intermediate_size=48, num_heads=2, out_hidden_size=64,
             patch_size=8, spatial_merge_size=2, num_position_embeddings=16,
             deepstack_visual_indexes=[0, 2]),
        # Qwen3's head_dim and q/k norms; its M-RoPE interleaved
        text_config=dict(head_dim=16, rope_scaling={
            "rope_type": "default", "mrope_section": [2, 3, 3], "mrope_interleaved": True}),
        hub_names=(), tower="model.visual."),
    "mistral3": _mistral3(
        # Mistral Small 3.x's text model: a mistral without a sliding window
        dict(model_type="mistral", sliding_window=None)),
    "ministral3": _mistral3(
        # Ministral 3's (transformers 5 only): YaRN as Ministral 3's rope_parameters, with
        # mscale_all_dim and llama_4_scaling_beta other than the class's
        dict(model_type="ministral3", rope_parameters=dict(
            type="yarn", rope_type="yarn", rope_theta=1000000.0, factor=4.0,
            original_max_position_embeddings=128, beta_fast=32.0, beta_slow=1.0, mscale=1.0,
            mscale_all_dim=0.5, llama_4_scaling_beta=0.2)),
        requires="Ministral3Config"),
    "internvl": _internvl("Qwen2ForCausalLM", dict(model_type="qwen2")),
    # InternVL 3.5's text model: Qwen3's head_dim and q/k norms
    "internvl3_5": _internvl("Qwen3ForCausalLM", dict(model_type="qwen3", head_dim=16)),
}


def _pixtral_processor(tok):
    """Mistral 3's PixtralProcessor; under transformers 5 without torchvision, its image
    processor alone (PixtralImageProcessor falls back to its PIL class there)."""
    image_processor = transformers.PixtralImageProcessor(
        size={"longest_edge": 64}, patch_size={"height": 8, "width": 8}, image_mean=CLIP_MEAN,
        image_std=CLIP_STD)
    try:
        return transformers.PixtralProcessor(image_processor=image_processor, tokenizer=tok,
                                             patch_size=8, spatial_merge_size=2)
    except ImportError:
        return image_processor


def _qwen2vl_processor(path, cls):
    """Qwen2VLProcessor of the folder's image processor and tokenizer. It checks each part's
    class: its video processor is _video_processor's."""
    return getattr(transformers, cls)(
        image_processor=transformers.AutoImageProcessor.from_pretrained(str(path)),
        tokenizer=transformers.AutoTokenizer.from_pretrained(str(path)),
        video_processor=_video_processor())


def _video_processor():
    """A video processor instance the image-only processors never call (its class needs
    torchvision, which the tests do not install); where transformers 5 without torchvision has
    no VideoProcessorMixin to check it against (processing_utils.py,
    check_argument_for_proper_class), that instance's class is given."""
    video = object.__new__(transformers.BaseVideoProcessor)
    from transformers import processing_utils
    module = getattr(processing_utils, "transformers_module", None)
    if module is not None and not hasattr(module, "VideoProcessorMixin"):
        setattr(module, "VideoProcessorMixin", type(video))
    return video


def _internvl_processor(path):
    """InternVLProcessor of the folder's image processor and tokenizer, with the image tokens a
    tile becomes from processor_config.json where the folder has one (hf/), else config.json's
    image_seq_length (the original, whose processor is never saved whole)."""
    saved = pathlib.Path(path) / "processor_config.json"
    seq = (json.loads(saved.read_text())["image_seq_length"] if saved.is_file()
           else transformers.AutoConfig.from_pretrained(str(path)).image_seq_length)
    return transformers.InternVLProcessor(
        image_processor=transformers.AutoImageProcessor.from_pretrained(str(path)),
        tokenizer=transformers.AutoTokenizer.from_pretrained(str(path)),
        video_processor=_video_processor(), image_seq_length=seq)


def _tokenizer(path, row):
    """Gemma's or Llama's SentencePiece tokenizer with the row's image tokens as pieces of its
    model, as Gemma 3's and SmolVLM's tokenizers hold them (user-defined pieces; the converter
    reads tokenizer.model), and its extra_special_tokens."""
    if row["tokenizer"] == "qwen2":
        tok, _ = _bpe_from_llama_cpp(path, "qwen2", ("Qwen2TokenizerFast", "Qwen2Tokenizer"),
                                     unk_token=None, bos_token=None, eos_token="<|endoftext|>",
                                     pad_token="<|endoftext|>")
        tok.add_tokens(list(row["pieces"]), special_tokens=True)
        if row.get("image_tokens"):  # the processor's names for them, as extra_special_tokens
            tok.save_pretrained(str(path / "bpe"))
            tok = type(tok).from_pretrained(str(path / "bpe"),
                                            extra_special_tokens=row["image_tokens"])
        return tok, None
    gemma = row["tokenizer"] == "spm-gemma"
    src = _train_spm(path, gemma=gemma, symbols=tuple(row["pieces"]))
    names = ("GemmaTokenizerFast", "GemmaTokenizer") if gemma else ("LlamaTokenizerFast",
                                                                      "LlamaTokenizer")
    extra = {"extra_special_tokens": row["image_tokens"]} if row.get("image_tokens") else {}
    tok = _tok_class(*names).from_pretrained(str(src), add_bos_token=True, add_eos_token=False,
                                             **extra)
    return tok, src / "tokenizer.model"


def _class(name):
    cls = getattr(transformers, name, None)
    if cls is None:
        pytest.skip(f"transformers {transformers.__version__} lacks {name}")
    return cls


def _convert(src, out, *args):
    status, log = llama_converter.run([src, "--outtype", "f32", "--outfile", out, *args],
                                      out.with_suffix(".log"))
    if status != 0 or not out.is_file():
        pytest.fail(f"convert_hf_to_gguf.py {' '.join(args)} failed ({status}):\n{log[-4000:]}")
    return out


def _original(root, family):
    """The saved original (model, tokenizer, tokenizer.model, processor files)."""
    row = FAMILIES[family]
    cls, config_cls = _class(row["cls"]), _class(row["config_cls"])
    if row.get("requires"):  # a text model's class the composite config needs
        _class(row["requires"])
    (root / "tok").mkdir()
    tok, sp_model = _tokenizer(root / "tok", row)
    ids = {field: tok.convert_tokens_to_ids(token) for field, token in row["token_fields"].items()}
    token_ids = {f"{k}_token_id": getattr(tok, f"{k}_token_id") for k in ("bos", "eos", "pad")}
    token_ids = {k: v for k, v in token_ids.items() if v is not None}
    kwargs = dict(row["config"])
    if row.get("text_token_ids"):  # text_config holds them too, as a flat Hub config gives them
        kwargs["text_config"] = dict(kwargs["text_config"], **token_ids)
    config = config_cls(**kwargs, **ids, **token_ids)
    config.text_config.vocab_size = len(tok)
    torch.manual_seed(0)
    model = cls(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p), alpha=0.02)
    path = root / "original"
    model.save_pretrained(str(path))
    if row.get("hub_names"):  # the checkpoint's names as the Hub's repositories have them
        from safetensors.torch import save_file
        tensors = load_file(str(path / "model.safetensors"))
        for pattern, repl in row["hub_names"]:
            tensors = {re.sub(pattern, repl, k): v for k, v in tensors.items()}
        save_file(tensors, str(path / "model.safetensors"), metadata={"format": "pt"})
    if row.get("hub_text_config") or row.get("hub_vision_config") or row.get("hub_config"):  # fields the Hub's configs have
        config_json = json.loads((path / "config.json").read_text())
        config_json["text_config"].update(row.get("hub_text_config", {}))
        config_json["vision_config"].update(row.get("hub_vision_config", {}))
        config_json.update(row.get("hub_config", {}))
        (path / "config.json").write_text(json.dumps(config_json, indent=2))
    processor = row["processor"](tok)
    processor.save_pretrained(str(path))
    if not isinstance(processor, transformers.ProcessorMixin):  # an image processor alone
        tok.save_pretrained(str(path))
    if "load_processor" in row:  # the image processor and the tokenizer, as the processor saves
        preprocessor = json.loads((path / "preprocessor_config.json").read_text())
        preprocessor["processor_class"] = row["processor_class"]
        (path / "preprocessor_config.json").write_text(json.dumps(preprocessor, indent=2))
    if sp_model is not None and not (path / "tokenizer.model").exists():
        shutil.copy(sp_model, path / "tokenizer.model")
    return path


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def pair(request, tmp_path_factory):
    """(family, the original's folder, the text GGUF, the mmproj GGUF)."""
    if not (LLAMA_CPP / "convert_hf_to_gguf.py").is_file():
        pytest.skip(f"llama.cpp's source tree is absent ({LLAMA_CPP}; set GGUFS_LLAMA_CPP)")
    family = request.param
    root = tmp_path_factory.mktemp(family)
    src = _original(root, family)
    text = _convert(src, root / f"{family}.gguf")
    mmproj = _convert(src, root / f"mmproj-{family}.gguf", "--mmproj")
    return family, src, text, mmproj


@pytest.fixture(scope="module")
def mounted(pair, ggufs_binary, tmp_path_factory):
    """hf/ of the pair mounted with --mmproj; unmounted after the module."""
    if not os.path.exists("/dev/fuse"):
        pytest.skip("/dev/fuse is missing: mount tests need FUSE")
    family, src, text, mmproj = pair
    mnt = tmp_path_factory.mktemp("mnt")
    r = subprocess.run([str(ggufs_binary), "--mmproj", str(mmproj), str(text), str(mnt)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"ggufs failed ({r.returncode}): {r.stderr}"
    yield mnt / "hf"
    if subprocess.run(["fusermount3", "-u", str(mnt)], capture_output=True).returncode != 0:
        subprocess.run(["fusermount3", "-uz", str(mnt)], capture_output=True)


def _reference(family, src):
    """The original checkpoint's tensors as the converter's files hold them (float32)."""
    file = FAMILIES[family]["file"]
    out = {}
    for name, w in load_file(str(src / "model.safetensors")).items():
        w = w.float()
        if "plus_one" in file and re.search(file["plus_one"], name):
            w = (w + 1) - 1
        if "f16" in file and re.search(file["f16"], name):
            w = w.half().float()
        out[name] = w
    return out


def test_state_dict(pair, mounted):
    family, src, _, _ = pair
    want = _reference(family, src)
    have = {}
    for f in sorted(mounted.glob("*.safetensors")):
        have.update(load_file(str(f)))
    assert sorted(have) == sorted(want)
    for name, w in want.items():
        assert have[name].dtype == torch.float32, name
        assert have[name].shape == w.shape, name
        assert torch.equal(have[name], w), f"{name} differs"


def _image():
    rng = np.random.default_rng(7)
    return Image.fromarray(rng.integers(0, 256, (80, 96, 3), dtype=np.uint8))


def _inputs(path, family):
    load = FAMILIES[family].get("load_processor", transformers.AutoProcessor.from_pretrained)
    processor = load(str(path))
    return processor(text=FAMILIES[family]["prompt"], images=_image(), return_tensors="pt")


def _known_gap(request, family, check):
    major = transformers.__version__.split(".")[0]
    if reason := FAMILIES[family].get("skip", {}).get(major, {}).get(check):
        pytest.skip(reason)
    if reason := FAMILIES[family].get("xfail", {}).get(major, {}).get(check):
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))


def test_processor(pair, mounted, request):
    family, src, _, _ = pair
    _known_gap(request, family, "processor")
    want, have = _inputs(src, family), _inputs(mounted, family)
    assert torch.equal(have["input_ids"], want["input_ids"])
    assert torch.equal(have["pixel_values"], want["pixel_values"])


def test_image_processor_fields(pair, mounted):
    """Every field of the original's image processor (its size, pixel bounds, patch and merge
    sizes, mean and std, resampling, ...) equal in hf/'s, floats as float32."""
    _, src, _, _ = pair
    want = transformers.AutoImageProcessor.from_pretrained(str(src)).to_dict()
    have = transformers.AutoImageProcessor.from_pretrained(str(mounted)).to_dict()
    assert _equal_fields(want, have) == []


def _model(path, family):
    """The family's class from `path`, whose config must name it: from a config of another
    class (hf/ of the text model alone), from_pretrained builds the composite config's default
    sub-models, billions of parameters."""
    cls = getattr(transformers, FAMILIES[family]["cls"])
    assert _architecture(path) == cls.__name__, f"{path} is not {cls.__name__}"
    return cls.from_pretrained(str(path), dtype=torch.float32, attn_implementation="eager").eval()


def _reference_model(family, src, tmp_path):
    """The original with the reference weights, saved and loaded as the original is."""
    path = tmp_path / "reference"
    shutil.copytree(src, path)
    from safetensors.torch import save_file
    save_file({k: v.contiguous() for k, v in _reference(family, src).items()},
              str(path / "model.safetensors"), metadata={"format": "pt"})
    return _model(path, family)


def test_logits_and_generate(pair, mounted, tmp_path, request):
    family, src, _, _ = pair
    _known_gap(request, family, "logits")
    inputs = _inputs(src, family)
    want_model = _reference_model(family, src, tmp_path)
    have_model = _model(mounted, family)
    with torch.no_grad():
        want = want_model(**inputs).logits
        have = have_model(**inputs).logits
    assert torch.equal(have, want)
    gen = dict(max_new_tokens=20, do_sample=False)
    with torch.no_grad():
        want_ids = want_model.generate(**inputs, **gen)
        have_ids = have_model.generate(**inputs, **gen)
    assert want_ids.shape[1] == inputs["input_ids"].shape[1] + 20
    assert torch.equal(have_ids, want_ids)


def test_text_model_alone_is_the_language_model(pair, mount, tmp_path):
    """hf/ of the text GGUF mounted alone is the original's language model: on a text without
    an image, logits torch.equal to the original's, and 20 equal greedy tokens."""
    family, src, text, _ = pair
    hf = mount(text) / "hf"
    assert _architecture(hf).endswith("ForCausalLM"), _view(hf)
    inputs = transformers.AutoTokenizer.from_pretrained(str(src))(
        "Describe a cat in a garden.", return_tensors="pt")
    want_model = _reference_model(family, src, tmp_path)
    have_model = transformers.AutoModelForCausalLM.from_pretrained(
        str(hf), dtype=torch.float32, attn_implementation="eager").eval()
    with torch.no_grad():
        assert torch.equal(have_model(**inputs).logits, want_model(**inputs).logits)
        gen = dict(max_new_tokens=20, do_sample=False)
        assert torch.equal(have_model.generate(**inputs, **gen),
                           want_model.generate(**inputs, **gen))


def _equal_fields(want, have, where=""):
    """Every field of `want` equal in `have` (floats as float32); the differences."""
    out = []
    for k, v in want.items():
        if k in CONFIG_IGNORED or (k == "architectures" and where):
            continue
        if k not in have:
            out.append(f"{where}{k}: absent (the original has {v!r})")
        elif isinstance(v, dict) and isinstance(have[k], dict):
            out += _equal_fields(v, have[k], f"{where}{k}.")
        elif isinstance(v, float) and isinstance(have[k], (int, float)):
            if np.float32(v) != np.float32(have[k]):
                out.append(f"{where}{k}: {have[k]!r}, the original {v!r}")
        elif (isinstance(v, (list, tuple)) and isinstance(have[k], (list, tuple))
              and len(v) == len(have[k]) and all(isinstance(x, float) for x in v)):
            if not np.array_equal(np.float32(v), np.float32(have[k])):
                out.append(f"{where}{k}: {have[k]!r}, the original {v!r}")
        elif v != have[k]:
            out.append(f"{where}{k}: {have[k]!r}, the original {v!r}")
    return out


def test_config(pair, mounted):
    _, src, _, _ = pair
    want = transformers.AutoConfig.from_pretrained(str(src)).to_dict()
    have = transformers.AutoConfig.from_pretrained(str(mounted)).to_dict()
    assert _equal_fields(want, have) == []


# ---------------------------------------------------------------------------------------------
# Pairing: where a library finds a model's projector, and where it refuses one


def _view(path):
    return os.getxattr(str(path), "user.ggufs.view").decode()


def _architecture(hf):
    return json.loads((hf / "config.json").read_text())["architectures"][0]


def _paired(hf, family):
    """hf/ is the vision-language model: its class, and the vision tower's weights."""
    assert _architecture(hf) == FAMILIES[family]["cls"], _view(hf)
    tower = FAMILIES[family]["tower"]
    names = set()
    for f in hf.glob("*.safetensors"):
        with open(f, "rb") as fh:
            n = int.from_bytes(fh.read(8), "little")
            names |= set(json.loads(fh.read(n)))
    assert any(k.startswith(tower) for k in names), sorted(names)[:5]
    assert (hf / "preprocessor_config.json").is_file()


def _alone(hf, why):
    """hf/ is the text model alone, and says why."""
    assert _architecture(hf).endswith("ForCausalLM"), _view(hf)
    assert not (hf / "preprocessor_config.json").exists()
    view = _view(hf)
    assert "the text model alone" in view and why in view, view


def test_folder_pairs_the_projector_beside_a_model(pair, mount, tmp_path):
    family, _, text, mmproj = pair
    lib = tmp_path / "lib"
    (lib / "repo").mkdir(parents=True)
    # copies: a library lists one file reached by several paths once
    shutil.copy(text, lib / "repo" / "model-Q8_0.gguf")
    shutil.copy(mmproj, lib / "repo" / "mmproj-model-f16.gguf")
    shutil.copy(text, lib / "alone.gguf")  # no projector beside it
    m = mount(lib)
    _paired(m / "model-Q8_0" / "hf", family)
    assert _architecture(m / "alone" / "hf").endswith("ForCausalLM")
    assert "the text model alone" not in _view(m / "alone" / "hf")


def test_hugging_face_cache_pairs_a_snapshots_projector(pair, mount, tmp_path):
    """The Hugging Face cache's layout (huggingface_hub's file_download.py): snapshots/<rev>/
    holds links to blobs/<sha256>."""
    family, _, text, mmproj = pair
    repo = tmp_path / "hub" / "models--org--tiny-GGUF"
    (repo / "blobs").mkdir(parents=True)
    snapshot = repo / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    for src, name in ((text, "tiny-Q4_K_M.gguf"), (mmproj, "mmproj-F16.gguf")):
        blob = repo / "blobs" / name.encode().hex()  # any name: the cache's are sha256 digests
        shutil.copy(src, blob)
        os.symlink(os.path.relpath(blob, snapshot), snapshot / name)
    m = mount(tmp_path / "hub")
    _paired(m / "tiny-Q4_K_M" / "hf", family)


def _ollama_store(root, text, projectors):
    """An Ollama store (Ollama's server/images.go layout) with one model whose manifest has a
    model layer and `projectors`' layers."""
    import hashlib
    (root / "blobs").mkdir(parents=True)
    layers = []
    for path, media in [(text, "model")] + [(p, "projector") for p in projectors]:
        data = pathlib.Path(path).read_bytes()
        digest = hashlib.sha256(data + media.encode()).hexdigest()  # two projectors: two blobs
        (root / "blobs" / f"sha256-{digest}").write_bytes(data)
        layers.append({"mediaType": f"application/vnd.ollama.image.{media}",
                       "digest": f"sha256:{digest}", "size": len(data)})
    manifest = root / "manifests" / "registry.ollama.ai" / "library" / "tiny"
    manifest.mkdir(parents=True)
    (manifest / "latest").write_text(json.dumps(
        {"schemaVersion": 2,
         "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
         "layers": layers}))


def test_ollama_pairs_the_projector_layer(pair, mount, tmp_path):
    family, _, text, mmproj = pair
    _ollama_store(tmp_path / "one", text, [mmproj])
    m = mount("ollama:tiny", env=dict(os.environ, OLLAMA_MODELS=str(tmp_path / "one")))
    _paired(m / "hf", family)
    _ollama_store(tmp_path / "two", text, [mmproj, mmproj])
    m = mount("ollama:tiny", env=dict(os.environ, OLLAMA_MODELS=str(tmp_path / "two")))
    _alone(m / "hf", "2 projector layers")


def test_two_projectors_pair_neither(pair, mount, tmp_path):
    _, _, text, mmproj = pair
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy(text, lib / "model.gguf")
    shutil.copy(mmproj, lib / "mmproj-F16.gguf")
    shutil.copy(mmproj, lib / "mmproj-F32.gguf")
    m = mount(lib)
    _alone(m / "model" / "hf", "2 projectors beside it (mmproj-F16.gguf, mmproj-F32.gguf)")


def _set_metadata(src, dst, key, value):
    """A copy of `src` with key `key` set to `value` by gguf-py's own gguf_set_metadata.py."""
    shutil.copy(src, dst)
    r = subprocess.run([sys.executable, "-m", "gguf.scripts.gguf_set_metadata", str(dst), key,
                        str(value), "--force"], capture_output=True, text=True,
                       env=llama_converter.converter_env(), timeout=120)
    assert r.returncode == 0, r.stderr
    return dst


def test_a_projector_of_another_width_is_refused(pair, mount, tmp_path):
    _, _, text, mmproj = pair
    wrong = _set_metadata(mmproj, tmp_path / "mmproj-wrong.gguf", "clip.vision.projection_dim", 65)
    m = mount(text, "--mmproj", str(wrong))
    _alone(m / "hf", "clip.vision.projection_dim (65) is not the model's hidden_size (64)")


def test_a_file_that_is_no_projector_is_refused(pair, ggufs_binary, tmp_path):
    _, _, text, _ = pair
    mnt = tmp_path / "mnt"
    try:
        r = subprocess.run([str(ggufs_binary), "--mmproj", str(text), str(text), str(mnt)],
                           capture_output=True, text=True, timeout=120)
    finally:  # a ggufs that wrongly mounted is unmounted all the same
        if os.path.ismount(mnt):
            subprocess.run(["fusermount3", "-u", str(mnt)], capture_output=True)
    assert r.returncode == 3, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(text) in lines[0] and "not a vision projector" in lines[0], \
        r.stderr
