"""Imported once by llama_converter's forkserver: llama.cpp's converter, as its own command line
would import it, and the modules every conversion loads (torch, transformers' config, tokenizer
and safetensors code), so that a conversion forked from here imports nothing of them again.

Run as `python convert_hf_to_gguf.py`, the converter puts its own gguf-py first on sys.path
(unless NO_LOCAL_GGUF is set); the environment is the one the tests run it in as a subprocess
(llama_converter.converter_env: offline, that gguf-py first). Both are set here, before anything
imports gguf or huggingface_hub.
"""

import importlib.util
import os
import sys

from llama_converter import LLAMA_CPP, converter_env

_env = converter_env()
os.environ.clear()
os.environ.update(_env)
sys.path.insert(0, str(LLAMA_CPP / "gguf-py"))  # PYTHONPATH is read only at startup

_converter = None


def converter():
    """The converter's module (convert_hf_to_gguf.py imported under its own name, so that its
    `if __name__ == "__main__"` does not run)."""
    global _converter
    if _converter is None:
        path = LLAMA_CPP / "convert_hf_to_gguf.py"
        spec = importlib.util.spec_from_file_location("convert_hf_to_gguf", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["convert_hf_to_gguf"] = module
        sys.path.insert(1, str(LLAMA_CPP))  # its conversion/ package
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
