"""The Hugging Face weight map of a GGUF model (src/hf/hf_weights.cpp, hf_weight_map) against
transformers 4.57.6 and 5.24.0 themselves (under 5, whose MoE models hold their experts fused,
with our per-expert tensors fused as its loader fuses them: fuse_experts).

The oracle: transformers' own GGUF import, load_gguf_checkpoint(path, return_tensors=True,
model_to_load=<the model from_pretrained builds from the GGUF's config>) — the tensors
from_pretrained(dir, gguf_file=...) loads. Our map (ggufs-test-hf-config --weights, one JSON line a
tensor) must list the same names, in the order the model's state_dict() lists them, each with
the shape of transformers' tensor and of the model's parameter; and applying our transform
descriptor in numpy to the GGUF tensor as gguf-py reads it (GGUFReader + gguf.dequantize, the
float32 array transformers starts from) must give transformers' values bit for bit.

The GGUF files are written here with gguf-py's GGUFWriter in the layout llama.cpp's converter
(convert_hf_to_gguf.py) writes for each architecture: its keys (as test_hf_config.py writes them),
its tensor names and numpy shapes (q/k rows permuted is a matter of values, not shapes; GPT-2's
Conv1D weights stored transposed; stacked experts), F32 and F16 tensors of distinct values, in a
scrambled order so that the state_dict order must be computed. Plus the shared tiny llama.

Our side comes from ggufs-test-hf-config (tests/support/hf_config_dump.cpp):
$GGUFS_HF_CONFIG_DUMP, else <repo>/build/ggufs-test-hf-config; the tests skip where it is absent.
"""

import json
import pathlib
import re
import subprocess

import numpy as np
import pytest

from conftest import _testdata_dir

gguf = pytest.importorskip("gguf")
transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")
from transformers import AutoConfig, AutoModelForCausalLM  # noqa: E402
from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint  # noqa: E402

from test_hf_config import (  # noqa: E402
    VOCAB,
    add_base_hparams,
    add_gpt2_tokenizer,
    add_llama_tokenizer,
)


def our_map(tool, path):
    """(exit code, list of the JSON lines, stderr)."""
    r = subprocess.run(
        [str(tool), "--weights", str(path)], capture_output=True, text=True, timeout=120
    )
    return r.returncode, [json.loads(line) for line in r.stdout.splitlines()], r.stderr


def reference_model(path):
    path = pathlib.Path(path)
    config = AutoConfig.from_pretrained(str(path.parent), gguf_file=path.name)
    with torch.device("meta"):
        return AutoModelForCausalLM.from_config(config)


def theirs(path):
    """transformers' tensors of `path` in state_dict order, and the model's parameter shapes."""
    model = reference_model(path)
    tensors = load_gguf_checkpoint(str(path), return_tensors=True, model_to_load=model)["tensors"]
    state = model.state_dict()
    assert set(tensors) <= set(state), "transformers returned names its model lacks"
    order = [name for name in state if name in tensors]
    return order, tensors, {name: tuple(t.shape) for name, t in state.items()}


def gguf_arrays(path):
    """Every tensor of `path` as transformers starts from it: gguf-py's float32 array."""
    reader = gguf.GGUFReader(str(path))
    return {t.name: gguf.dequantize(t.data, t.tensor_type) for t in reader.tensors}


def permuted_rows(rows, n_head):
    """HF row r of a reverse-permuted tensor comes from GGUF row out[r] (the formula documented
    with HfTransform::kReversePermute, written out here independently of the C++ code)."""
    d = rows // n_head // 2
    out = []
    for h in range(n_head):
        for j in range(2):
            for i in range(d):
                out.append(h * 2 * d + 2 * i + j)
    return np.array(out)


def regrouped_rows(rows, n_head, groups):
    """HF row r of a regrouped fused QKV comes from GGUF row out[r] (the formula documented with
    HfTransform::kRegroupQkv, written out here independently of the C++ code)."""
    d = rows // (n_head + 2 * groups)
    r = n_head // groups
    out = []
    for j in range(groups):
        out += range(j * r * d, (j + 1) * r * d)
        out += range((n_head + j) * d, (n_head + j + 1) * d)
        out += range((n_head + groups + j) * d, (n_head + groups + j + 1) * d)
    return np.array(out)


