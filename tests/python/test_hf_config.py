"""config.json and generation_config.json of a GGUF model (src/hf/hf_config.cpp) against
transformers 4.57.6 and 5.24.0 themselves.

The oracle: AutoConfig.from_pretrained(<folder holding our config.json>).to_dict() must equal
AutoConfig.from_pretrained(<dir>, gguf_file=<file>).to_dict(), transformers' own GGUF import.
Two keys are left out of the comparison: `_name_or_path` (the folder each was loaded from, which
necessarily differs) and `transformers_version` (to_dict always writes the running version).
Likewise our generation_config.json, loaded with GenerationConfig.from_pretrained, must equal
GenerationConfig.from_model_config(<transformers' config>), which is what from_pretrained(dir,
gguf_file=...) gives a model (it finds no generation_config.json for a GGUF).

The GGUF files are written here with gguf-py's GGUFWriter, holding the keys llama.cpp's converter
(convert_hf_to_gguf.py) writes for each architecture, a tokenizer and a few tensors; plus the
shared tiny llama, the shared vocab files and the split tiny llama (via its merged file).

Our side comes from the test-only executable ggufs-test-hf-config (tests/support/hf_config_dump.cpp):
$GGUFS_HF_CONFIG_DUMP, else <repo>/build/ggufs-test-hf-config; the tests skip where it is absent.
"""

import json
import pathlib
import subprocess

import numpy as np
import pytest

from conftest import _testdata_dir, once_per_file

gguf = pytest.importorskip("gguf")
transformers = pytest.importorskip("transformers")
from transformers import AutoConfig, GenerationConfig  # noqa: E402

IGNORED = ("_name_or_path", "transformers_version")
TRANSFORMERS_5 = transformers.__version__.split(".")[0] == "5"
# Runtime flags of a generation config, not the model: transformers 5's
# GenerationConfig.from_model_config (generation/configuration_utils.py) copies them from the
# model config (use_cache True, output_attentions and output_hidden_states False) where
# GenerationConfig.from_pretrained leaves them None; generate() reads None as those same values
# (_get_default_generation_params). Under 4.57.6 both sides hold the class defaults.
RUNTIME_FLAGS = ("use_cache", "output_attentions", "output_hidden_states")


def ours(tool, path, what=None):
    """(exit code, stdout, stderr) of the dump tool on `path`."""
    args = [str(tool)] + ([what] if what else []) + [str(path)]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


def without_ignored(d):
    return {k: v for k, v in d.items() if k not in IGNORED}


def generation_dict(d):
    """A generation config's dict less IGNORED, and under transformers 5 less RUNTIME_FLAGS."""
    flags = RUNTIME_FLAGS if TRANSFORMERS_5 else ()
    return {k: v for k, v in without_ignored(d).items() if k not in flags}


def theirs(path):
    """transformers' own GGUF import of `path`'s config (once per shared file)."""
    return once_per_file("config", path, lambda p: AutoConfig.from_pretrained(
        str(p.parent), gguf_file=p.name))


def assert_same_config(tool, path, tmp_path):
    """Our config.json and generation_config.json of `path` load in transformers as its own GGUF
    import does."""
    rc, out, err = ours(tool, path)
    assert rc == 0, f"no config for {path}: {err}"
    folder = tmp_path / "hf"
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(out)
    reference = theirs(path)
    mine = AutoConfig.from_pretrained(str(folder))
    assert without_ignored(mine.to_dict()) == corrected(path, without_ignored(reference.to_dict()))

    rc, gen, err = ours(tool, path, "--generation")
    assert rc == 0, err
    (folder / "generation_config.json").write_text(gen)
    expected = GenerationConfig.from_model_config(reference)
    for field in ids_not_in_file(path):
        setattr(expected, field, None)
    got = GenerationConfig.from_pretrained(str(folder))
    assert generation_dict(got.to_dict()) == generation_dict(expected.to_dict())
    # The file itself is what save_pretrained writes (its diff against the defaults).
    assert generation_dict(json.loads(gen)) == generation_dict(expected.to_diff_dict())
    return json.loads(out)


def gguf_fields(path):
    """The file's key-value pairs, scalars as Python values (gguf-py's reader; once per shared
    file)."""

    def read(p):
        fields = {}
        for name, field in gguf.GGUFReader(p).fields.items():
            if len(field.types) == 1 and field.types[0] != gguf.GGUFValueType.ARRAY:
                fields[name] = field.contents()
        return fields

    return once_per_file("fields", path, read)


