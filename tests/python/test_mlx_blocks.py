"""ggml blocks in MLX's quantized form, checked with MLX itself.

ggufs-test-mlx-blocks (tests/support/mlx_blocks_dump.cpp: $GGUFS_MLX_BLOCKS_DUMP, else
<repo>/build/ggufs-test-mlx-blocks) encodes every row of each exact type's conformance tensors
(encode_mlx_row, include/ggufs/mlx_blocks.h) into a safetensors file; MLX loads it (mx.load) and
dequantizes it (mx.dequantize, mlx/ops.cpp), and the result must equal ggml's reference output
(the conformance set's ref/ files, made by ggml) with == (only the sign of a zero may differ).
Hand-made MXFP4 and NVFP4 blocks cover every scale byte against ggml's formulas
(src/ggml/README.md §4, §10).

Runs in the MLX environment, /var/cache/ggufs-tests/venv-mlx (scripts/install-deps --tests, from
tests/python/requirements-mlx.txt; scripts/test runs this file there); elsewhere it skips.
"""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

from conftest import REPO, _testdata_dir

mx = pytest.importorskip(
    "mlx.core",
    reason="no MLX in this Python (scripts/install-deps --tests makes "
    "/var/cache/ggufs-tests/venv-mlx; scripts/test runs this file there)",
)

# Each exact type's MLX form (mode, bits, group size), as mlx-lm's per-layer "quantization"
# entry would name it (mlx_lm/utils.py).
FORMS = {
    "Q4_0": ("affine", 4, 32),
    "Q4_1": ("affine", 4, 32),
    "Q5_0": ("affine", 5, 32),
    "Q5_1": ("affine", 5, 32),
    "Q8_0": ("affine", 8, 32),
    "Q8_1": ("affine", 8, 32),
    "Q4_K": ("affine", 4, 32),
    "Q5_K": ("affine", 5, 32),
    "TQ1_0": ("affine", 2, 128),
    "TQ2_0": ("affine", 2, 128),
    "MXFP4": ("mxfp4", 4, 32),
    "NVFP4": ("nvfp4", 4, 16),
    "Q1_0": ("affine", 2, 128),
    "Q2_0": ("affine", 2, 64),
}

# ggml's doubled E2M1 values (kvalues_mxfp4, ggml-common.h).
KVALUES_MXFP4 = np.array([0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12], np.float64)


@pytest.fixture(scope="module")
def encoder():
    path = pathlib.Path(
        os.environ.get("GGUFS_MLX_BLOCKS_DUMP") or REPO / "build" / "ggufs-test-mlx-blocks"
    )
    if not os.access(path, os.X_OK):
        pytest.skip(f"no ggufs-test-mlx-blocks at {path} (build it, or set GGUFS_MLX_BLOCKS_DUMP)")
    return path


def encode(encoder, tmp_path, type_name, ne0, raw):
    """The encoder's exit code and, on success, MLX's dequantization of its file (float32 numpy
    array [rows, ne0]) with the mode, bits and group size of its metadata."""
    src, dst = tmp_path / f"{type_name}.raw", tmp_path / f"{type_name}.safetensors"
    src.write_bytes(raw)
    run = subprocess.run(
        [encoder, type_name, str(ne0), src, dst], capture_output=True, text=True, check=False
    )
    if run.returncode != 0:
        return run.returncode, None
    arrays, meta = mx.load(str(dst), return_metadata=True)
    mode, bits, group_size = FORMS[type_name]
    assert (meta["mode"], int(meta["bits"]), int(meta["group_size"])) == FORMS[type_name]
    biases = arrays.get("biases")
    assert (biases is None) == (mode != "affine")
    out = mx.dequantize(
        arrays["weight"],
        arrays["scales"],
        biases,
        group_size=group_size,
        bits=bits,
        mode=mode,
        dtype=mx.float32,
    )
    return 0, np.array(out)


def conformance_types():
    return list(FORMS)