def apply(entry, w):
    kind = entry["transform"]
    if kind == "none":
        return w
    if kind == "reverse_permute":
        return w[permuted_rows(w.shape[0], entry["n_head"])]
    if kind == "select":
        return w[entry["index"]]
    if kind == "add":
        return w + np.float32(entry["constant"])
    if kind == "transpose":
        return w.T
    if kind == "regroup_qkv":
        return w[regrouped_rows(w.shape[0], entry["n_head"], entry["groups"])]
    raise AssertionError(f"unknown transform {kind}")


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)


TRANSFORMERS_5 = transformers.__version__.split(".")[0] == "5"
EXPERT = re.compile(r"(?P<experts>.+\.mlp\.experts)\.(?P<e>\d+)\.(?P<w>gate|up|down)_proj\.weight")


def fuse_experts(names, arrays):
    """Under transformers 5, a MoE model holds each layer's experts as two stacked parameters,
    experts.gate_up_proj (expert, gate rows then up rows, hidden) and experts.down_proj, and its
    loader fuses a checkpoint's per-expert tensors into them (conversion_mapping.py, "qwen2_moe":
    MergeModulelist(dim=0), then Concatenate(dim=1)). hf/ lists the per-expert tensors, the
    layout of the original checkpoints: fused here as that loader fuses them. The names and
    arrays with every layer's experts fused, the fused names last."""
    parts, rest = {}, []
    for name in names:
        m = EXPERT.fullmatch(name)
        if m:
            parts.setdefault(m["experts"], {}).setdefault(m["w"], {})[int(m["e"])] = arrays[name]
        else:
            rest.append(name)
    out = {name: arrays[name] for name in rest}
    for experts, w in parts.items():
        n = len(w["down"])
        assert all(sorted(w[k]) == list(range(n)) for k in ("gate", "up", "down")), experts
        out[f"{experts}.gate_up_proj"] = np.stack(
            [np.concatenate([w["gate"][e], w["up"][e]], axis=0) for e in range(n)]
        )
        out[f"{experts}.down_proj"] = np.stack([w["down"][e] for e in range(n)])
    return list(out), out


def assert_same_weights(tool, path):
    rc, mine, err = our_map(tool, path)
    assert rc == 0, f"no weight map for {path}: {err}"
    order, tensors, param_shapes = theirs(path)
    arrays = gguf_arrays(path)
    got = {}
    for e in mine:
        got[e["name"]] = apply(e, arrays[e["source"]])
        assert tuple(e["shape"]) == got[e["name"]].shape, e["name"]
    names = [e["name"] for e in mine]
    if TRANSFORMERS_5:
        listed = set(names)
        names, got = fuse_experts(names, got)
        # The fused parameters' place in 5.x's state_dict order is the model class's, not a
        # checkpoint's: the other names keep the order, the fused ones are there all the same.
        fused = set(names) - listed
        assert [n for n in names if n not in fused] == [n for n in order if n not in fused]
        assert sorted(names) == sorted(order)
    else:
        assert names == order
    for name in names:
        ref = tensors[name].numpy()
        assert got[name].shape == ref.shape == param_shapes[name], name
        assert np.array_equal(bits(got[name]), bits(ref)), f"{name}: values differ"
    return mine


# --- GGUF files as llama.cpp's converter writes them -------------------------------------------

H, HEADS, KV, FF, LAYERS = 16, 4, 2, 40, 2


def hparams(w, ctx=128, ff=FF, kv=KV, eps="rms", rope=True):
    """TextModel.set_gguf_parameters of convert_hf_to_gguf.py (hidden H, HEADS heads), F16."""
    add_base_hparams(w, eps, rope, kv, LAYERS, ctx, ff, rope_base=10000.0, file_type=1)


def attention(hd, kv=KV, bias=False, o_bias=False):
    t = {
        "attn_q.weight": (HEADS * hd, H),
        "attn_k.weight": (kv * hd, H),
        "attn_v.weight": (kv * hd, H),
        "attn_output.weight": (H, HEADS * hd),
    }
    if bias:
        t["attn_q.bias"] = (HEADS * hd,)
        t["attn_k.bias"] = (kv * hd,)
        t["attn_v.bias"] = (kv * hd,)
    if o_bias:
        t["attn_output.bias"] = (H,)
    return t


