"""A reader of the safetensors format written from its specification, for the tests.

Format (safetensors' README, "Format"): 8 bytes, a little-endian u64 N; N bytes of UTF-8 JSON
(an object: "__metadata__" maps strings to strings, every other key is a tensor with "dtype",
"shape" and "data_offsets" [begin, end) relative to the byte buffer); then the byte buffer. The
data_offsets must cover the buffer exactly, without holes or overlaps; N is at most 100 000 000.

read(path) returns (metadata, {name: numpy array}), each array an np.memmap of the file.
"""
import json

import numpy as np

DTYPES = {
    "F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2",  # BF16 as its bits
    "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1", "U8": "u1", "BOOL": "?",
}
MAX_HEADER = 100_000_000


def read(path):
    with open(path, "rb") as f:
        head = f.read(8)
        assert len(head) == 8, "shorter than the header length"
        n = int.from_bytes(head, "little")
        assert n <= MAX_HEADER, f"header length {n} above the limit"
        text = f.read(n)
        assert len(text) == n, "file ends inside the header"
        f.seek(0, 2)
        size = f.tell()
    header = json.loads(text.decode("utf-8"))
    assert isinstance(header, dict)
    metadata = header.pop("__metadata__", {})
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    start = 8 + n
    spans = []
    arrays = {}
    for name, info in header.items():
        dtype = np.dtype(DTYPES[info["dtype"]])
        shape = tuple(info["shape"])
        begin, end = info["data_offsets"]
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        assert end - begin == count * dtype.itemsize, (name, begin, end, shape)
        spans.append((begin, end, name))
        if count == 0:
            arrays[name] = np.zeros(shape, dtype)
        else:
            arrays[name] = np.memmap(path, dtype=dtype, mode="r", offset=start + begin, shape=shape)
    spans.sort()
    at = 0
    for begin, end, name in spans:
        assert begin == at, f"{name}: a hole or an overlap at byte {at} of the buffer"
        at = end
    assert start + at == size, f"the buffer is {size - start} bytes, the tensors cover {at}"
    return metadata, arrays