# The special token ids llama.cpp's converter writes, under the config fields they come from
TOKEN_IDS = (("tokenizer.ggml.bos_token_id", "bos_token_id"),
             ("tokenizer.ggml.eos_token_id", "eos_token_id"),
             ("tokenizer.ggml.padding_token_id", "pad_token_id"))


def ids_not_in_file(path):
    """The config fields of the special token ids `path` does not hold."""
    fields = gguf_fields(str(path))
    return [field for key, field in TOKEN_IDS if key not in fields]


def corrected(path, expected):
    """transformers' import of `path`, corrected where it is not the model llama.cpp's converter
    converted (the original wins; hf/ is its inverse). Each correction comes from the file itself
    and names the transformers bug:
    - floats: the converter stores hyperparameters as float32 (gguf_writer.py, add_float32) and
      transformers widens them (9.999999974752427e-07); the original config said the shortest
      decimal of that float32 (1e-06), which is what reads back as it;
    - qwen3 and qwen3moe: GGUF_CONFIG_MAPPING (integrations/ggml.py) maps no qwen3
      attention.key_length, so head_dim is Qwen3Config's default 128, not the file's;
    - qwen3moe: nor expert_feed_forward_length, so moe_intermediate_size is the default 768; and
      norm_topk_prob (not in the file) is Qwen3MoeConfig's default False where every Qwen3-MoE
      checkpoint, and transformers 5.24.0's own import, have True;
    - starcoder2's rope.freq_base, phi3's rope.scaling.original_context_length and gpt2's
      context_length as n_positions are not mapped either: the class defaults stay;
    - gemma2 and gemma3: query_pre_attn_scalar is not in the file; llama.cpp scales queries by
      1/sqrt(head_dim), by 1/sqrt(hidden / heads) for the 27B models of 46 and 62 layers
      (src/models/gemma2.cpp, gemma3.cpp), where the import keeps the default 256;
    - qwen2moe: load_gguf_checkpoint renames the architecture to qwen2_moe before it looks the
      keys up, and GGUF_CONFIG_MAPPING lists them as qwen2moe: not one maps, and every dimension
      is Qwen2MoeConfig's default (5.24.0 lists them as qwen2_moe, but for the expert widths);
      the converter wrote them (qwen.py, Qwen2MoeModel.set_gguf_parameters), the expert widths
      included;
    - architectures: save_pretrained writes the model's class (transformers' own mapping of the
      model_type), the import none;
    - a special token id the file does not hold: the converter writes the original's (gguf-py's
      vocab.py, SpecialVocab: its tokenizer's, else its config.json's), so the original had
      None, where the import keeps the class default (Gemma3Config's pad 0, Phi3Config's 32000)."""
    out = dict(expected)
    for k, v in expected.items():
        if isinstance(v, float) and v == float(np.float32(v)):
            out[k] = float(str(np.float32(v)))
    fields = gguf_fields(str(path))
    arch = fields.get("general.architecture")
    if arch in ("qwen3", "qwen3moe", "qwen3_moe"):
        if f"{arch}.attention.key_length" in fields:
            out["head_dim"] = fields[f"{arch}.attention.key_length"]
    if arch in ("qwen3moe", "qwen3_moe"):
        if f"{arch}.expert_feed_forward_length" in fields:
            out["moe_intermediate_size"] = fields[f"{arch}.expert_feed_forward_length"]
        out["norm_topk_prob"] = True
    for key, field in [
        ("starcoder2.rope.freq_base", "rope_theta"),
        ("phi3.rope.scaling.original_context_length", "original_max_position_embeddings"),
        ("gpt2.context_length", "n_positions"),
    ]:
        if arch == key.split(".")[0] and key in fields:
            value = fields[key]
            out[field] = float(str(np.float32(value))) if isinstance(value, float) else value
    if arch in ("gemma2", "gemma3"):
        layers = fields.get(f"{arch}.block_count")
        if layers == {"gemma2": 46, "gemma3": 62}[arch]:
            heads = fields[f"{arch}.attention.head_count"]
            out["query_pre_attn_scalar"] = fields[f"{arch}.embedding_length"] // heads
        elif f"{arch}.attention.key_length" in fields:
            out["query_pre_attn_scalar"] = fields[f"{arch}.attention.key_length"]
    if arch == "qwen2moe":
        for suffix, field in [
            ("context_length", "max_position_embeddings"),
            ("block_count", "num_hidden_layers"),
            ("feed_forward_length", "intermediate_size"),
            ("embedding_length", "hidden_size"),
            ("rope.freq_base", "rope_theta"),
            ("attention.head_count", "num_attention_heads"),
            ("attention.head_count_kv", "num_key_value_heads"),
            ("attention.layer_norm_rms_epsilon", "rms_norm_eps"),
            ("vocab_size", "vocab_size"),
            ("expert_count", "num_experts"),
            ("expert_used_count", "num_experts_per_tok"),
            ("expert_feed_forward_length", "moe_intermediate_size"),
            ("expert_shared_feed_forward_length", "shared_expert_intermediate_size"),
        ]:
            if f"qwen2moe.{suffix}" in fields:
                value = fields[f"qwen2moe.{suffix}"]
                out[field] = float(str(np.float32(value))) if isinstance(value, float) else value
    if "rope_theta" in out and "rope_parameters" in expected:
        # transformers 5 holds rope_theta in rope_parameters
        theta = out.pop("rope_theta")
        out["rope_parameters"] = dict(expected["rope_parameters"], rope_theta=theta)
    for field in ids_not_in_file(path):
        if field in out:
            out[field] = None
    model_type = expected.get("model_type")
    causal_lm = transformers.models.auto.modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    if model_type in causal_lm:
        out["architectures"] = [causal_lm[model_type]]
    return out


