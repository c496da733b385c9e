"""Activation memory pinned to measurement: the hf formula against the bytes real transformers
models keep for the backward pass (benchmarks/activation_memory.py wrote the data file;
torch 2.13 and transformers 5.24 on CPU, SDPA flash kernel, bf16)."""

import pytest

from benchmarks.activation_table import EXCLUDED, SEQ_LEN, load, rows
from compute_budget.skill.memory.activations import LOGITS_BYTES, layer_bytes_per_token
from compute_budget.skill.model.shape import ModelShape

DATA = load()
ROWS = {r.family: r for r in rows(DATA)}


def test_the_three_families_the_issue_names_are_measured() -> None:
    # a Llama-style, a Qwen2-style (wider SwiGLU) and a Mixtral-style (MoE) config at least
    assert {"llama3_8b", "qwen2_7b", "mixtral_8x7b"} <= set(ROWS)
    assert DATA["versions"]["transformers"].startswith("5.")
    assert DATA["versions"]["torch"].startswith("2.")


@pytest.mark.parametrize("family", sorted(ROWS))
def test_formula_within_ten_percent_of_the_measured_bytes_per_layer(family: str) -> None:
    row = ROWS[family]
    assert row.ratio == pytest.approx(1, abs=0.10)


def test_measured_bytes_are_linear_in_the_sequence_length_with_flash_attention() -> None:
    # The flash kernel keeps no s×s scores: bytes per token per layer do not grow with s.
    for name, family in DATA["families"].items():
        if name in EXCLUDED:
            continue
        per_token = [r["bytes_per_token_per_layer"] for r in family["results"]]
        assert max(per_token) == pytest.approx(min(per_token), rel=1e-3), name


def test_the_loss_keeps_the_fp32_log_softmax_of_the_logits() -> None:
    # Non-layer bytes per token: 4·V (log-softmax) + 8·h (final norm, LM-head input) + RoPE
    # tables and indices. The hf stack's peak also holds the bf16 logits and their fp32
    # gradient, so it counts 10·V; the measured saved part is the 4·V.
    for name, family in DATA["families"].items():
        if name in EXCLUDED:
            continue
        vocab = family["config_used"]["vocab_size"]
        h = family["hidden_size"]
        measured = family["results"][0]["non_layer_bytes_per_token"]
        assert measured == pytest.approx(4 * vocab + 8 * h, rel=0.01), name
    assert LOGITS_BYTES["hf"] == 4 + 2 + 4
    assert LOGITS_BYTES["megatron"] == 4


def test_formula_follows_the_shape_not_a_constant_per_family() -> None:
    # Two Llama-architecture shapes measured: 49.0·h at h = 4096 (GQA 32/8, MLP 3.5h) and
    # 54.0·h at h = 2048 (GQA 16/8, MLP 4h). One constant per family could not give both.
    big, small = ROWS["llama3_8b"], ROWS["llama_h2048"]
    assert big.measured / big.hidden != pytest.approx(small.measured / small.hidden, rel=0.05)
    assert big.ratio == pytest.approx(1, abs=0.02) and small.ratio == pytest.approx(1, abs=0.02)


def test_each_term_moves_the_bytes_the_way_the_measurement_did() -> None:
    base = ModelShape(layers=1, hidden=4096, heads=32, kv_heads=8, head_dim=128, v_head_dim=128,
                      intermediate=14336, gated=True, origin="given")

    def per_token(shape: ModelShape) -> float:
        c = layer_bytes_per_token(shape, "hf", moe=shape.moe_layers > 0, seq_len=SEQ_LEN)
        return c.replicated + c.split + c.scores

    # each extra MLP channel: 8 bytes (gate, up, activation and product outputs in bf16)
    wider = base.model_copy(update={"intermediate": 14336 + 1})
    assert per_token(wider) - per_token(base) == 8
    # each extra KV head of 128: K and V, 2 × 2 × 128 bytes
    more_kv = base.model_copy(update={"kv_heads": 9})
    assert per_token(more_kv) - per_token(base) == 512
    # each extra routed expert per token: its token copy, its MLP and its output
    moe = base.model_copy(update={"experts": 8, "experts_per_token": 2,
                                  "expert_intermediate": 14336, "moe_layers": 1})
    top3 = moe.model_copy(update={"experts_per_token": 3})
    assert per_token(top3) - per_token(moe) == 4 * 4096 + 8 * 14336 + 40
