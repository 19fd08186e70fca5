"""ggufs.transformers: the model and tokenizer ``from_pretrained(MNT/hf)`` gives, built from hf/'s
files read in-process, with no file written: config.json through the config class's from_dict,
the weights as a state_dict (from_pretrained's ``state_dict=``), generation_config.json, and the
tokenizer from tokenizer.json and tokenizer_config.json (its ``tokenizer_object``)."""

import json

from ._model import Model
from .torch import load_state_dict


def _json(model: Model, path: str):
    return json.loads(model.read(path))


def config(source, view: str = "hf", **options):
    """The transformers config of hf/config.json (AutoConfig's class for its model_type)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    with _opened(source, options) as (m, _):
        d = _json(m, f"{view}/config.json")
    return CONFIG_MAPPING[d["model_type"]].from_dict(d)


class _opened:
    def __init__(self, source, options):
        self._own = not isinstance(source, Model)
        self._m = Model(source, **options) if self._own else source

    def __enter__(self):
        return self._m, self._own

    def __exit__(self, *exc):
        if self._own:
            self._m.close()


def tokenizer(source, view: str = "hf", **options):
    """The tokenizer AutoTokenizer.from_pretrained(MNT/hf) gives: tokenizer_config.json's
    tokenizer_class, built on tokenizer.json."""
    import transformers
    from tokenizers import Tokenizer

    from transformers import AddedToken

    def added(v):  # a serialized AddedToken, as from_pretrained reads it back
        if isinstance(v, dict) and "content" in v:
            return AddedToken(**{k: x for k, x in v.items() if k != "__type"})
        return v

    with _opened(source, options) as (m, _):
        names = m.listdir(view)
        init = {k: added(v) for k, v in _json(m, f"{view}/tokenizer_config.json").items()}
        if "added_tokens_decoder" in init:
            init["added_tokens_decoder"] = {
                int(i): added(v) for i, v in init["added_tokens_decoder"].items()}
        if "special_tokens_map.json" in names:
            for k, v in _json(m, f"{view}/special_tokens_map.json").items():
                init.setdefault(k, [added(x) for x in v] if isinstance(v, list) else added(v))
        if "chat_template.jinja" in names:
            init["chat_template"] = m.read(f"{view}/chat_template.jinja").decode()
        backend = Tokenizer.from_str(m.read(f"{view}/tokenizer.json").decode())
    cls_name = init.pop("tokenizer_class", None) or "PreTrainedTokenizerFast"
    cls = getattr(transformers, cls_name, None)
    if cls is None and cls_name.endswith("Fast"):
        cls = getattr(transformers, cls_name[: -len("Fast")], None)
    if cls is None:
        cls = transformers.PreTrainedTokenizerFast
    init.pop("auto_map", None)
    return cls(tokenizer_object=backend, **init)


def _model_class(transformers, cfg, d):
    """config.json's architectures[0] where transformers has that class; else (a converter's
    spelling, PhiMoEForCausalLM for PhimoeForCausalLM) the class AutoModelForCausalLM or
    AutoModelForSeq2SeqLM maps the config's class to."""
    names = d.get("architectures") or []
    if names and hasattr(transformers, names[0]):
        return getattr(transformers, names[0])
    for auto in (transformers.AutoModelForCausalLM, transformers.AutoModelForSeq2SeqLM):
        try:
            return auto._model_mapping[type(cfg)]
        except KeyError:
            continue
    raise ValueError(f"transformers has no model class for {names or d.get('model_type')}")


def from_pretrained(source, view: str = "hf", tokenizer_too: bool = True, **kwargs):
    """(model, tokenizer) as ``AutoModelForCausalLM``'s class (config.json's architectures[0])
    and ``AutoTokenizer`` from_pretrained(MNT/hf) give them; ``tokenizer_too=False``: the model
    only. ggufs.open's options (hf_dtype, mmproj, ...) go to the source; the other keyword
    arguments to from_pretrained (torch_dtype / dtype, ...). Raises ViewUnavailable when the
    file has no hf/ (the mount's reason), and what ggufs.open raises."""
    import transformers
    from transformers import GenerationConfig
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    option_names = {"hf_dtype", "mmproj", "hf_max_shard_size", "cache_dir", "token", "threads",
                    "ca_file", "cache_size_mib", "read_timeout", "s3_path_style",
                    "s3_virtual_host", "s3_anonymous"}
    options = {k: kwargs.pop(k) for k in list(kwargs) if k in option_names}
    with _opened(source, options) as (m, _):
        d = _json(m, f"{view}/config.json")
        cfg = CONFIG_MAPPING[d["model_type"]].from_dict(d)
        state_dict = load_state_dict(m, view=view)
        gen = (_json(m, f"{view}/generation_config.json")
               if "generation_config.json" in m.listdir(view) else None)
        tok = tokenizer(m, view) if tokenizer_too else None
    cls = _model_class(transformers, cfg, d)
    model = cls.from_pretrained(None, config=cfg, state_dict=state_dict, **kwargs)
    # from_pretrained names the folder it read; here, the source.
    model.config._name_or_path = m.source
    if gen is not None:
        g = GenerationConfig.from_dict(gen)
        # As GenerationConfig.from_pretrained marks it: read from a file, not modified since.
        g._original_object_hash = hash(g)
        model.generation_config = g
    return (model, tok) if tokenizer_too else model