def qk_norms(hd):
    return {"attn_q_norm.weight": (hd,), "attn_k_norm.weight": (hd,)}


def stablelm_meta(w):
    hparams(w, eps="norm", rope=False)
    w.add_rope_dimension_count(1)
    add_gpt2_tokenizer(w)


GATED = {"ffn_gate.weight": (FF, H), "ffn_up.weight": (FF, H), "ffn_down.weight": (H, FF)}
NORMS = {"attn_norm.weight": (H,), "ffn_norm.weight": (H,)}
NORMS_BIAS = {**NORMS, "attn_norm.bias": (H,), "ffn_norm.bias": (H,)}
# gpt2's and bloom's layer: one biased query_key_value, biased dense and MLP (4 H wide)
FUSED_QKV_LAYER = {
    "attn_qkv.weight": (3 * H, H),
    "attn_qkv.bias": (3 * H,),
    "attn_output.weight": (H, H),
    "attn_output.bias": (H,),
    "ffn_up.weight": (4 * H, H),
    "ffn_up.bias": (4 * H,),
    "ffn_down.weight": (H, 4 * H),
    "ffn_down.bias": (H,),
    **NORMS_BIAS,
}
GEMMA_NORMS = {**NORMS, "post_attention_norm.weight": (H,), "post_ffw_norm.weight": (H,)}
EMBED = {"token_embd.weight": (VOCAB, H)}
HEAD = {"output_norm.weight": (H,), "output.weight": (VOCAB, H)}
HEAD_BIAS = {**HEAD, "output_norm.bias": (H,)}


def llama_meta(w, kv=KV):
    hparams(w, kv=kv)
    w.add_vocab_size(VOCAB)
    w.add_rope_dimension_count(8)  # head_dim 8, not H / heads = 4: its mapping shows
    add_llama_tokenizer(w)


def qwen3moe_meta(w):
    hparams(w)
    w.add_key_length(8)
    w.add_value_length(8)
    w.add_expert_count(8)
    w.add_expert_used_count(2)
    w.add_expert_feed_forward_length(768)  # transformers keeps Qwen3MoeConfig's 768 anyway
    add_gpt2_tokenizer(w)


def gemma_meta(w):
    hparams(w, rope=False)
    w.add_key_length(8)
    w.add_value_length(8)
    w.add_sliding_window(64)
    add_llama_tokenizer(w, bos=2, eos=1)
    w.add_pad_token_id(0)


def phi3_meta(w):
    hparams(w, rope=False)
    w.add_rope_dimension_count(4)
    add_llama_tokenizer(w, bos=1, eos=7)
    w.add_pad_token_id(0)  # Phi3Config's default pad id 32000 is past this vocabulary


def qwen3_meta(w, head_dim=128):
    hparams(w)
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    add_gpt2_tokenizer(w)


E, EFF = 8, 768

def bloom_meta(w):
    """bloom.py, BloomModel.set_gguf_parameters."""
    w.add_context_length(H)
    w.add_embedding_length(H)
    w.add_feed_forward_length(4 * H)
    w.add_block_count(LAYERS)
    w.add_head_count(HEADS)
    w.add_head_count_kv(HEADS)
    w.add_layer_norm_eps(1e-5)
    add_gpt2_tokenizer(w)


