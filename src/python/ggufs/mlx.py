"""ggufs.mlx: the (model, tokenizer) pair ``mlx_lm.load(MNT/mlx)`` gives, built in-process from
mlx/'s files, with no file written: ggml's blocks stay MLX quantized weights (mlx/'s
config.json "quantization"), the float tensors as mlx/ serves them (-o mlx_dtype).

The steps are mlx-lm 0.32.2's own (mlx_lm/utils.py: load_config, load_model, load_tokenizer;
mlx_lm/tokenizer_utils.py: load), with the files' bytes read through ggufs instead of opened:
the model class of config.json's model_type, its sanitize, nn.quantize with load_model's
per-module predicate, load_weights; the tokenizer of tokenizer.json and tokenizer_config.json in
mlx-lm's TokenizerWrapper with the streaming detokenizer its decoder calls for."""

import json
from functools import partial

import numpy as np

from ._model import Model
from ._safetensors import safe_open


def load(source, view: str = "mlx", **options):
    """(model, tokenizer) as mlx_lm.load(MNT/mlx). `options` go to ggufs.open (mlx_dtype,
    mlx_requantize, ...). Raises ViewUnavailable when the file has no mlx/ (the mount's reason),
    what ggufs.open raises, and what mlx-lm raises for the folder."""
    import mlx.core as mx
    import mlx.nn as nn
    from mlx_lm import tokenizer_utils as tu
    from mlx_lm import utils

    from .transformers import tokenizer as hf_tokenizer

    own = not isinstance(source, Model)
    m = Model(source, **options) if own else source
    try:
        names = m.listdir(view)
        # load_config: config.json, its tagged floats, generation_config.json's eos_token_id.
        config = utils._decode_tagged_floats(json.loads(m.read(f"{view}/config.json")))
        if "generation_config.json" in names:
            try:
                gen = json.loads(m.read(f"{view}/generation_config.json"))
            except json.JSONDecodeError:
                gen = {}
            if eos := gen.get("eos_token_id", False):
                config["eos_token_id"] = eos
        with safe_open(m, framework="mlx", view=view) as f:
            weights = {k: f.get_tensor(k) for k in f.keys()}
        tokenizer_json = json.loads(m.read(f"{view}/tokenizer.json"))
        tok = hf_tokenizer(m, view)
    finally:
        if own:
            m.close()

    model_class, args_class = utils._get_classes(config=config)
    model = model_class(args_class.from_dict(config))
    if hasattr(model, "sanitize"):
        weights = model.sanitize(weights)
    if (quantization := config.get("quantization")) is not None:

        def class_predicate(p, module):  # load_model's _quantize
            if p in config["quantization"]:
                return config["quantization"][p]
            if not hasattr(module, "to_quantized") or f"{p}.scales" not in weights:
                return False
            return utils.infer_quant_config(p, module, weights)

        nn.quantize(model, group_size=quantization["group_size"], bits=quantization["bits"],
                    mode=quantization.get("mode", "affine"), class_predicate=class_predicate)
    model.eval()
    model.load_weights(list(weights.items()), strict=True)
    mx.eval(model.parameters())

    detokenizer = tu.NaiveStreamingDetokenizer
    decoder = tokenizer_json.get("decoder")
    if decoder is not None:
        if tu._is_spm_decoder(decoder):
            detokenizer = tu.SPMStreamingDetokenizer
        elif tu._is_spm_decoder_no_space(decoder):
            detokenizer = partial(tu.SPMStreamingDetokenizer, trim_space=False)
        elif tu._is_bpe_decoder(decoder):
            detokenizer = tu.BPEStreamingDetokenizer
    eos = config.get("eos_token_id")
    eos = [eos] if isinstance(eos, int) else eos
    tool_parser_type = tu._infer_tool_parser(tok)
    tool = {}
    if tool_parser_type is not None:
        import importlib

        module = importlib.import_module(f"mlx_lm.tool_parsers.{tool_parser_type}")
        tool = dict(tool_parser=module.parse_tool_call, tool_call_start=module.tool_call_start,
                    tool_call_end=module.tool_call_end)
    return model, tu.TokenizerWrapper(tok, detokenizer, eos_token_ids=eos, **tool)
