"""mlx/: a quantized GGUF as an MLX model folder, loaded and run by mlx-lm itself.

Tiny llamas (hidden 64, 4 heads of 16, 2 KV heads, 2 layers, llama.cpp's SentencePiece
vocabulary ggml-vocab-llama-spm.gguf) are written with gguf-py (llama.cpp's gguf-py: GGUFWriter),
their matrices quantized by gguf-py's quants.quantize (the Python port of ggml's reference
quantizers) to Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0, one matrix left F16 (no MLX form: served as
float32). Mounted, mlx/ must:
- load with mlx_lm.load, each quantized module an nn.QuantizedLinear / QuantizedEmbedding of its
  type's form (mode affine; 4, 5 or 8 bits; group 32), the F16 one a float nn.Linear;
- hold, for every weight, MLX's dequantization (mx.dequantize) equal to gguf-py's dequantization of
  the GGUF tensor (ggml's reference values), with attn_q/attn_k's rows un-permuted as
  transformers' GGUF import does (modeling_gguf_pytorch_utils.py,
  LlamaTensorProcessor._reverse_permute_weights), and every float tensor equal to it too;
- give the logits and the 20 greedy tokens mlx-lm gives on the float32 hf/ folder of the same
  mount (same values: only the order of float32 sums may differ);
- run under `python -m mlx_lm generate` from the mount.
A tiny qwen3moe (4 experts; Q4_0 attention, Q8_0 embedding, Q4_0, Q8_0 and F16 expert stacks)
checks that each expert stack is served whole under mlx-lm's stacked name
(mlp.switch_mlp.{gate,up,down}_proj, qwen3_moe.py's sanitize), its blocks kept where its type has
an MLX form (a QuantizedSwitchLinear) and float32 where not, and the rest quantized as for
llama.

Runs in the MLX environment, /var/cache/ggufs-tests/venv-mlx (scripts/test runs this file there);
needs llama.cpp's gguf-py ($GGUFS_LLAMA_CPP, else /var/cache/ggufs-tests/llama.cpp), the shared
test data and /dev/fuse; elsewhere it skips.
"""

import json
import subprocess
import sys

import numpy as np
import pytest

mx = pytest.importorskip(
    "mlx.core",
    reason="no MLX in this Python (scripts/install-deps --tests makes "
    "/var/cache/ggufs-tests/venv-mlx; scripts/test runs this file there)",
)
mlx_lm = pytest.importorskip("mlx_lm")
nn = pytest.importorskip("mlx.nn")

from llama_converter import LLAMA_CPP  # noqa: E402

if not (LLAMA_CPP / "gguf-py" / "gguf").is_dir():
    pytest.skip(f"llama.cpp's gguf-py is absent ({LLAMA_CPP}; set GGUFS_LLAMA_CPP)",
                allow_module_level=True)
sys.path.insert(0, str(LLAMA_CPP / "gguf-py"))
import gguf  # noqa: E402
from gguf import quants  # noqa: E402

Q = gguf.GGMLQuantizationType
HIDDEN, HEADS, KV_HEADS, FFN, LAYERS = 64, 4, 2, 128, 2

# Each ggml type's MLX form (mode, bits, group size): the table of mlx_blocks.h, as the issue
# measured it against mx.dequantize.
FORMS = {Q.Q4_0: ("affine", 4, 32), Q.Q4_1: ("affine", 4, 32), Q.Q5_0: ("affine", 5, 32),
         Q.Q5_1: ("affine", 5, 32), Q.Q8_0: ("affine", 8, 32)}