# case: (architecture, metadata writer, tensors of each layer, other tensors), numpy shapes
CASES = {
    "llama": ("llama", llama_meta, {**attention(8), **GATED, **NORMS}, {**EMBED, **HEAD}),
    "llama-tied": (
        "llama",
        llama_meta,
        {**attention(8), **GATED, **NORMS},
        {**EMBED, "output_norm.weight": (H,)},
    ),
    # no head_count_kv: LlamaTensorProcessor does not permute; LlamaConfig takes kv = heads
    "llama-no-kv": (
        "llama",
        lambda w: llama_meta(w, kv=None),
        {**attention(8, kv=HEADS), **GATED, **NORMS},
        {**EMBED, **HEAD},
    ),
    # rope_freqs (llama 3) has no HF parameter: skipped
    "llama-rope-freqs": (
        "llama",
        llama_meta,
        {**attention(8), **GATED, **NORMS},
        {**EMBED, **HEAD, "rope_freqs.weight": (4,)},
    ),
    "qwen2": (
        "qwen2",
        lambda w: (hparams(w), add_gpt2_tokenizer(w)),
        {**attention(4, bias=True), **GATED, **NORMS},
        {**EMBED, **HEAD},
    ),
    "qwen3": (
        "qwen3",
        qwen3_meta,
        {**attention(128), **qk_norms(128), **GATED, **NORMS},
        {**EMBED, **HEAD},
    ),
    "qwen3moe": (
        "qwen3moe",
        qwen3moe_meta,
        {
            **attention(8),
            "attn_q_norm.weight": (8,),
            "attn_k_norm.weight": (8,),
            "ffn_gate_inp.weight": (E, H),
            "ffn_gate_exps.weight": (E, EFF, H),
            "ffn_up_exps.weight": (E, EFF, H),
            "ffn_down_exps.weight": (E, H, EFF),
            **NORMS,
        },
        {**EMBED, **HEAD},
    ),
    # gguf-py's gemma2 tensors have no OUTPUT: output.weight is skipped by transformers
    "gemma2": ("gemma2", gemma_meta, {**attention(8), **GATED, **GEMMA_NORMS}, {**EMBED, **HEAD}),
    "gemma3": (
        "gemma3",
        gemma_meta,
        {**attention(8), **qk_norms(8), **GATED, **GEMMA_NORMS},
        {**EMBED, "output_norm.weight": (H,)},
    ),
    "gemma3-untied": (
        "gemma3",
        gemma_meta,
        {**attention(8), **qk_norms(8), **GATED, **GEMMA_NORMS},
        {**EMBED, **HEAD},
    ),
    "phi3": (
        "phi3",
        phi3_meta,
        {
            "attn_qkv.weight": (HEADS * 4 + 2 * KV * 4, H),
            "attn_output.weight": (H, H),
            "ffn_up.weight": (2 * FF, H),
            "ffn_down.weight": (H, FF),
            **NORMS,
        },
        {**EMBED, **HEAD},
    ),
    # GPT2Config's n_positions (1024) and n_inner (4 H) are never mapped from the GGUF
    "gpt2": (
        "gpt2",
        lambda w: (
            hparams(w, ctx=1024, ff=4 * H, kv=None, eps="norm", rope=False),
            add_gpt2_tokenizer(w),
        ),
        FUSED_QKV_LAYER,
        {**EMBED, "position_embd.weight": (1024, H), **HEAD_BIAS},
    ),
    "starcoder2": (
        "starcoder2",
        lambda w: (hparams(w, eps="norm"), add_gpt2_tokenizer(w)),
        {
            **attention(4, bias=True, o_bias=True),
            "ffn_up.weight": (FF, H),
            "ffn_up.bias": (FF,),
            "ffn_down.weight": (H, FF),
            "ffn_down.bias": (H,),
            **NORMS_BIAS,
        },
        {**EMBED, **HEAD_BIAS},
    ),
    "stablelm": (
        "stablelm",
        stablelm_meta,
        {**attention(4), **GATED, **NORMS_BIAS},
        {**EMBED, **HEAD_BIAS},
    ),
    "stablelm-qkv-bias-parallel": (
        "stablelm",
        stablelm_meta,
        {**attention(4, bias=True), **GATED, "attn_norm.weight": (H,), "attn_norm.bias": (H,)},
        {**EMBED, **HEAD_BIAS},
    ),
    # BloomTensorProcessor undoes the converter's per-head regroup of query_key_value (weight
    # and bias); BLOOM ties its output
    "bloom": (
        "bloom",
        bloom_meta,
        FUSED_QKV_LAYER,
        {
            **EMBED,
            "token_embd_norm.weight": (H,),
            "token_embd_norm.bias": (H,),
            "output_norm.weight": (H,),
            "output_norm.bias": (H,),
        },
    ),
}


def write_gguf(path, arch, meta, per_layer, global_tensors, layers=LAYERS, name="tiny"):
    """Distinct values in every tensor (a seeded draw), every other tensor F16; written in a
    scrambled order (last layer first, globals last) so that no order is inherited."""
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(name)
    meta(w)
    rng = np.random.default_rng(len(str(path)))
    names = []
    for b in reversed(range(layers)):
        names += [(f"blk.{b}.{n}", s) for n, s in reversed(list(per_layer.items()))]
    names += list(global_tensors.items())
    for k, (name, shape) in enumerate(names):
        data = rng.standard_normal(shape).astype(np.float32)
        w.add_tensor(name, data.astype(np.float16) if k % 2 else data)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.mark.parametrize("case", sorted(CASES))
