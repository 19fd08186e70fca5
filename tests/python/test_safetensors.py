"""The safetensors package reading MNT/model.safetensors, and what a get_slice costs the daemon."""

import json
import os

import numpy as np
import pytest
import torch
from safetensors import safe_open

import gguf

from conftest import file_id, shared_gguf_files

# GGUF types model.safetensors keeps (README, model.safetensors), as NumPy dtypes of their bytes.
KEPT = {"F32": "<f4", "F16": "<f2", "BF16": "<u2", "F64": "<f8",
        "I8": "i1", "I16": "<i2", "I32": "<i4", "I64": "<i8"}
INTEGER = {"I8", "I16", "I32", "I64"}

MODELS = [p for p in shared_gguf_files() if p.parent.name != "metadata"]  # metadata/: no tensors


def expected_bits(mnt, t, dtype_option):
    """The tensor model.safetensors must hold, as an array of its bit patterns (so NaN payloads
    and -0.0 count), from raw/ and f32/ of the mount and NumPy's and torch's own conversions."""
    shape = t["ne"][::-1]
    kind = t["type"]
    target = {None: None, "f16": "F16", "bf16": "BF16"}[dtype_option]
    if kind in KEPT and (kind in INTEGER or target is None or kind == target):
        a = np.fromfile(mnt / "raw" / t["name"], dtype=KEPT[kind])
        return a.view(f"u{a.itemsize}").reshape(shape)
    f32 = np.fromfile(mnt / "f32" / t["name"], dtype="<f4").reshape(shape)
    if target == "F16":
        with np.errstate(over="ignore"):  # beyond float16's range is ±inf, as ggufs has it
            return f32.astype(np.float16).view(np.uint16)
    if target == "BF16":
        return torch.from_numpy(f32).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    return f32.view(np.uint32)


def bits(a):
    """A torch tensor or NumPy array as an array of its bit patterns."""
    if isinstance(a, torch.Tensor):
        size = a.element_size()
        a = a.contiguous().view({1: torch.int8, 2: torch.int16, 4: torch.int32,
                                 8: torch.int64}[size]).numpy()
    return a.view(f"u{a.itemsize}")


@pytest.mark.parametrize("dtype_option", [None, "f16", "bf16"])
@pytest.mark.parametrize("path", MODELS, ids=file_id)
def test_safe_open_equals_reference(path, dtype_option, testdata, mount):
    options = ["-o", f"safetensors_dtype={dtype_option}"] if dtype_option else []
    m = mount(path, *options)
    tensors = json.loads((m / "gguf.json").read_text())["tensors"]
    st = m / "model.safetensors"
    with safe_open(st, framework="pt") as pt:
        assert sorted(pt.keys()) == sorted(t["name"] for t in tensors)
        for t in tensors:
            want = expected_bits(m, t, dtype_option)
            got = pt.get_tensor(t["name"])
            assert list(got.shape) == t["ne"][::-1], t["name"]
            assert np.array_equal(bits(got), want), t["name"]
    # NumPy has no bfloat16: safetensors' NumPy loader refuses BF16 tensors.
    with safe_open(st, framework="np") as npf:
        for t in tensors:
            bf16 = t["type"] == "BF16" if dtype_option is None else \
                dtype_option == "bf16" and t["type"] not in INTEGER
            if bf16:
                continue
            want = expected_bits(m, t, dtype_option)
            got = npf.get_tensor(t["name"])
            assert got.shape == tuple(t["ne"][::-1]), t["name"]
            assert np.array_equal(bits(got), want), t["name"]


ROWS, COLS = 4096, 1024


@pytest.fixture(scope="module")
def big_model(tmp_path_factory):
    """A model written by gguf-py's GGUFWriter: a 4096 x 1024 Q8_0 tensor (16 MiB as float32 in
    model.safetensors, 4.25 MiB stored) after a small F32 one."""
    path = tmp_path_factory.mktemp("big") / "big.gguf"
    rng = np.random.default_rng(25)
    w = gguf.GGUFWriter(path, "test")
    w.add_tensor("small", rng.standard_normal((4, 32), dtype=np.float32))
    q8 = gguf.GGMLQuantizationType.Q8_0
    big = rng.standard_normal((ROWS, COLS), dtype=np.float32)
    w.add_tensor("big", gguf.quants.quantize(big, q8), raw_dtype=q8)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_get_slice_serves_little_more_than_the_rows(big_model, mount):
    # The kernel's own read-ahead (128 KiB): with ggufs's default of 4032 KiB the kernel asks
    # for up to 4 MiB around each page fault of safetensors' mmap, whatever ggufs does.
    m = mount(big_model, "-o", "read_ahead_kb=0")
    first, count = 3000, 4
    with safe_open(m / "model.safetensors", framework="np") as f:
        before = m.io()
        rows = f.get_slice("big")[first:first + count]
        after = m.io()
    served = after["wchar"] - before["wchar"]  # the daemon's replies to the kernel
    read = after["rchar"] - before["rchar"]  # what it read: Q8_0 blocks and the FUSE requests
    want = np.fromfile(m / "f32" / "big", dtype="<f4").reshape(ROWS, COLS)[first:first + count]
    assert np.array_equal(rows.view(np.uint32), want.view(np.uint32))
    row_bytes = count * COLS * 4
    print(f"get_slice of {row_bytes} bytes: the daemon served {served} and read {read} bytes")
    assert row_bytes <= served <= row_bytes + 128 * 1024 + 8 * 1024
    # Just the blocks of what it served: a Q8_0 block is 34 bytes for 32 float32 (128 bytes).
    assert read <= served * 34 // 128 + 4096