# The models: GGUF tensor (per layer: "blk.{i}.") -> type. "q4_0" is llama-quantize's Q4_0 mix
# (output.weight in a larger type, here Q8_0) with one matrix left F16; "q8_0" ties the
# embedding (no output.weight: mlx-lm's QuantizedEmbedding.as_linear); "mixed" puts a different
# type in each matrix.
MODELS = {
    "q4_0": {"token_embd": Q.Q4_0, "output": Q.Q8_0, "attn_q": Q.Q4_0, "attn_k": Q.Q4_0,
             "attn_v": Q.Q4_0, "attn_output": Q.Q4_0, "ffn_gate": Q.Q4_0, "ffn_up": Q.Q4_0,
             "ffn_down": Q.Q4_0, "blk.1.ffn_down": Q.F16},
    "q8_0": {"token_embd": Q.Q8_0, "attn_q": Q.Q8_0, "attn_k": Q.Q8_0, "attn_v": Q.Q8_0,
             "attn_output": Q.Q8_0, "ffn_gate": Q.Q8_0, "ffn_up": Q.Q8_0, "ffn_down": Q.Q8_0},
    "mixed": {"token_embd": Q.Q5_1, "output": Q.Q4_1, "attn_q": Q.Q4_1, "attn_k": Q.Q5_0,
              "attn_v": Q.Q5_1, "attn_output": Q.Q8_0, "ffn_gate": Q.Q4_0, "ffn_up": Q.Q5_0,
              "ffn_down": Q.F16},
}