def test_architecture(dump_tool, tmp_path, case):
    arch, meta, per_layer, global_tensors = CASES[case]
    path = write_gguf(tmp_path / f"{case}.gguf", arch, meta, per_layer, global_tensors)
    mine = assert_same_weights(dump_tool, path)
    kinds = {e["transform"] for e in mine}
    # Each architecture's transform shows, so a map that forgot it fails above on values.
    expected = {
        "llama": {"reverse_permute"},
        "qwen3moe": {"select"},
        "gemma2": {"add"},
        "gemma3": {"add"},
        "gpt2": {"transpose"},
        "bloom": {"regroup_qkv"},
    }
    for prefix, needed in expected.items():
        if case.startswith(prefix) and case != "llama-no-kv":
            assert needed <= kinds, case
    if case == "llama-no-kv":
        assert kinds == {"none"}


def test_shared_tiny_llama(dump_tool):
    path = _testdata_dir() / "real" / "llama-2-tiny-random.gguf"
    if not path.is_file():
        pytest.skip(f"the shared test data is absent ({path}; set GGUFS_TESTDATA)")
    mine = assert_same_weights(dump_tool, path)
    assert any(e["transform"] == "reverse_permute" for e in mine)


def test_split_tiny_llama(dump_tool):
    """The split model, opened from its first shard with all its shards, maps as the merged file
    does, and the merged file as transformers loads it."""
    first = _testdata_dir() / "split" / "tiny-llama-00001-of-00003.gguf"
    merged = _testdata_dir() / "split" / "tiny-llama-merged.gguf"
    if not first.is_file() or not merged.is_file():
        pytest.skip(f"the shared test data is absent ({first.parent}; set GGUFS_TESTDATA)")
    assert_same_weights(dump_tool, merged)
    rc, split_map, err = our_map(dump_tool, first)
    assert rc == 0, err
    assert split_map == our_map(dump_tool, merged)[1]


def test_loads_as_from_pretrained(dump_tool, tmp_path):
    """The map's tensors, written as model.safetensors next to our config.json, load with
    from_pretrained into the model transformers' own GGUF import builds."""
    pytest.importorskip("accelerate", reason="transformers loads a GGUF model only with accelerate")
    from safetensors.numpy import save_file

    arch, meta, per_layer, global_tensors = CASES["llama"]
    path = write_gguf(tmp_path / "m.gguf", arch, meta, per_layer, global_tensors)
    rc, mine, err = our_map(dump_tool, path)
    assert rc == 0, err
    arrays = gguf_arrays(path)
    folder = tmp_path / "hf"
    folder.mkdir()
    config = subprocess.run([str(dump_tool), str(path)], capture_output=True, text=True).stdout
    (folder / "config.json").write_text(config)
    weights = {e["name"]: np.ascontiguousarray(apply(e, arrays[e["source"]])) for e in mine}
    save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})
    ours = AutoModelForCausalLM.from_pretrained(str(folder))
    ref = AutoModelForCausalLM.from_pretrained(str(tmp_path), gguf_file="m.gguf")
    a, b = ours.state_dict(), ref.state_dict()
    assert list(a) == list(b)
    for name in a:
        assert torch.equal(a[name], b[name]), name


# --- What transformers cannot load -------------------------------------------------------------


@pytest.mark.parametrize("arch,name", [("mistral", "tiny"), ("llama", "mistral")])
def test_mistral_refused(dump_tool, tmp_path, arch, name):
    """gguf-py 0.19.0 has no mistral tensor map: transformers loads no tensor of a mistral (nor
    of a llama named "mistral", which it imports as one)."""
    _, meta, per_layer, global_tensors = CASES["llama"]
    path = write_gguf(tmp_path / "m.gguf", arch, meta, per_layer, global_tensors, name=name)
    with pytest.raises(NotImplementedError, match="mistral"):
        theirs(path)
    rc, _, err = our_map(dump_tool, path)
    assert rc == 3 and "mistral" in err


