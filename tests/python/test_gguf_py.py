"""llama.cpp's own Python package (gguf-py) reading what ggufs serves.

gguf.GGUFReader on MNT/model.gguf must read what it reads from the original file (llama.cpp's
merge for a split model), and agree with ggufs's gguf.json; gguf.quants.dequantize of raw/ bytes
must give f32/'s float32 values.
"""

import json
import math

import numpy as np
import pytest

import gguf
from gguf import GGMLQuantizationType, GGUFValueType

from conftest import file_id, shared_gguf_files

# Largest difference, in float32 ulps, between gguf.quants.dequantize and f32/ per type, for every
# type gguf-py 0.19.0 dequantizes. All are bit-exact: gguf/quants.py computes every type in
# float32 with the operations of ggml's dequantize_row_* in the same order (d * q, d * (q - 8),
# d * q + m, ...; scales and the K-quants' sub-block scales as float32 products; float16 d and
# the E8M0/UE4M3 scales of MXFP4/NVFP4 converted exactly), so nothing rounds differently.
MAX_ULPS = {t: 0 for t in (
    "F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K",
    "Q6_K", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ1_S", "IQ1_M", "IQ4_NL",
    "IQ4_XS", "TQ1_0", "TQ2_0", "MXFP4", "NVFP4")}
# Types gguf-py cannot dequantize (quants.dequantize raises NotImplementedError): it has no
# class for them in gguf/quants.py (Q2_0: no type id either). Listed so that a gguf-py that learns one is noticed.
NOT_DEQUANTIZED = {"F64", "I8", "I16", "I32", "I64", "Q8_1", "Q8_K", "Q1_0", "Q2_0"}
# Types gguf-py cannot even read a file of: Q2_0 (id 42) is missing from its
# GGMLQuantizationType; for Q8_1 its GGML_QUANT_SIZES has the old 40-byte block (float d and s)
# where ggml's block_q8_1 is 36 bytes (two float16), so the tensor data cannot be reshaped.
NOT_READ = {"Q2_0", "Q8_1"}

SHARED = shared_gguf_files()


def original_of(path):
    """The file GGUFReader on the mount's model.gguf must match: the file itself, or for the first
    shard of a split model llama.cpp's merge of it (llama-gguf-split --merge), kept in split/."""
    if path.parent.name == "split":
        return path.parent / (path.name.split("-00001-of-")[0] + "-merged.gguf")
    return path


def read(path):
    try:
        return gguf.GGUFReader(path), None
    except Exception as e:  # what gguf-py raises on a file it cannot read is part of the result
        return None, f"{type(e).__name__}: {e}"


def leaves(field):
    """The values of a field, flattened as gguf-py flattens nested arrays: strings decoded (bytes
    that are not UTF-8 as U+FFFD, as gguf.json has them), numbers as NumPy scalars."""
    last = field.types[-1] if field.types else None
    out = []
    for i in field.data:
        part = field.parts[i]
        out.append(bytes(part).decode("utf-8", "replace") if last == GGUFValueType.STRING
                   else part[0])
    return out


def json_leaves(entry):
    """gguf.json's value flattened the same way, with the chain of types of its first element."""
    types = [entry["type"]]
    if entry["type"] != "array":
        return types, [entry["value"]]
    types.append(entry["element_type"])
    if entry["element_type"] != "array":
        return types, list(entry["value"])
    values = []
    for i, inner in enumerate(entry["value"]):
        t, v = json_leaves(inner)
        if i == 0:
            types = types[:1] + t
        values += v
    return types, values


def same_value(json_value, value, type_name):
    if type_name in ("float32", "float64"):
        dtype = np.float32 if type_name == "float32" else np.float64
        expected = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}.get(json_value, json_value)
        a, b = dtype(expected), dtype(value)
        return (np.isnan(a) and np.isnan(b)) or a.tobytes() == b.tobytes()
    if type_name == "bool":
        return json_value is bool(value)
    if type_name == "string":
        return json_value == value
    return int(json_value) == int(value)


@pytest.mark.parametrize("path", SHARED, ids=file_id)
def test_reader_on_mount_equals_original_and_gguf_json(path, testdata, mount):
    # One test for both comparisons: GGUFReader takes seconds on a vocabulary of 100 000 tokens.
    m = mount(path)
    got, got_error = read(m / "model.gguf")
    want, want_error = read(original_of(path))
    # A file gguf-py cannot read must fail in the same way through the mount.
    assert got_error == want_error
    if want is None:
        assert path.stem in NOT_READ, want_error
        return
    same_as_original(got, want)
    same_as_gguf_json(got, json.loads((m / "gguf.json").read_text()), m, path)


