"""Activation memory pinned to measurement: the hf formula against the bytes real transformers
models keep for the backward pass, for every family the config reader accepts
(benchmarks/activation_memory.py wrote the data file: torch 2.13 and transformers 5.24 on CPU,
bf16, random weights of each family's real layout; the README table is rendered from it)."""

import pytest

from benchmarks.activation_table import SEQ_LEN, Row, load, pinned, rows, shape_of
from compute_budget import MemorySpec, estimate_memory, get_preset
from compute_budget.prompts import render_memory
from compute_budget.skill.memory.activations import (
    LOGITS_BYTES,
    kv_heads_kept,
    layer_bytes_per_token,
    logits_bytes_per_element,
)
from compute_budget.skill.model.hf_families import SUPPORTED_MODEL_TYPES
from compute_budget.skill.model.modeling import ModelingFacts
from compute_budget.skill.model.shape import ModelShape

DATA = load()
SEQ_LENS = sorted({r["seq_len"] for f in DATA["families"].values()
                   for v in f["variants"].values() for r in v["results"]})
PINNED = pinned(DATA)
TOLERANCE = 0.05
"""The issue's bar: activation bytes per layer within 5% of measurement (issue 17, item 5)."""


def test_every_family_the_config_reader_accepts_is_measured() -> None:
    measured = {f["model_type"] for f in DATA["families"].values()}
    assert set(SUPPORTED_MODEL_TYPES) <= measured
    assert set(PINNED) == set(DATA["families"])  # each one compared at its default
    assert DATA["versions"]["transformers"].startswith("5.")
    assert DATA["versions"]["torch"].startswith("2.")


@pytest.mark.parametrize("family", sorted(DATA["families"]))
def test_the_formula_counts_the_attention_transformers_picks_by_default(family: str) -> None:
    # The default variant is built with no attn_implementation: what it recorded is
    # transformers' default for the family (eager for Gemma 2, which refuses SDPA).
    data = DATA["families"][family]
    default = data["variants"]["default"]
    shape = shape_of(data, default, 2)
    assert shape.modeling.attention == data["default_attention"]
    pinned_variant = data["variants"][data["pinned"]]
    kernel = pinned_variant["attn_implementation"]
    assert kernel == data["default_attention"] or kernel == "gpu_kernel_standin"


@pytest.mark.parametrize("seq_len", SEQ_LENS)
@pytest.mark.parametrize("family", sorted(PINNED))
def test_each_family_within_five_percent_at_its_default_attention(family: str,
                                                                   seq_len: int) -> None:
    row = next(r for r in rows(DATA, seq_len) if r.family == family and r.default)
    assert row.ratio == pytest.approx(1, abs=TOLERANCE), (row.measured, row.formula)


@pytest.mark.parametrize("row", [r for r in rows(DATA) if not r.default],
                         ids=lambda r: f"{r.family}-{r.variant}")
def test_the_other_attention_paths_within_five_percent(row: Row) -> None:
    # eager on SDPA families, the FlashAttention stand-in on Gemma 2, a masked window
    assert row.ratio == pytest.approx(1, abs=TOLERANCE)


def test_gemma_2_measured_eager_keeps_what_the_issue_reported() -> None:
    # A user measured the old formula at 0.58 of Gemma 2 with its default eager attention;
    # eager keeps three s×s tensors per head (tanh, fp32 softmax, its bf16 cast): 8·a·s.
    gemma = DATA["families"]["gemma2_9b"]["variants"]["default"]
    assert gemma["attn_implementation"] == "eager"
    heads = DATA["families"]["gemma2_9b"]["config_used"]["num_attention_heads"]
    slope = gemma["fit_in_seq_len"]["bytes_per_token_per_layer_per_seq_len"]
    assert slope == pytest.approx(8 * heads, rel=0.01)
    flash = DATA["families"]["gemma2_9b"]["variants"]["flash"]
    assert flash["fit_in_seq_len"]["bytes_per_token_per_layer_per_seq_len"] == pytest.approx(
        0, abs=0.1)