# --- GGUF files as llama.cpp's converter writes them -------------------------------------------

VOCAB = 16


def add_llama_tokenizer(w, bos=1, eos=2):
    w.add_tokenizer_model("llama")
    w.add_token_list(["<unk>", "<s>", "</s>"] + [f"\u2581t{i}" for i in range(VOCAB - 3)])
    w.add_token_scores([0.0] * VOCAB)
    w.add_token_types([2, 3, 3] + [1] * (VOCAB - 3))
    w.add_bos_token_id(bos)
    w.add_eos_token_id(eos)
    w.add_unk_token_id(0)


def add_gpt2_tokenizer(w, bos=0, eos=1, pad=None):
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(["a", "b", "ab"] + [f"t{i}" for i in range(VOCAB - 3)])
    w.add_token_types([1] * VOCAB)
    w.add_token_merges(["a b"])
    w.add_bos_token_id(bos)
    w.add_eos_token_id(eos)
    if pad is not None:
        w.add_pad_token_id(pad)


def add_base_hparams(
    w, eps_kind="rms", rope=True, kv=2, layers=2, ctx=128, ff=40, rope_base=1000000.0, file_type=0
):
    """The hyperparameters TextModel.set_gguf_parameters of convert_hf_to_gguf.py writes, for a
    tiny decoder of hidden size 16 and 4 heads (kv heads None: no key; file_type None: none)."""
    w.add_block_count(layers)
    w.add_context_length(ctx)
    w.add_embedding_length(16)
    w.add_feed_forward_length(ff)
    w.add_head_count(4)
    if kv is not None:
        w.add_head_count_kv(kv)
    if rope:
        w.add_rope_freq_base(rope_base)
    if eps_kind == "rms":
        w.add_layer_norm_rms_eps(1e-6)
    else:
        w.add_layer_norm_eps(1e-5)
    if file_type is not None:
        w.add_file_type(file_type)


def llama(w):
    add_base_hparams(w)
    w.add_vocab_size(VOCAB)
    # head_dim 8, not hidden / heads = 4 (as in Mistral-Nemo), so that its mapping shows
    w.add_rope_dimension_count(8)
    add_llama_tokenizer(w)


def llama_no_vocab_key(w):
    add_base_hparams(w)
    w.add_rope_dimension_count(4)
    add_llama_tokenizer(w, bos=5, eos=6)


def qwen2(w):
    add_base_hparams(w)
    add_gpt2_tokenizer(w, bos=3, eos=4, pad=4)


def qwen2moe(w):
    add_base_hparams(w)
    w.add_expert_count(4)
    w.add_expert_used_count(2)
    w.add_expert_feed_forward_length(8)
    w.add_expert_shared_feed_forward_length(24)
    add_gpt2_tokenizer(w)