# GGUF matrix -> (Hugging Face module, rows, columns); the module names are transformers'
# (LlamaForCausalLM), which mlx-lm's llama keeps.
MATRICES = {
    "attn_q": ("self_attn.q_proj", HIDDEN, HIDDEN),
    "attn_k": ("self_attn.k_proj", HIDDEN // HEADS * KV_HEADS, HIDDEN),
    "attn_v": ("self_attn.v_proj", HIDDEN // HEADS * KV_HEADS, HIDDEN),
    "attn_output": ("self_attn.o_proj", HIDDEN, HIDDEN),
    "ffn_gate": ("mlp.gate_proj", FFN, HIDDEN),
    "ffn_up": ("mlp.up_proj", FFN, HIDDEN),
    "ffn_down": ("mlp.down_proj", HIDDEN, FFN),
}


def reverse_permute(w, n_head):
    """transformers' LlamaTensorProcessor._reverse_permute_weights (modeling_gguf_pytorch_utils.py):
    undoes convert_hf_to_gguf.py's LlamaModel.permute of q/k rows."""
    dim = w.shape[0] // n_head // 2
    return w.reshape(n_head, dim, 2, *w.shape[1:]).swapaxes(2, 1).reshape(w.shape)


def new_writer(path, arch, vocab_file, layers):
    """A GGUFWriter of `arch` with the hyperparameters both models share and the tokenizer keys of
    `vocab_file`; and the vocabulary's size."""
    vocab = gguf.GGUFReader(vocab_file)
    w = gguf.GGUFWriter(str(path), arch)
    w.add_context_length(256)
    w.add_embedding_length(HIDDEN)
    w.add_block_count(layers)
    w.add_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_rope_freq_base(10000.0)
    for key, field in vocab.fields.items():
        if key.startswith("tokenizer."):
            sub = field.types[-1] if field.types[0] == gguf.GGUFValueType.ARRAY else None
            w.add_key_value(key, field.contents(), field.types[0], sub)
    return w, len(vocab.fields["tokenizer.ggml.tokens"].data)


def add_random(w, rng, name, shape, qtype):
    """A random tensor of `shape` written as `qtype`; gguf-py's dequantization of what was
    written (float32, `shape`)."""
    # Weights of a few tenths: logits far apart enough that greedy picks are not ties.
    x = (rng.standard_normal(shape) * 0.5).astype(np.float32)
    if qtype == Q.IQ4_NL:  # gguf-py has no quantizer for it: random blocks, a finite d each
        blocks = rng.integers(0, 256, (x.size // 32, 18), dtype=np.uint8)
        d = (rng.uniform(0.02, 0.05, x.size // 32) * rng.choice([-1, 1], x.size // 32))
        blocks[:, :2] = d.astype(np.float16).view(np.uint8).reshape(-1, 2)
        data = blocks.reshape(shape[0], -1)
    else:
        data = x if qtype == Q.F32 else quants.quantize(x, qtype)
    w.add_tensor(name, data, raw_dtype=qtype)
    return quants.dequantize(data, qtype).reshape(shape).astype(np.float32)


def finish(w):
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_model(path, types, vocab_file, seed):
    """A llama GGUF of `types`, its tokenizer keys copied from `vocab_file`. Returns, for every
    Hugging Face weight, its expected float32 value (gguf-py's dequantization of what was
    written, q/k rows un-permuted) and its GGUF type."""
    rng = np.random.default_rng(seed)
    w, n_vocab = new_writer(path, "llama", vocab_file, LAYERS)
    w.add_rope_dimension_count(HIDDEN // HEADS)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(n_vocab)
    expected = {}

    def add(name, hf_name, rows, cols, qtype, permute_heads=0):
        values = add_random(w, rng, name, (rows, cols), qtype)
        values = reverse_permute(values, permute_heads) if permute_heads else values
        expected[hf_name] = (values, qtype)

    add("token_embd.weight", "model.embed_tokens.weight", n_vocab, HIDDEN, types["token_embd"])
    for i in range(LAYERS):
        for gg, (module, rows, cols) in MATRICES.items():
            qtype = types.get(f"blk.{i}.{gg}", types[gg])
            heads = {"attn_q": HEADS, "attn_k": KV_HEADS}.get(gg, 0)
            add(f"blk.{i}.{gg}.weight", f"model.layers.{i}.{module}.weight", rows, cols, qtype,
                heads)
        for gg, module in (("attn_norm", "input_layernorm"),
                           ("ffn_norm", "post_attention_layernorm")):
            norm = (1 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32)
            w.add_tensor(f"blk.{i}.{gg}.weight", norm)
            expected[f"model.layers.{i}.{module}.weight"] = (norm, Q.F32)
    norm = (1 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32)
    w.add_tensor("output_norm.weight", norm)
    expected["model.norm.weight"] = (norm, Q.F32)
    if "output" in types:
        add("output.weight", "lm_head.weight", n_vocab, HIDDEN, types["output"])
    finish(w)
    return expected


@pytest.fixture(scope="module", params=sorted(MODELS))
def model(request, tmp_path_factory, testdata):
    vocab = testdata / "real" / "ggml-vocab-llama-spm.gguf"
    path = tmp_path_factory.mktemp("mlx") / f"tiny-llama-{request.param}.gguf"
    expected = write_model(path, MODELS[request.param], vocab, seed=len(request.param))
    return request.param, path, expected


def served_weights(folder):
    """Every tensor of the folder's weight files, as mlx-lm's load_model reads them."""
    weights = {}
    for f in sorted(folder.glob("model*.safetensors")):
        weights.update(mx.load(str(f)))
    return weights


# -o direct_io: the same bytes read around the page cache (mx.load reads with pread).
MOUNT_OPTIONS = pytest.mark.parametrize("options", [(), ("-o", "direct_io")],
                                        ids=["page-cache", "direct-io"])


@MOUNT_OPTIONS
def test_weights_are_ggml_values(model, mount, options):
    _, path, expected = model
    m = mount(path, *options)
    folder = m / "mlx"
    config = json.loads((folder / "config.json").read_text())
    quantization = config["quantization"]
    assert config["quantization_config"] == quantization
    default = (quantization["mode"], quantization["bits"], quantization["group_size"])
    weights = served_weights(folder)
    seen, floats = set(), set()
    for hf_name, (want, qtype) in expected.items():
        module = hf_name.removesuffix(".weight")
        seen.add(hf_name)
        if qtype not in FORMS:  # float32, and, for a matrix, named false
            got = weights[hf_name]
            assert got.dtype == mx.float32, hf_name
            np.testing.assert_array_equal(np.array(got), want, err_msg=hf_name)
            if want.ndim == 2:
                floats.add(module)
            continue
        seen.update({f"{module}.scales", f"{module}.biases"})
        entry = quantization.get(module)
        form = (entry["mode"], entry["bits"], entry["group_size"]) if entry else default
        assert form == FORMS[qtype], hf_name
        mode, bits, group = form
        got = np.array(mx.dequantize(weights[hf_name], weights[f"{module}.scales"],
                                     weights[f"{module}.biases"], group_size=group, bits=bits,
                                     mode=mode))
        assert got.shape == want.shape, hf_name
        # == : only the sign of a zero may differ (mlx_blocks.h)
        assert (got == want).all(), (hf_name, np.argwhere(got != want)[:5])
    assert set(weights) == seen, set(weights) ^ seen
    assert floats == {k for k, v in quantization.items() if v is False}


def test_mlx_lm_loads_and_generates_as_on_hf(model, mount):
    name, path, _ = model
    m = mount(path)
    qmodel, tokenizer = mlx_lm.load(str(m / "mlx"))
    fmodel, _ = mlx_lm.load(str(m / "hf"))
    layer = qmodel.model.layers[1]
    assert isinstance(layer.self_attn.q_proj, nn.QuantizedLinear)
    down = MODELS[name].get("blk.1.ffn_down", MODELS[name]["ffn_down"])
    assert type(layer.mlp.down_proj) is (nn.Linear if down == Q.F16 else nn.QuantizedLinear)
    assert isinstance(qmodel.model.embed_tokens, nn.QuantizedEmbedding)
    assert not any(isinstance(x, nn.QuantizedLinear) for _, x in fmodel.named_modules())

    prompt = tokenizer.encode("The quick brown fox jumps over the lazy dog")
    q_logits = np.array(qmodel(mx.array([prompt])))
    f_logits = np.array(fmodel(mx.array([prompt])))
    np.testing.assert_allclose(q_logits, f_logits, rtol=1e-4,
                               atol=1e-4 * np.abs(f_logits).max())

    def greedy(mdl):
        return [r.token for r in mlx_lm.stream_generate(mdl, tokenizer, prompt, max_tokens=20)]

    tokens = greedy(qmodel)
    assert len(tokens) == 20 or tokens[-1] in tokenizer.eos_token_ids
    assert tokens == greedy(fmodel)


@pytest.mark.parametrize("dtype,mx_dtype", [("float32", "float32"), ("bfloat16", "bfloat16")])
def test_ggufs_tensor_decodes_into_an_mlx_array(testdata, dtype, mx_dtype):
    """Model.tensor(out=) into an MLX array (its writable buffer), equal to ggml's reference
    (float32) and to torch's rounding of it, as the package's NumPy result (bfloat16)."""
    import ggufs

    t = next(t for t in json.loads((testdata / "conformance" / "manifest.json").read_text())["files"]
             if t["file"] == "Q4_K.gguf")["tensors"][1]
    ref = np.fromfile(testdata / "conformance" / t["ref"], dtype="<f4").reshape(t["ne"][::-1])
    with ggufs.open(testdata / "conformance" / "Q4_K.gguf") as m:
        out = mx.zeros(ref.shape, dtype=getattr(mx, mx_dtype))
        mx.eval(out)
        assert m.tensor(t["name"], dtype, out=out) is out
        if dtype == "float32":
            assert np.array_equal(np.array(out).view(np.uint32), ref.view(np.uint32))
        else:
            got = np.array(out.view(mx.uint16))
            assert np.array_equal(got, m.tensor(t["name"], "bfloat16"))
            # MLX's own rounding of the float32 values is the same round-to-nearest-even
            assert mx.array_equal(out, mx.array(ref).astype(mx.bfloat16))


def test_ggufs_mlx_load_is_mlx_lm_load_of_the_mount(model, mount):
    """The Python package's in-process load (src/python/ggufs/mlx.py) against mlx-lm's own load
    of the mounted folder: the same modules, parameters, tokenizer, logits and greedy tokens."""
    import ggufs.mlx
    from mlx.utils import tree_flatten

    _, path, _ = model
    m = mount(path)
    want_model, want_tok = mlx_lm.load(str(m / "mlx"))
    got_model, got_tok = ggufs.mlx.load(path)
    assert [(k, type(v)) for k, v in got_model.named_modules()] == [
        (k, type(v)) for k, v in want_model.named_modules()]
    want_params = dict(tree_flatten(want_model.parameters()))
    got_params = dict(tree_flatten(got_model.parameters()))
    assert list(got_params) == list(want_params)
    for k, v in want_params.items():
        assert got_params[k].dtype == v.dtype and mx.array_equal(got_params[k], v), k
    text = "The quick brown fox jumps over the lazy dog"
    prompt = want_tok.encode(text)
    assert got_tok.encode(text) == prompt
    assert got_tok.eos_token_ids == want_tok.eos_token_ids
    assert type(got_tok.detokenizer) is type(want_tok.detokenizer)
    assert mx.array_equal(got_model(mx.array([prompt])), want_model(mx.array([prompt])))

    def greedy(mdl, tok):
        return [r.token for r in mlx_lm.stream_generate(mdl, tok, prompt, max_tokens=20)]

    assert greedy(got_model, got_tok) == greedy(want_model, want_tok)


@MOUNT_OPTIONS
def test_generate_command_from_the_mount(mount, testdata, tmp_path, options):
    path = tmp_path / "tiny-llama-q4_0.gguf"
    write_model(path, MODELS["q4_0"], testdata / "real" / "ggml-vocab-llama-spm.gguf", seed=1)
    m = mount(path, *options)
    run = subprocess.run([sys.executable, "-m", "mlx_lm", "generate", "--model", str(m / "mlx"),
                          "--prompt", "Hello", "--max-tokens", "5"],
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    assert "Generation:" in run.stdout and "tokens-per-sec" in run.stdout, run.stdout


def write_qwen3moe(path, vocab_file):
    """A one-layer qwen3moe GGUF (4 experts of 64, 2 used; head_dim 16). Returns, under mlx/'s
    names (the expert stacks as mlx-lm's switch_mlp), gguf-py's dequantization of each matrix
    and its GGUF type (Qwen3's q/k rows are not permuted by the converter)."""
    rng = np.random.default_rng(3)
    head_dim, experts, expert_ff = 16, 4, 64
    w, n_vocab = new_writer(path, "qwen3moe", vocab_file, 1)
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_expert_count(experts)
    w.add_expert_used_count(2)
    w.add_expert_feed_forward_length(expert_ff)
    expected = {}

    def add(name, hf_name, shape, qtype):
        values = add_random(w, rng, name, shape, qtype)
        if hf_name:
            expected[hf_name] = (values, qtype)

    add("token_embd.weight", "model.embed_tokens.weight", (n_vocab, HIDDEN), Q.Q8_0)
    for gg, module, rows, cols in (("attn_q", "q_proj", HEADS * head_dim, HIDDEN),
                                   ("attn_k", "k_proj", KV_HEADS * head_dim, HIDDEN),
                                   ("attn_v", "v_proj", KV_HEADS * head_dim, HIDDEN),
                                   ("attn_output", "o_proj", HIDDEN, HEADS * head_dim)):
        add(f"blk.0.{gg}.weight", f"model.layers.0.self_attn.{module}.weight", (rows, cols),
            Q.Q4_0)
    add("blk.0.ffn_gate_inp.weight", None, (experts, HIDDEN), Q.F32)
    switch = "model.layers.0.mlp.switch_mlp"
    add("blk.0.ffn_gate_exps.weight", f"{switch}.gate_proj.weight", (experts, expert_ff, HIDDEN),
        Q.Q4_0)
    add("blk.0.ffn_up_exps.weight", f"{switch}.up_proj.weight", (experts, expert_ff, HIDDEN),
        Q.Q8_0)
    add("blk.0.ffn_down_exps.weight", f"{switch}.down_proj.weight", (experts, HIDDEN, expert_ff),
        Q.F16)
    for name, n in (("blk.0.attn_q_norm", head_dim), ("blk.0.attn_k_norm", head_dim),
                    ("blk.0.attn_norm", HIDDEN), ("blk.0.ffn_norm", HIDDEN),
                    ("output_norm", HIDDEN)):
        w.add_tensor(f"{name}.weight", (1 + 0.1 * rng.standard_normal(n)).astype(np.float32))
    add("output.weight", "lm_head.weight", (n_vocab, HIDDEN), Q.Q4_0)
    finish(w)
    return expected


# Fields mlx-lm's qwen3_moe ModelArgs requires that hf/'s config.json (save_pretrained's diff
# against Qwen3MoeConfig's defaults) leaves out: Qwen3MoeConfig's defaults, which mlx/'s
# config.json must hold and hf/'s is given here.
QWEN3MOE_DEFAULTS = {"decoder_sparse_step": 1, "mlp_only_layers": []}


def test_qwen3moe_expert_stacks_keep_their_blocks(mount, testdata, tmp_path):
    path = tmp_path / "tiny-qwen3moe.gguf"
    expected = write_qwen3moe(path, testdata / "real" / "ggml-vocab-llama-spm.gguf")
    m = mount(path)
    weights = served_weights(m / "mlx")
    for hf_name, (want, qtype) in expected.items():
        module = hf_name.removesuffix(".weight")
        if qtype in FORMS:
            _, bits, group = FORMS[qtype]
            got = mx.dequantize(weights[hf_name], weights[f"{module}.scales"],
                                weights[f"{module}.biases"], group_size=group, bits=bits)
        else:
            assert f"{module}.scales" not in weights, hf_name
            got = weights[hf_name]
            assert got.dtype == mx.float32, hf_name
        assert got.shape == want.shape and (np.array(got) == want).all(), hf_name
    assert not [k for k in weights if ".mlp.experts." in k]

    config = json.loads((m / "mlx" / "config.json").read_text())
    assert {k: config.get(k) for k in QWEN3MOE_DEFAULTS} == QWEN3MOE_DEFAULTS
    qmodel, tokenizer = mlx_lm.load(str(m / "mlx"))
    fmodel, _ = mlx_lm.load(str(m / "hf"), model_config=QWEN3MOE_DEFAULTS)
    layer = qmodel.model.layers[0]
    assert isinstance(layer.self_attn.q_proj, nn.QuantizedLinear)
    assert isinstance(qmodel.model.embed_tokens, nn.QuantizedEmbedding)
    switch = layer.mlp.switch_mlp
    assert (switch.gate_proj.bits, switch.up_proj.bits) == (4, 8)
    assert not hasattr(switch.down_proj, "scales")
    prompt = mx.array([tokenizer.encode("The quick brown fox jumps over the lazy dog")])
    q_logits, f_logits = np.array(qmodel(prompt)), np.array(fmodel(prompt))
    np.testing.assert_allclose(q_logits, f_logits, rtol=1e-4, atol=1e-4 * np.abs(f_logits).max())


@pytest.mark.parametrize("option,dtype", [("bf16", "bfloat16"), ("f16", "float16")])
def test_mlx_dtype_rounds_the_float_tensors_only(mount, testdata, tmp_path, option, dtype):
    """-o mlx_dtype: the float tensors (norms, the F16 matrix) in that dtype, rounded as MLX's
    own astype rounds ggml's float32 values; the quantized modules still ggml's blocks, equal
    to the float32 mount's byte for byte; mlx-lm loads and generates."""
    path = tmp_path / "tiny-llama-q4_0.gguf"
    expected = write_model(path, MODELS["q4_0"], testdata / "real" / "ggml-vocab-llama-spm.gguf",
                           seed=2)
    exact, rounded = mount(path), mount(path, "-o", f"mlx_dtype={option}")
    want_dtype = getattr(mx, dtype)
    weights, reference = served_weights(rounded / "mlx"), served_weights(exact / "mlx")
    assert set(weights) == set(reference)
    for name, got in weights.items():
        if got.dtype == mx.uint32 or name.endswith((".scales", ".biases")):
            assert got.dtype == reference[name].dtype, name
            assert np.array_equal(np.array(got), np.array(reference[name])), name
            continue
        assert got.dtype == want_dtype, name
        want = mx.array(expected[name][0]).astype(want_dtype)
        assert mx.array_equal(got, want).item(), name
    config = json.loads((rounded / "mlx" / "config.json").read_text())
    assert config["quantization"] == json.loads(
        (exact / "mlx" / "config.json").read_text())["quantization"]
    model, tokenizer = mlx_lm.load(str(rounded / "mlx"))
    assert type(model.model.layers[1].mlp.down_proj) is nn.Linear
    tokens = [r.token for r in mlx_lm.stream_generate(model, tokenizer, "Hello", max_tokens=20)]
    assert len(tokens) == 20 or tokens[-1] in tokenizer.eos_token_ids


@pytest.mark.parametrize("bits", [8, 6])
def test_mlx_requantize_quantizes_as_mlx_does(mount, testdata, tmp_path, bits):
    """-o mlx_requantize=BITS: each matrix whose type has no MLX form (IQ4_NL: a non-uniform
    grid) becomes MLX's own affine form, group 32, of its float32 values: weight, scales and
    biases equal to mx.quantize's of gguf-py's dequantization (q/k rows un-permuted), bit for
    bit; config.json's quantization gives it that form and "ggufs_not_exact" names exactly
    those modules. The matrices of exact types keep ggml's blocks (the same bytes as without
    the option), the F16 matrix stays float32; mlx-lm loads and generates."""
    types = dict(MODELS["q4_0"], output=Q.IQ4_NL, attn_v=Q.IQ4_NL, ffn_down=Q.IQ4_NL)
    path = tmp_path / "tiny-llama-iq4_nl.gguf"
    expected = write_model(path, types, testdata / "real" / "ggml-vocab-llama-spm.gguf", seed=3)
    exact, requantized = mount(path), mount(path, "-o", f"mlx_requantize={bits}")
    config = json.loads((requantized / "mlx" / "config.json").read_text())
    quantization = config["quantization"]
    default = {k: quantization[k] for k in ("group_size", "bits", "mode")}
    weights, reference = served_weights(requantized / "mlx"), served_weights(exact / "mlx")
    requantized_modules = set()
    for hf_name, (want, qtype) in expected.items():
        module = hf_name.removesuffix(".weight")
        if qtype != Q.IQ4_NL:
            for suffix in (".weight", ".scales", ".biases"):
                name = module + suffix
                assert (name in weights) == (name in reference), name
                if name in weights:
                    assert np.array_equal(np.array(weights[name]), np.array(reference[name])), name
            continue
        requantized_modules.add(module)
        assert quantization.get(module, default) == {"group_size": 32, "bits": bits,
                                                     "mode": "affine"}, module
        q, scales, biases = mx.quantize(mx.array(want), group_size=32, bits=bits)
        for suffix, mine in ((".weight", q), (".scales", scales), (".biases", biases)):
            got = weights[module + suffix]
            assert got.dtype == mine.dtype and got.shape == mine.shape, module + suffix
            assert np.array_equal(np.array(got).view(np.uint32), np.array(mine).view(np.uint32)), \
                module + suffix
    assert requantized_modules
    assert set(config["ggufs_not_exact"]) == requantized_modules, config["ggufs_not_exact"]
    assert "ggufs_not_exact" not in json.loads((exact / "mlx" / "config.json").read_text())
    assert quantization["model.layers.1.mlp.down_proj"] is False  # F16: float, not requantized
    model, tokenizer = mlx_lm.load(str(requantized / "mlx"))
    assert isinstance(model.model.layers[0].self_attn.v_proj, nn.QuantizedLinear)
    assert model.model.layers[0].self_attn.v_proj.bits == bits
    tokens = [r.token for r in mlx_lm.stream_generate(model, tokenizer, "Hello", max_tokens=20)]
    assert len(tokens) == 20 or tokens[-1] in tokenizer.eos_token_ids
