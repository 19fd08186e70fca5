"""Imported once by llama_converter's forkserver: llama.cpp's converter, as its own command line
would import it, and the modules every conversion loads (torch, transformers' config, tokenizer
and safetensors code), so that a conversion forked from here imports nothing of them again.

Run as `python convert_hf_to_gguf.py`, the converter puts its own gguf-py first on sys.path
(unless NO_LOCAL_GGUF is set) and the tests add HF_HUB_OFFLINE and TRANSFORMERS_OFFLINE; both
are done here before anything imports gguf or huggingface_hub.
"""

import importlib.util
import os
import pathlib
import sys

_LLAMA_CPP = pathlib.Path(os.environ.get("GGUFS_LLAMA_CPP") or "/var/cache/ggufs-tests/llama.cpp")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.pop("NO_LOCAL_GGUF", None)
sys.path.insert(0, str(_LLAMA_CPP / "gguf-py"))

_converter = None


def converter():
    """The converter's module (convert_hf_to_gguf.py imported under its own name, so that its
    `if __name__ == "__main__"` does not run)."""
    global _converter
    if _converter is None:
        path = _LLAMA_CPP / "convert_hf_to_gguf.py"
        spec = importlib.util.spec_from_file_location("convert_hf_to_gguf", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["convert_hf_to_gguf"] = module
        sys.path.insert(1, str(_LLAMA_CPP))  # its conversion/ package
        spec.loader.exec_module(module)
        _converter = module
    return _converter


try:
    converter()
    import torch  # noqa: F401
    import transformers  # noqa: F401
    from transformers import AutoConfig, AutoTokenizer  # noqa: F401
    import safetensors.torch  # noqa: F401
except Exception:  # a conversion then imports (and fails) in its own process, with its log
    pass
