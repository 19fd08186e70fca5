"""ggufs.safe_open: a view's safetensors files read in-process, as safetensors' safe_open reads
them (keys, get_tensor, get_slice, metadata), with no file written.

The format (safetensors' README, "Format"): 8 bytes, the header's size N (little-endian u64); N
bytes of JSON mapping each name to {"dtype", "shape", "data_offsets": [begin, end]} relative to
the byte after the header, and "__metadata__" to a str -> str map.
"""

import json
import struct

import numpy as np

from ._model import Model, aligned_empty

# safetensors' dtype names -> NumPy (BF16 as its 16 bits; F8 kinds as their bytes).
_NP = {
    "F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2",
    "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
    "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1", "BOOL": "?",
    "F8_E4M3": "u1", "F8_E5M2": "u1", "F8_E8M0": "u1",
}
_FRAMEWORKS = ("np", "numpy", "pt", "torch", "mlx")
_PAGE = 4096  # bytes: a page, as mmap places a file's bytes
# safetensors' dtype names -> torch's, for the dtypes read straight into a torch tensor.
_TORCH = {
    "F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16",
    "I64": "int64", "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8", "BOOL": "bool",
}

# safetensors' dtype names -> MLX's, for the dtypes read straight into an MLX array.
_MLX = {
    "F32": "float32", "F16": "float16", "BF16": "bfloat16", "I64": "int64", "I32": "int32",
    "I16": "int16", "I8": "int8", "U64": "uint64", "U32": "uint32", "U16": "uint16", "U8": "uint8",
    "BOOL": "bool_",
}


def _files(model: Model, view: str):
    if view == "model.safetensors":
        return ["model.safetensors"]
    names = model.listdir(view)
    if "model.safetensors.index.json" in names:
        index = json.loads(model.read(f"{view}/model.safetensors.index.json"))
        return [f"{view}/{f}" for f in dict.fromkeys(index["weight_map"].values())]
    return [f"{view}/model.safetensors"]


class _Slice:
    """safetensors' PySafeSlice: the shape and dtype, and part of a tensor by indexing (the
    whole tensor is read, then indexed)."""

    def __init__(self, handle, name):
        self._h, self._name = handle, name

    def get_shape(self):
        return list(self._h._entries[self._name][2])

    def get_dtype(self):
        return self._h._entries[self._name][1]

    def __getitem__(self, index):
        return self._h._convert(self._h._array(self._name)[index], self.get_dtype())


class safe_open:
    """``ggufs.safe_open(source, framework="np", view="hf")`` as ``safetensors.safe_open`` of
    the mount's files: view "hf", "hf-mxfp4" or "mlx" (a folder view, every shard of it) or
    "model.safetensors". framework: "np", "pt" (CPU torch tensors) or "mlx". `source` is what
    ggufs.open takes, or an open Model; `options` go to ggufs.open.

    Raises ViewUnavailable (the view is absent, with the mount's reason), GGUFError, ReadError,
    KeyError (no such tensor), ValueError (a bad framework).
    """

    def __init__(self, source, framework="np", view="hf", device="cpu", **options):
        if framework not in _FRAMEWORKS:
            raise ValueError(f"framework {framework!r}: must be np, pt or mlx")
        if device != "cpu":
            raise ValueError(f"device {device!r}: ggufs reads into CPU memory only")
        self._own = not isinstance(source, Model)
        self._model = Model(source, **options) if self._own else source
        self._framework = framework
        self._entries = {}
        self._metadata = None
        for path in _files(self._model, view):
            (n,) = struct.unpack("<Q", self._model.read(path, 0, 8))
            header = json.loads(self._model.read(path, 8, n))
            meta = header.pop("__metadata__", None)
            if self._metadata is None and meta is not None:
                self._metadata = meta
            for key, e in header.items():
                begin, end = e["data_offsets"]
                self._entries[key] = (path, e["dtype"], tuple(e["shape"]), 8 + n + begin, end - begin)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._own:
            self._model.close()

    def keys(self):
        return list(self._entries)

    def metadata(self):
        return self._metadata

    def _array(self, name):
        path, dtype, shape, offset, nbytes = self._entries[name]
        arr = aligned_empty(nbytes, np.dtype(_NP[dtype]), shape)
        got = self._model.readinto(path, offset, arr.reshape(-1).view(np.uint8))
        if got != nbytes:
            raise OSError(5, f"{path}: {name}: {got} of {nbytes} bytes read")
        return arr

    def _convert(self, arr, dtype):
        if self._framework in ("np", "numpy"):
            return arr
        if self._framework in ("pt", "torch"):
            import torch

            t = torch.from_numpy(np.ascontiguousarray(arr))
            return t.view(torch.bfloat16) if dtype == "BF16" else t
        import mlx.core as mx

        a = mx.array(arr)
        return a.view(mx.bfloat16) if dtype == "BF16" else a

    def _torch_tensor(self, name):
        # Read straight into a tensor of torch's own allocator: one buffer, no NumPy array to
        # convert. It starts where safetensors' own safe_open would map it, at the byte of a page
        # that its offset in the file gives (safetensors maps the file; from_pretrained keeps those
        # mapped tensors as the weights): BLAS kernels choose their code by their operands'
        # alignment, so only then are a model's logits the mount's bit for bit.
        import torch

        path, dtype, shape, offset, nbytes = self._entries[name]
        t = torch.empty(nbytes + _PAGE, dtype=torch.uint8)
        skip = (offset - t.data_ptr()) % _PAGE
        t = t[skip:skip + nbytes]
        got = self._model.readinto(path, offset, t)
        if got != nbytes:
            raise OSError(5, f"{path}: {name}: {got} of {nbytes} bytes read")
        return t.view(getattr(torch, _TORCH[dtype])).reshape(shape)

    def _mlx_array(self, name):
        # Read straight into an array of MLX's own allocator (mx.load's), not through a NumPy
        # array that mx.array would copy: one buffer. mx.zeros is lazy; eval gives it memory.
        import mlx.core as mx

        path, dtype, shape, offset, nbytes = self._entries[name]
        a = mx.zeros(shape, getattr(mx, _MLX[dtype]))
        mx.eval(a)
        got = self._model.readinto(path, offset, a)
        if got != nbytes:
            raise OSError(5, f"{path}: {name}: {got} of {nbytes} bytes read")
        return a

    def get_tensor(self, name):
        """Tensor `name` whole, in the framework's type. KeyError when there is none."""
        if name not in self._entries:
            raise KeyError(name)
        dtype = self._entries[name][1]
        if self._framework in ("pt", "torch") and dtype in _TORCH:
            return self._torch_tensor(name)
        if self._framework == "mlx" and dtype in _MLX:
            return self._mlx_array(name)
        return self._convert(self._array(name), dtype)

    def get_slice(self, name):
        if name not in self._entries:
            raise KeyError(name)
        return _Slice(self, name)