def test_the_loss_keeps_the_fp32_log_softmax_and_the_tanh_of_soft_capped_logits() -> None:
    # Non-layer bytes per token: 4·V (fp32 log-softmax), 2·V more where the final logits are
    # soft-capped (Gemma 2's tanh), the final norm and the LM head's input. The hf peak also
    # holds the bf16 logits and their fp32 gradient: 10·V, 12·V soft-capped.
    for name, family in DATA["families"].items():
        variant = family["variants"][family["pinned"]]
        shape = shape_of(family, variant, 2)
        assert shape.vocab is not None
        saved = logits_bytes_per_element(shape, "hf") - 6
        norm = 2 if shape.norm == "layernorm" else 8 if shape.modeling.norm_fp32 else 6
        expected = saved * shape.vocab + (norm + 2) * shape.hidden
        measured = variant["results"][0]["non_layer_bytes_per_token"]
        assert measured == pytest.approx(expected, rel=0.01), name
    gemma = shape_of(DATA["families"]["gemma2_9b"],
                     DATA["families"]["gemma2_9b"]["variants"]["default"], 2)
    assert logits_bytes_per_element(gemma, "hf") == 12
    assert LOGITS_BYTES["hf"] == 4 + 2 + 4
    assert LOGITS_BYTES["megatron"] == 4


def test_formula_follows_the_shape_not_a_constant_per_family() -> None:
    # Two Llama-architecture shapes measured: 49.0·h at h = 4096 (GQA 32/8, MLP 3.5h) and
    # 54.0·h at h = 2048 (GQA 16/8, MLP 4h). One constant per family could not give both.
    big, small = PINNED["llama3_8b"], PINNED["llama_h2048"]
    assert big.measured / big.hidden != pytest.approx(small.measured / small.hidden, rel=0.05)
    assert big.ratio == pytest.approx(1, abs=0.01) and small.ratio == pytest.approx(1, abs=0.01)


BASE = ModelShape(layers=1, hidden=4096, heads=32, kv_heads=8, head_dim=128, v_head_dim=128,
                  intermediate=14336, gated=True, origin="given")


def per_token(shape: ModelShape, *, flash: bool = True, local: bool = False,
              seq_len: int = SEQ_LEN) -> float:
    c = layer_bytes_per_token(shape, "hf", moe=shape.moe_layers > 0, seq_len=seq_len,
                              flash_attention=flash, local=local)
    return c.replicated + c.split + c.scores


def facts(**update: object) -> ModelingFacts:
    return ModelingFacts.model_validate(update)


def test_each_term_moves_the_bytes_the_way_the_measurement_did() -> None:
    # each extra MLP channel: 8 bytes (gate, up, activation and product outputs in bf16)
    wider = BASE.model_copy(update={"intermediate": 14336 + 1})
    assert per_token(wider) - per_token(BASE) == 8
    # each extra KV head of 128: K and V, 2 × 2 × 128 bytes
    more_kv = BASE.model_copy(update={"kv_heads": 9})
    assert per_token(more_kv) - per_token(BASE) == 512
    # each extra routed expert per token: its token copy, its MLP and its output
    moe = BASE.model_copy(update={"experts": 8, "experts_per_token": 2,
                                  "expert_intermediate": 14336, "moe_layers": 1})
    top3 = moe.model_copy(update={"experts_per_token": 3})
    assert per_token(top3) - per_token(moe) == 4 * 4096 + 8 * 14336 + 40


def test_norms_and_qk_norms_count_their_fp32_copies() -> None:
    h, a, g, q = 4096, 32, 8, 128
    # Gemma's four norms keep an fp32 normalised value: 8h + 4 each instead of 6h + 4
    gemma = BASE.model_copy(update={"layer_norms": 4, "modeling": facts(norm_fp32=True)})
    assert per_token(gemma) - per_token(BASE) == 4 * (8 * h + 4) - 2 * (6 * h + 4)
    # Qwen3's per-head QK-norm: 6 bytes per query and key element, an rsqrt per head
    qwen3 = BASE.model_copy(update={"qk_norm": "head"})
    assert per_token(qwen3) - per_token(BASE) == 6 * (a + g) * q + 4 * (a + g)
    # OLMo 2's whole-projection QK-norm in fp32: 8 bytes per element, one rsqrt per projection
    olmo = BASE.model_copy(update={"qk_norm": "projection", "modeling": facts(norm_fp32=True)})
    norms_fp32 = 2 * 2 * h  # its two layer norms keep fp32 too
    assert per_token(olmo) - per_token(BASE) == 8 * (a + g) * q + 8 + norms_fp32