def test_qwen3moe_named_as_transformers_refused(dump_tool, tmp_path):
    """general.architecture "qwen3_moe" (transformers' spelling): TENSOR_PROCESSORS has no entry
    for it, the stacked experts stay whole under a name the model lacks (4.57.6); transformers
    5's Qwen2MoeTensorProcessor finds no HF name for them and drops them, the model's experts
    stay unloaded."""
    per_layer, global_tensors = CASES["qwen3moe"][2:]

    def renamed(w):
        qwen3moe_meta_under(w, "qwen3_moe")

    path = write_gguf(tmp_path / "m.gguf", "qwen3_moe", renamed, per_layer, global_tensors)
    model = reference_model(path)
    tensors = load_gguf_checkpoint(str(path), return_tensors=True, model_to_load=model)["tensors"]
    if TRANSFORMERS_5:
        assert "model.layers.0.mlp.experts.gate_up_proj" in model.state_dict()
        assert not [name for name in tensors if ".mlp.experts" in name]
    else:
        assert "model.layers.0.mlp.experts.gate_proj.weight" in tensors
        assert "model.layers.0.mlp.experts.gate_proj.weight" not in model.state_dict()
    rc, _, err = our_map(dump_tool, path)
    assert rc == 3 and "qwen3_moe" in err


def qwen3moe_meta_under(w, arch):
    """qwen3moe_meta's keys under another architecture prefix."""
    V = gguf.GGUFValueType
    for key, value in [
        ("block_count", LAYERS),
        ("context_length", 128),
        ("embedding_length", H),
        ("feed_forward_length", FF),
        ("attention.head_count", HEADS),
        ("attention.head_count_kv", KV),
        ("attention.key_length", 8),
        ("expert_count", E),
        ("expert_used_count", 2),
    ]:
        w.add_key_value(f"{arch}.{key}", value, V.UINT32)
    w.add_key_value(f"{arch}.attention.layer_norm_rms_epsilon", 1e-6, V.FLOAT32)
    add_gpt2_tokenizer(w)


def test_qwen2moe_shared_expert(dump_tool, tmp_path):
    """qwen2moe as llama.cpp's converter writes it (qwen.py, Qwen2MoeModel): expert width 8 and
    shared-expert width 24 as expert_feed_forward_length and expert_shared_feed_forward_length,
    the shared expert as ffn_*_shexp and its gate as ffn_gate_inp_shexp. transformers' import
    maps none of the qwen2moe keys (it renames the architecture to qwen2_moe first) and fails on
    the default shapes (transformers 5 maps them but for the two expert widths, which stay
    Qwen2MoeConfig's defaults 1408 and 5632: its tensors do not fit its model); the original
    model is Qwen2MoeForCausalLM of these numbers, and our map lists its state_dict, names and
    shapes, parameter for parameter (under transformers 5, with the experts fused as
    fuse_experts does)."""
    E, FM, FS = 4, 8, 24

    def meta(w):
        hparams(w)
        w.add_expert_count(E)
        w.add_expert_used_count(2)
        w.add_expert_feed_forward_length(FM)
        w.add_expert_shared_feed_forward_length(FS)
        add_gpt2_tokenizer(w)

    per_layer = {
        **attention(4, bias=True),
        "ffn_gate_inp.weight": (E, H),
        "ffn_gate_exps.weight": (E, FM, H),
        "ffn_up_exps.weight": (E, FM, H),
        "ffn_down_exps.weight": (E, H, FM),
        "ffn_gate_shexp.weight": (FS, H),
        "ffn_up_shexp.weight": (FS, H),
        "ffn_down_shexp.weight": (H, FS),
        "ffn_gate_inp_shexp.weight": (1, H),
        **NORMS,
    }
    path = write_gguf(tmp_path / "m.gguf", "qwen2moe", meta, per_layer, {**EMBED, **HEAD})
    if TRANSFORMERS_5:
        order, tensors, param_shapes = theirs(path)
        assert param_shapes["model.layers.0.mlp.experts.down_proj"] == (E, H, 1408)
        assert tuple(tensors["model.layers.0.mlp.experts.down_proj"].shape) == (E, H, FM)
    else:
        # Not one key maps: the import's config is Qwen2MoeConfig's defaults (hidden 2048, 60
        # experts of 1408), which the file's tensors do not fit. (Its weight import then fails,
        # after a minute of CPU building TensorNameMap once per module of that default model.)
        defaults = transformers.Qwen2MoeConfig()
        reference = AutoConfig.from_pretrained(str(path.parent), gguf_file=path.name)
        for field in ("hidden_size", "num_experts", "moe_intermediate_size", "num_hidden_layers"):
            assert getattr(reference, field) == getattr(defaults, field), field
        assert (reference.hidden_size, reference.num_experts) != (H, E)
    original = transformers.Qwen2MoeConfig(
        vocab_size=VOCAB,
        hidden_size=H,
        num_attention_heads=HEADS,
        num_key_value_heads=KV,
        num_hidden_layers=LAYERS,
        intermediate_size=FF,
        num_experts=E,
        num_experts_per_tok=2,
        moe_intermediate_size=FM,
        shared_expert_intermediate_size=FS,
        tie_word_embeddings=False,
    )
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(original)
    expected = [[name, list(t.shape)] for name, t in model.state_dict().items()]
    rc, lines, err = our_map(dump_tool, path)
    assert rc == 0, err
    listed = [[e["name"], e["shape"]] for e in lines]
    if TRANSFORMERS_5:
        arrays = {e["name"]: np.zeros(e["shape"], np.float32) for e in lines}
        names, arrays = fuse_experts([e["name"] for e in lines], arrays)
        listed = [[name, list(arrays[name].shape)] for name in names]
        # the fused parameters' place in the order is the model class's (assert_same_weights)
        assert sorted(listed) == sorted(expected)
        listed = [x for x in listed if ".mlp.experts." not in x[0]]
        expected = [x for x in expected if ".mlp.experts." not in x[0]]
    assert listed == expected


