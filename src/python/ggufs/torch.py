"""ggufs.torch: a view's state_dict as CPU torch tensors, read in-process."""

from ._safetensors import safe_open

_HF_DTYPE = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}


def load_state_dict(source, view: str = "hf", dtype=None, **options) -> dict:
    """Every tensor of `view` ("hf", "hf-mxfp4", "mlx" or "model.safetensors") by its key, as
    ``safetensors.torch.load_file`` gives it from the mount's files. dtype: torch.float32,
    torch.float16 or torch.bfloat16 (or their names): hf/'s dtype (-o hf_dtype; the default is
    float32, as the mount's). Raises what ggufs.safe_open raises; ValueError for another dtype."""
    if dtype is not None:
        name = str(dtype).rsplit(".", 1)[-1]
        if name not in _HF_DTYPE:
            raise ValueError(f"dtype {dtype}: must be float32, float16 or bfloat16")
        options["hf_dtype"] = _HF_DTYPE[name]
    with safe_open(source, framework="pt", view=view, **options) as f:
        return {k: f.get_tensor(k) for k in f.keys()}