@pytest.mark.parametrize("type_name", conformance_types())
def test_mlx_dequantize_equals_ggml_reference(encoder, tmp_path, type_name):
    conformance = _testdata_dir() / "conformance"
    if not (conformance / "manifest.json").is_file():
        pytest.skip(f"no conformance test data in {conformance} (set GGUFS_TESTDATA)")
    manifest = json.loads((conformance / "manifest.json").read_text())
    (file,) = [f for f in manifest["files"] if f["type"] == type_name]
    gguf = (conformance / file["file"]).read_bytes()
    rows = 0
    for tensor in file["tensors"]:
        offset, nbytes, ne0 = tensor["file_offset"], tensor["nbytes"], tensor["ne4"][0]
        code, got = encode(encoder, tmp_path, type_name, ne0, gguf[offset : offset + nbytes])
        assert code == 0, f"{tensor['name']}: encoder exit {code}"
        want = np.fromfile(conformance / tensor["ref"], dtype="<f4").reshape(-1, ne0)
        assert got.shape == want.shape
        bad = np.argwhere(got != want)
        assert len(bad) == 0, (
            f"{tensor['name']}: {len(bad)} of {want.size} differ, first at {bad[0].tolist()}: "
            f"MLX {got[tuple(bad[0])]!r}, ggml {want[tuple(bad[0])]!r}"
        )
        rows += want.shape[0]
    assert rows == 8, "1 + 3 + 4 rows"


def all_codes(n_bytes):
    """Bytes whose low nibbles are codes 0.. and high nibbles 15..: every code once per 8 bytes."""
    return bytes((j % 8) | (15 - j % 8) << 4 for j in range(n_bytes))


def test_mxfp4_every_exponent(encoder, tmp_path):
    # One block per exponent e = 0..254; ggml's value kvalues_mxfp4[c]·2^(e − 128)
    # (ggml_e8m0_to_fp32_half), exact in float64 and rounded once to float32 (±inf from e = 253).
    exponents = np.arange(255)
    raw = b"".join(bytes([e]) + all_codes(16) for e in exponents)
    code, got = encode(encoder, tmp_path, "MXFP4", 32, raw)
    assert code == 0
    codes = [(b & 15) for b in all_codes(16)] + [(b >> 4) for b in all_codes(16)]
    with np.errstate(over="ignore"):
        want = (KVALUES_MXFP4[codes][None, :] * np.exp2(exponents - 128.0)[:, None]).astype(
            np.float32
        )
    assert np.array_equal(got, want)
    # 255: ggml's 2^127 times the code, MLX's 2^128 = inf: no exact form.
    assert encode(encoder, tmp_path, "MXFP4", 32, bytes([255]) + all_codes(16))[0] == 3


def ue4m3_half(x):
    """ggml_ue4m3_to_fp32 (ggml-impl.h): bit 7 ignored, 0x00 and 0x7F zero, halved."""
    if x in (0x00, 0x7F):
        return 0.0
    e, m = (x >> 3) & 15, x & 7
    return (m * 2.0**-9 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)) * 0.5


def test_nvfp4_every_scale_byte(encoder, tmp_path):
    # Scale bytes 0..254 over 64 blocks of four sub-blocks (0xFF, ggml's 480, has no E4M3 form);
    # ggml's value kvalues_mxfp4[c]·ue4m3_half(x), exact in float32.
    scale_bytes = list(range(255)) + [0]
    raw = b"".join(bytes(scale_bytes[4 * b : 4 * b + 4]) + all_codes(32) for b in range(64))
    code, got = encode(encoder, tmp_path, "NVFP4", 64, raw)
    assert code == 0
    codes = [(b & 15) for b in all_codes(8)] + [(b >> 4) for b in all_codes(8)]
    scales = np.array([ue4m3_half(x) for x in scale_bytes])
    want = (scales[:, None] * KVALUES_MXFP4[codes][None, :]).astype(np.float32).reshape(64, 64)
    assert np.array_equal(got, want)
    assert encode(encoder, tmp_path, "NVFP4", 64, bytes([0xFF, 1, 2, 3]) + all_codes(32))[0] == 3