def test_fused_qkv_keeps_the_whole_projection_for_v() -> None:
    # Phi-3: V is a view of qkv_proj's output, which stays whole; the rotated query is
    # concatenated, so the kernel's output is copied for o_proj.
    a, g, q = 32, 8, 128
    phi = BASE.model_copy(update={"modeling": facts(fused_qkv=True, rope_concat=True)})
    assert per_token(phi) - per_token(BASE) == 2 * (a + g) * q + 2 * a * q
    # GPT-2 (no rotary): Q, K and V are all views of one output, counted once
    plain = BASE.model_copy(update={"rotary": False, "modeling": facts(fused_qkv=True)})
    assert per_token(plain) == per_token(BASE)


def test_eager_keeps_the_scores_and_repeated_heads() -> None:
    a, q, s = 32, 128, SEQ_LEN
    repeated = 2 * 2 * (a - 8) * q  # K and V copied to every query head
    eager = per_token(BASE, flash=False) - per_token(BASE)
    assert eager == 6 * a * s + repeated - 4 * a  # no log-sum-exp
    capped = BASE.model_copy(update={"modeling": facts(attention_softcap=True)})
    assert per_token(capped, flash=False) - per_token(BASE, flash=False) == 2 * a * s
    assert kv_heads_kept(BASE, eager=True, masked=False) == a
    mqa = BASE.model_copy(update={"kv_heads": 1})  # a repeat of one head is a view
    assert kv_heads_kept(mqa, eager=True, masked=True) == 1


def test_a_sliding_window_layer_keeps_the_mask_and_repeated_heads_past_the_window() -> None:
    window = BASE.model_copy(update={"sliding_window": 1024, "sliding_layers": 1})
    assert per_token(window, local=True, seq_len=512) == per_token(BASE, seq_len=512)
    extra = per_token(window, local=True, seq_len=2048) - per_token(BASE, seq_len=2048)
    assert extra == 2 * 2048 + 2 * 2 * (32 - 8) * 128


def test_gemma_2_is_counted_with_eager_attention_unless_told_otherwise() -> None:
    spec = MemorySpec(preset="gemma-2-9b", gpu_count=8, gpu="a100-80gb", seq_len=4096,
                      micro_batch=1, recompute="none", zero=3, tp=1, pp=1)
    eager = estimate_memory(spec)
    assert "eager_attention_default" in eager.notes and not eager.flash_attention
    flash = estimate_memory(spec.model_copy(update={"flash_attention": True}))
    assert "eager_attention_default" not in flash.notes and flash.flash_attention
    # three s×s tensors per head (8 bytes per element) in each of the 42 layers
    arch = get_preset("gemma-2-9b")
    scores = 8 * arch.heads * 4096 * 4096 * arch.layers
    delta = eager.per_gpu_bytes.activations - flash.per_gpu_bytes.activations
    assert delta == pytest.approx(scores, rel=0.02)
    reply = render_memory(eager)
    assert "eager attention is transformers' default" in reply
    assert "Check these" not in reply  # worded in the activations line, not as a warning
    assert "eager attention is transformers' default" not in render_memory(flash)
    llama = estimate_memory(MemorySpec(preset="llama-3-8b", gpu_count=8, gpu="a100-80gb"))
    assert llama.flash_attention and llama.notes == []
    megatron = estimate_memory(MemorySpec(preset="gemma-2-9b", gpu_count=8, stack="megatron"))
    assert megatron.flash_attention  # fused kernels: the eager default is transformers' alone
    given = estimate_memory(MemorySpec(preset="llama-3-8b", gpu_count=8, flash_attention=False))
    assert not given.flash_attention and given.notes == []
    assert "s×s attention scores kept, as you set" in render_memory(given)