def same_as_original(got, want):
    assert list(got.fields) == list(want.fields)
    for key, field in want.fields.items():
        other = got.fields[key]
        assert other.types == field.types, key
        # Every part (lengths, type codes, values) byte for byte: NaN payloads and -0.0 included.
        assert len(other.parts) == len(field.parts), key
        for a, b in zip(other.parts, field.parts):
            assert a.tobytes() == b.tobytes(), key
    assert len(got.tensors) == len(want.tensors)
    for a, b in zip(got.tensors, want.tensors):
        assert (a.name, a.tensor_type, list(a.shape), a.n_elements, a.n_bytes) == \
            (b.name, b.tensor_type, list(b.shape), b.n_elements, b.n_bytes)
        assert a.data_offset == b.data_offset, a.name
        assert np.asarray(a.data).tobytes() == np.asarray(b.data).tobytes(), a.name


def same_as_gguf_json(reader, doc, m, path):
    header = doc["header"]
    assert int(reader.fields["GGUF.version"].parts[-1][0]) == header["version"]
    assert int(reader.fields["GGUF.tensor_count"].parts[-1][0]) == header["tensor_count"]
    assert int(reader.fields["GGUF.kv_count"].parts[-1][0]) == header["metadata_kv_count"]
    keys = [k for k in reader.fields if not k.startswith("GGUF.")]
    if path.parent.name != "split":  # the merge moves split.count last (README, model.gguf)
        assert keys == [e["key"] for e in doc["metadata"]]
    entries = {e["key"]: e for e in doc["metadata"]}
    assert sorted(keys) == sorted(entries)
    for key in keys:
        field = reader.fields[key]
        types, values = json_leaves(entries[key])
        if path.parent.name == "split" and key == "split.count":
            values = [0]  # model.gguf sets it to 0, as llama-gguf-split --merge does
        # gguf-py keeps the element type only for a non-empty array.
        assert [t.name.lower() for t in field.types] == types[:len(field.types)], key
        got = leaves(field)
        assert len(got) == len(values), key
        for j, v in zip(values, got):
            assert same_value(j, v, types[-1]), (key, j, v)
    assert [t.name for t in reader.tensors] == [t["name"] for t in doc["tensors"]]
    for t, e in zip(reader.tensors, doc["tensors"]):
        assert (t.tensor_type.name, [int(n) for n in t.shape], int(t.n_elements), int(t.n_bytes)) \
            == (e["type"], e["ne"], e["n_elements"], e["n_bytes"]), t.name
        if path.parent.name != "split":  # model.gguf is the file itself
            assert int(t.data_offset) == e["file_offset"], t.name
        assert np.asarray(t.data).tobytes() == (m / "raw" / t.name).read_bytes(), t.name


def ulps(a, b):
    """Per element, how many float32 values lie between a and b (0 where both are NaN)."""
    def ordered(x):
        i = x.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    d = np.abs(ordered(a) - ordered(b))
    d[np.isnan(a) & np.isnan(b)] = 0
    return d


def conformance_files():
    return [p for p in SHARED if p.parent.name == "conformance"]


@pytest.mark.parametrize("path", conformance_files(), ids=file_id)
def test_dequantize_matches_f32(path, testdata, mount):
    type_name = path.stem
    m = mount(path)
    doc = json.loads((m / "gguf.json").read_text())
    assert type_name in MAX_ULPS or type_name in NOT_DEQUANTIZED
    worst = 0
    for t in doc["tensors"]:
        raw = np.fromfile(m / "raw" / t["name"], dtype=np.uint8)
        try:
            qtype = GGMLQuantizationType(t["type_id"])
            out = gguf.quants.dequantize(raw, qtype).reshape(-1).astype(np.float32)
        except (ValueError, NotImplementedError):
            assert type_name in NOT_DEQUANTIZED, f"gguf-py cannot dequantize {type_name}"
            return
        assert type_name in MAX_ULPS, f"gguf-py now dequantizes {type_name}: add its bound"
        want = np.fromfile(m / "f32" / t["name"], dtype="<f4")
        assert out.shape == want.shape, t["name"]
        assert (np.isnan(out) == np.isnan(want)).all(), t["name"]
        worst = max(worst, int(ulps(out, want).max()))
    assert worst <= MAX_ULPS[type_name]