def qwen3(w):
    add_base_hparams(w)
    w.add_key_length(8)
    w.add_value_length(8)
    add_gpt2_tokenizer(w, bos=2, eos=5)


def qwen3moe(w):
    qwen3(w)
    w.add_expert_count(8)
    w.add_expert_used_count(2)
    w.add_expert_feed_forward_length(12)


def gemma2(w):
    add_base_hparams(w, rope=False)
    w.add_key_length(8)
    w.add_value_length(8)
    w.add_attn_logit_softcapping(50.0)
    w.add_final_logit_softcapping(30.0)
    w.add_sliding_window(64)
    add_llama_tokenizer(w, bos=2, eos=1)
    w.add_pad_token_id(0)


def gemma3(w):
    add_base_hparams(w)
    w.add_key_length(8)
    w.add_value_length(8)
    w.add_sliding_window(32)
    add_llama_tokenizer(w)


def phi3(w):
    add_base_hparams(w, rope=False)
    w.add_rope_dimension_count(4)
    w.add_sliding_window(128)
    add_llama_tokenizer(w, bos=1, eos=7)


def gpt2(w):
    add_base_hparams(w, eps_kind="norm", rope=False, kv=None)
    add_gpt2_tokenizer(w, bos=3, eos=3)


def starcoder2(w):
    add_base_hparams(w, eps_kind="norm")
    add_gpt2_tokenizer(w)


def stablelm(w):
    add_base_hparams(w, eps_kind="norm", rope=False)
    w.add_rope_dimension_count(1)
    w.add_parallel_residual(True)
    add_gpt2_tokenizer(w)


