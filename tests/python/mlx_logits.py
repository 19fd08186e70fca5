"""mlx-lm's answer for two model folders, run in the MLX venv (MLX and torch share none): the
original folder save_pretrained wrote and ggufs's mlx/ of its conversion. Usage:
mlx_logits.py ORIGINAL MLX_DIR IDS_JSON [GGUF]; prints one JSON object: for each folder, "error" (why
mlx_lm.load or the forward pass failed) or nothing, and where both ran, the logits' largest
absolute difference and whether they are equal; with GGUF, also whether the Python package's
in-process ggufs.mlx.load of that file gives MLX_DIR's logits and 20 greedy tokens
("ggufs_error", "ggufs_equal"; the package from PYTHONPATH). Used by test_hf_roundtrip.py's
test_mlx.
mlx_logits.py --save MLX_DIR IDS_JSON OUT_NPY: the logits of one folder, float32, saved with
numpy (test_mlx_quantized).
mlx_logits.py --compare MLX_DIR FLOAT_DIR IDS_JSON N_NEW OUT_DIR PROMPT: both folders loaded by
mlx-lm (FLOAT_DIR's model alone: its tokenizer files are MLX_DIR's); prints one JSON object:
"quantized" (each quantized module's [mode, bits, group_size]), "differ" (the parameters not
equal: a quantized module's weight mx.dequantize'd, == so that only the sign of a zero may
differ), "missing" (the names one side lacks), "tokens" (each folder's N_NEW greedy tokens,
stream_generate's default sampler), "generate" (the exit status and output of `python -m mlx_lm
generate --model MLX_DIR --prompt PROMPT --max-tokens 5`); the logits of each saved as
OUT_DIR/mlx.npy and float.npy (test_mlx_llama_quantize)."""
import json
import sys

import mlx.core as mx
from mlx_lm import load


def logits(folder, ids, loader=load, tokens=False):
    """The logits of `ids` (float32) of the model loader(folder) gives, and, with `tokens`, its 20
    greedy tokens (stream_generate's default sampler); or why not."""
    try:
        model, tokenizer = loader(folder)
        out = model(mx.array([ids])).astype(mx.float32)
        mx.eval(out)
        if not tokens:
            return out, None
        from mlx_lm import stream_generate
        return (out, [r.token for r in stream_generate(model, tokenizer, ids, max_tokens=20)]), None
    except BaseException as e:  # noqa: B036 (mlx-lm's olmo.py calls sys.exit on import)
        return None, f"{type(e).__name__}: {e}"[:600]


def dequantized(model):
    """{name: parameter} of a model, a quantized module's weight dequantized (its scales and
    biases dropped), and {module: [mode, bits, group_size]} of the quantized modules."""
    import mlx.nn as nn
    from mlx.utils import tree_flatten
    from mlx_lm.models.switch_layers import QuantizedSwitchLinear
    params = dict(tree_flatten(model.parameters()))
    forms = {}
    for name, m in model.named_modules():
        if not isinstance(m, (nn.QuantizedLinear, nn.QuantizedEmbedding, QuantizedSwitchLinear)):
            continue
        forms[name] = [m.mode, m.bits, m.group_size]
        params[f"{name}.weight"] = mx.dequantize(m.weight, m.scales, m.get("biases"),
                                                 group_size=m.group_size, bits=m.bits,
                                                 mode=m.mode, dtype=mx.float32)
        params.pop(f"{name}.scales")
        params.pop(f"{name}.biases", None)
    return params, forms


def compare(mlx_dir, float_dir, ids, n_new, out_dir, prompt):
    import contextlib
    import io
    import pathlib
    import runpy
    import numpy as np
    from mlx_lm import stream_generate
    from mlx_lm.utils import load_model
    result = {"tokens": {}}
    models = {}
    for name, folder in (("mlx", mlx_dir), ("float", float_dir)):
        if name == "mlx":
            model, tokenizer = load(folder)
        else:  # the same tokenizer files: mlx/'s tokenizer
            model, _ = load_model(pathlib.Path(folder))
        out = model(mx.array([ids])).astype(mx.float32)
        np.save(f"{out_dir}/{name}.npy", np.array(out))
        result["tokens"][name] = [r.token for r in stream_generate(model, tokenizer, ids,
                                                                   max_tokens=n_new)]
        models[name] = model
    got, result["quantized"] = dequantized(models["mlx"])
    want, stray = dequantized(models["float"])
    if stray:
        sys.exit(f"{float_dir} has quantized modules: {sorted(stray)}")
    result["missing"] = sorted(set(got) ^ set(want))
    result["differ"] = sorted(k for k in set(got) & set(want)
                              if got[k].shape != want[k].shape
                              or not mx.array_equal(got[k], want[k]).item())
    # `python -m mlx_lm generate` in this interpreter (runpy, as -m runs it)
    sys.argv = ["mlx_lm", "generate", "--model", mlx_dir, "--prompt", prompt,
                "--max-tokens", "5"]
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_module("mlx_lm", run_name="__main__", alter_sys=True)
        result["generate"] = {"exit": 0, "stdout": out.getvalue()}
    except SystemExit as e:
        result["generate"] = {"exit": e.code, "stdout": out.getvalue()}
    print(json.dumps(result))


def main():
    if sys.argv[1] == "--compare":
        compare(sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), int(sys.argv[5]), sys.argv[6],
                sys.argv[7])
        return
    if sys.argv[1] == "--save":
        import numpy as np
        out, error = logits(sys.argv[2], json.loads(sys.argv[3]))
        if error:
            sys.exit(error)
        np.save(sys.argv[4], np.array(out))
        return
    original, mlx_dir, ids = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    want, want_error = logits(original, ids)
    got, got_error = logits(mlx_dir, ids) if mlx_dir != "-" else (None, "not offered")
    result = {"original_error": want_error, "mlx_error": got_error}
    if want is not None and got is not None:
        result["shape_equal"] = want.shape == got.shape
        if result["shape_equal"]:
            result["max_diff"] = mx.abs(want - got).max().item()
            result["equal"] = bool(mx.array_equal(want, got).item())
    if len(sys.argv) > 4 and got is not None:
        import ggufs.mlx
        mine, result["ggufs_error"] = logits(sys.argv[4], ids, ggufs.mlx.load, tokens=True)
        theirs, error = logits(mlx_dir, ids, tokens=True)
        if mine is not None and theirs is not None:
            result["ggufs_equal"] = bool(mx.array_equal(mine[0], theirs[0]).item()) and \
                mine[1] == theirs[1]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
