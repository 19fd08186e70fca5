"""mlx-lm's answer for two model folders, run in the MLX venv (MLX and torch share none): the
original folder save_pretrained wrote and ggufs's mlx/ of its conversion. Usage:
mlx_logits.py ORIGINAL MLX_DIR IDS_JSON; prints one JSON object: for each folder, "error" (why
mlx_lm.load or the forward pass failed) or nothing, and where both ran, the logits' largest
absolute difference and whether they are equal. Used by test_hf_roundtrip.py's test_mlx.
mlx_logits.py --save MLX_DIR IDS_JSON OUT_NPY: the logits of one folder, float32, saved with
numpy (test_mlx_quantized)."""
import json
import sys

import mlx.core as mx
from mlx_lm import load


def logits(folder, ids):
    try:
        model, _ = load(folder)
        out = model(mx.array([ids])).astype(mx.float32)
        mx.eval(out)
        return out, None
    except BaseException as e:  # noqa: B036 (mlx-lm's olmo.py calls sys.exit on import)
        return None, f"{type(e).__name__}: {e}"[:600]


def main():
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
    print(json.dumps(result))


if __name__ == "__main__":
    main()