def write_gguf(path, arch, fill, name="tiny", tensors=("token_embd.weight", "output_norm.weight")):
    w = gguf.GGUFWriter(str(path), arch)
    if name is not None:
        w.add_name(name)
    fill(w)
    for t in tensors:
        shape = (VOCAB, 16) if t in ("token_embd.weight", "output.weight") else (16,)
        w.add_tensor(t, np.zeros(shape, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def llama_odd_types(w):
    """Types llama.cpp does not write but transformers passes through as they are."""
    V = gguf.GGUFValueType
    w.add_key_value("llama.block_count", 2, V.UINT64)
    w.add_key_value("llama.context_length", 128, V.INT32)
    w.add_key_value("llama.embedding_length", 16, V.UINT16)
    w.add_key_value("llama.feed_forward_length", 40, V.INT64)
    w.add_key_value("llama.attention.head_count", 4, V.UINT8)
    w.add_key_value("llama.attention.head_count_kv", [2], V.ARRAY, V.UINT32)  # one element: 2
    w.add_key_value("llama.rope.freq_base", 500000.25, V.FLOAT64)
    w.add_key_value("llama.attention.layer_norm_rms_epsilon", 1e-5, V.FLOAT64)
    w.add_key_value("llama.rope.dimension_count", 4, V.INT16)
    add_llama_tokenizer(w)


def llama_with_pre(w):
    llama(w)
    w.add_string("tokenizer.ggml.pre", "llama-bpe")


def llama_foreign_keys(w):
    """Keys under another architecture's prefix."""
    llama(w)
    w.add_uint32("gpt2.block_count", 9)  # n_layer
    w.add_uint32("falcon.block_count", 3)  # num_hidden_layers, after llama.block_count
    w.add_uint32("t5.decoder_start_token_id", 5)  # reaches the generation config too
    w.add_string("tokenizer.ggml.pre", "llama-bpe")


def llama_name_list(w):
    """general.name as a list holding "mistral": read_field's list contains it."""
    llama(w)
    w.add_array("general.name", ["x", "mistral"])


TIED = ("token_embd.weight", "output_norm.weight")
UNTIED = TIED + ("output.weight",)

CASES = {
    "llama": ("llama", llama, "tiny-llama", TIED),
    "llama-untied": ("llama", llama, "tiny-llama", UNTIED),
    "llama-vocab-from-tokens": ("llama", llama_no_vocab_key, None, UNTIED),
    "llama-named-mistral": ("llama", llama, "mistral", UNTIED),
    "llama-odd-types": ("llama", llama_odd_types, "tiny", UNTIED),
    "llama-name-list-mistral": ("llama", llama_name_list, None, UNTIED),
    "mistral": ("mistral", llama, "Mistral-7B", UNTIED),
    "qwen3_moe-as-named-by-transformers": ("qwen3_moe", qwen3moe, "qwen3moe tiny", UNTIED),
    "qwen2": ("qwen2", qwen2, "qwen2 tiny", TIED),
    "qwen2moe": ("qwen2moe", qwen2moe, "qwen2moe tiny", UNTIED),
    "qwen3": ("qwen3", qwen3, "qwen3", TIED),
    "qwen3moe": ("qwen3moe", qwen3moe, "qwen3moe tiny", UNTIED),
    "gemma2": ("gemma2", gemma2, "gemma2", TIED),
    "gemma3": ("gemma3", gemma3, "gemma3 tiny", TIED),
    "phi3": ("phi3", phi3, "phi3", UNTIED),
    "gpt2": ("gpt2", gpt2, "gpt2", TIED),
    "starcoder2": ("starcoder2", starcoder2, "starcoder2", TIED),
    "stablelm": ("stablelm", stablelm, "stablelm", UNTIED),
    "stablelm-qkv-bias": (
        "stablelm",
        stablelm,
        "stablelm",
        UNTIED + ("blk.0.attn_q.bias", "blk.0.ffn_norm.weight"),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_architecture(dump_tool, tmp_path, case):
    arch, fill, name, tensors = CASES[case]
    path = write_gguf(tmp_path / f"{case}.gguf", arch, fill, name=name, tensors=tensors)
    written = assert_same_config(dump_tool, path, tmp_path)
    assert "model_type" in written and written["transformers_version"] == "4.57.6"


def test_foreign_keys_are_not_the_models(dump_tool, tmp_path):
    """transformers' import applies every prefix of GGUF_CONFIG_MAPPING (integrations/ggml.py) to
    every file, so a llama's gpt2.block_count lands in its config as n_layer, falcon.block_count
    overwrites num_hidden_layers and t5.decoder_start_token_id becomes one: a transformers bug.
    The converter writes the model's own prefix only, and hf/ reads only that: the config is the
    import of the same file without the foreign keys."""
    foreign = write_gguf(tmp_path / "foreign.gguf", "llama", llama_foreign_keys, tensors=UNTIED)
    own = write_gguf(tmp_path / "own.gguf", "llama", llama_with_pre, tensors=UNTIED)
    assert theirs(foreign).num_hidden_layers == 3  # the bug is there to correct
    rc, out, err = ours(dump_tool, foreign)
    assert rc == 0, err
    (tmp_path / "config.json").write_text(out)
    mine = AutoConfig.from_pretrained(str(tmp_path))
    expected = corrected(own, without_ignored(theirs(own).to_dict()))
    assert without_ignored(mine.to_dict()) == expected
    assert mine.num_hidden_layers == 2 and "n_layer" not in json.loads(out)


@pytest.mark.parametrize(
    "arch,why",
    [
        ("gemma", "gemma (the first) is not in GGUF_CONFIG_MAPPING (4.57.6, 5.24.0)"),
        ("bert", "transformers (4.57.6, 5.24.0) does not import bert from GGUF"),
    ],
)
def test_unsupported_architecture(dump_tool, tmp_path, arch, why):
    path = write_gguf(tmp_path / "m.gguf", arch, llama)
    with pytest.raises(ValueError, match="not supported"):
        theirs(path)
    rc, out, err = ours(dump_tool, path)
    assert rc == 3 and out == "", why
    assert "general.architecture" in err and arch in err


def falcon(w):
    """falcon.py, FalconModel.set_gguf_parameters: its own keys, 2 KV heads of 4."""
    w.add_context_length(2048)
    w.add_embedding_length(16)
    w.add_feed_forward_length(64)
    w.add_block_count(1)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_layer_norm_eps(1e-5)
    add_gpt2_tokenizer(w)


@pytest.mark.parametrize("norms", [1, 2])
def test_falcon(dump_tool, tmp_path, norms):
    """transformers imports falcon with head_count_kv as num_key_value_heads, no FalconConfig
    field (integrations/ggml.py, GGUF_CONFIG_MAPPING): its num_kv_heads is the head count, not
    the model's. Ours: the file's, and the new decoder with one norm, or two where the layers
    hold attn_norm_2 (ln_attn); the dimensions both read agree."""
    tensors = TIED + ("blk.0.attn_norm.weight",) + (("blk.0.attn_norm_2.weight",) * (norms - 1))
    path = write_gguf(tmp_path / "m.gguf", "falcon", falcon, tensors=tensors)
    reference = theirs(path)
    assert reference.num_kv_heads == 4  # the bug is there to correct
    rc, out, err = ours(dump_tool, path)
    assert rc == 0, err
    mine = json.loads(out)
    assert (mine["num_kv_heads"], mine["new_decoder_architecture"]) == (2, True)
    assert mine["num_ln_in_parallel_attn"] == norms
    for k in ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size"):
        assert mine[k] == getattr(reference, k), k


def test_invalid_utf8_string_fails_both(dump_tool, tmp_path):
    """transformers decodes every string strictly: one bad token fails its import, and ours."""

    def fill(w):
        llama(w)
        w.add_key_value("general.description", b"caf\xe9", gguf.GGUFValueType.STRING)

    path = write_gguf(tmp_path / "m.gguf", "llama", fill)
    with pytest.raises(OSError, match="not a valid JSON file"):  # its UnicodeDecodeError, rewrapped
        theirs(path)
    rc, _, err = ours(dump_tool, path)
    assert rc == 3 and "general.description" in err and "UTF-8" in err


# --- Shared files ------------------------------------------------------------------------------


def shared(*parts):
    path = _testdata_dir().joinpath(*parts)
    if not path.is_file():
        pytest.skip(f"the shared test data is absent ({path}; set GGUFS_TESTDATA)")
    return path


def test_shared_tiny_llama(dump_tool, tmp_path):
    assert_same_config(dump_tool, shared("real", "llama-2-tiny-random.gguf"), tmp_path)


def test_shared_tiny_llama_model_load(dump_tool, tmp_path):
    """The real thing for the tiny llama: from_pretrained(dir, gguf_file=...) builds a model whose
    generation config and dtype are the ones we render."""
    pytest.importorskip("accelerate", reason="transformers loads a GGUF model only with accelerate")
    from transformers import AutoModelForCausalLM

    path = shared("real", "llama-2-tiny-random.gguf")
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
    rc, gen, err = ours(dump_tool, path, "--generation")
    assert rc == 0, err
    (tmp_path / "generation_config.json").write_text(gen)
    got = GenerationConfig.from_pretrained(str(tmp_path))
    assert generation_dict(got.to_dict()) == generation_dict(model.generation_config.to_dict())
    rc, dtype, err = ours(dump_tool, path, "--dtype")
    assert rc == 0, err
    assert dtype.strip() == str(model.dtype).removeprefix("torch.")
    auto = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype="auto")
    assert dtype.strip() == str(auto.dtype).removeprefix("torch.")


def test_split_tiny_llama_via_merged(dump_tool, tmp_path):
    """The split model (opened from its first shard, with all its shards) renders the config
    transformers gives for the merged file."""
    first = shared("split", "tiny-llama-00001-of-00003.gguf")
    merged = shared("split", "tiny-llama-merged.gguf")
    rc, out, err = ours(dump_tool, first)
    assert rc == 0, err
    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "config.json").write_text(out)
    mine = AutoConfig.from_pretrained(str(folder))
    reference = without_ignored(theirs(merged).to_dict())
    assert without_ignored(mine.to_dict()) == corrected(merged, reference)
    assert ours(dump_tool, merged)[1] == out


@pytest.mark.parametrize(
    "name",
    [
        "ggml-vocab-bert-bge.gguf",
        "ggml-vocab-deepseek-llm.gguf",
        "ggml-vocab-gpt-2.gguf",
        "ggml-vocab-llama-spm.gguf",
        "ggml-vocab-phi-3.gguf",
    ],
)
def test_shared_vocab_files(dump_tool, tmp_path, name):
    """Real converter output (vocabulary files with their model's hyperparameters): the same
    config as transformers, or no config where transformers cannot import the file."""
    path = shared("real", name)
    try:
        theirs(path)
    except ValueError as e:
        rc, _, err = ours(dump_tool, path)
        assert rc == 3, f"transformers refuses ({e}) but we render a config"
        return
    assert_same_config(dump_tool, path, tmp_path)