def test_head_dim_from_key_length(dump_tool, tmp_path):
    """qwen3 with head_dim 8 (the file's qwen3.attention.key_length, as llama.cpp's converter
    writes it): transformers' import maps no key_length for qwen3 (GGUF_CONFIG_MAPPING,
    integrations/ggml.py), keeps Qwen3Config's 128 and fails (size mismatch); the original model
    had head_dim 8, and our map gives its parameters the file's shapes."""
    pytest.importorskip("accelerate", reason="transformers loads a GGUF model only with accelerate")
    path = write_gguf(
        tmp_path / "m.gguf",
        "qwen3",
        lambda w: qwen3_meta(w, head_dim=8),
        {**attention(8), **qk_norms(8), **GATED, **NORMS},
        {**EMBED, **HEAD},
    )
    # transformers 5 reports the mismatch in a table it logs, and raises this
    mismatch = "ignore_mismatched_sizes" if TRANSFORMERS_5 else "size mismatch|shape"
    with pytest.raises(Exception, match=mismatch):
        AutoModelForCausalLM.from_pretrained(str(tmp_path), gguf_file="m.gguf")
    rc, lines, err = our_map(dump_tool, path)
    assert rc == 0, err
    shapes = {e["name"]: e["shape"] for e in lines}
    # attention(8): q rows = heads x 8, the tensors the file holds (numpy order).
    reader = gguf.GGUFReader(str(path))
    q = next(t for t in reader.tensors if t.name == "blk.0.attn_q.weight")
    assert shapes["model.layers.0.self_attn.q_proj.weight"] == [int(x) for x in q.shape[::-1]]
    assert shapes["model.layers.0.self_attn.q_norm.weight"] == [8]


def test_too_few_experts_refused(dump_tool, tmp_path):
    """A stack of fewer experts than expert_count: transformers' split raises (IndexError; 5's
    copy into the fused gate_up_proj, a RuntimeError), we refuse."""
    _, meta, per_layer, global_tensors = CASES["qwen3moe"]
    per_layer = dict(per_layer, **{"ffn_up_exps.weight": (E - 1, EFF, H)})
    path = write_gguf(tmp_path / "m.gguf", "qwen3moe", meta, per_layer, global_tensors)
    with pytest.raises(RuntimeError if TRANSFORMERS_5 else IndexError):
        theirs(path)
    rc, _, err = our_map(dump_tool, path)
    assert rc == 3 and "ffn_up_exps" in err
