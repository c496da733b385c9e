"""FLOPs per token, recomputation, MFU from achieved throughput: checked against the papers."""

import math

import pytest
from hypothesis import given, strategies as st

from compute_budget.skill.errors import InputError
from compute_budget.skill.model.architecture import Architecture
from compute_budget.skill.model.flops import (
    flops_per_token,
    hardware_flops_per_token,
    mfu_from_achieved,
    seconds_from_achieved,
)
from compute_budget.skill.model.param_count import count_params
from compute_budget.skill.model.presets import get_preset

DAY = 86_400.0


def megatron_gpt(layers: int, hidden: int, heads: int, vocab: int, seq: int) -> Architecture:
    """The GPT shape of Narayanan et al. 2021 (Table 1): FFN 4h, learned positions, tied head."""
    return Architecture(
        source="Narayanan et al. 2021, Table 1", layers=layers, hidden=hidden, heads=heads,
        intermediate_size=4 * hidden, vocab_size=vocab, gated_mlp=False, tied_embeddings=True,
        position_embedding="learned", max_positions=seq, attention_bias="all", mlp_bias=True,
        norm="layernorm",
    )


# Narayanan et al. 2021, Table 1: GPT-3 175B (96 layers, h 12288, 96 heads) and the
# 1T-parameter model (128 layers, h 25600, 160 heads); V = 51200, s = 2048 for both.
GPT3 = megatron_gpt(96, 12288, 96, 51200, 2048)
ONE_T = megatron_gpt(128, 25600, 160, 51200, 2048)


@pytest.mark.parametrize("arch", [GPT3, ONE_T], ids=["gpt3-175b", "1T"])
def test_full_recompute_matches_narayanan_eq_3(arch: Architecture) -> None:
    # Narayanan et al. 2021, eq. 3: per iteration 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) FLOPs
    # with full recomputation and no causal saving; per token divide by B·s.
    layers, h, s, vocab = arch.layers, arch.hidden, 2048, arch.vocab_size
    eq_3 = 96 * layers * h**2 * (1 + s / (6 * h) + vocab / (16 * layers * h))
    ours = hardware_flops_per_token(flops_per_token(arch, s, causal=False), "full")
    assert ours.hardware_flops_per_token / eq_3 == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("arch", [GPT3, ONE_T], ids=["gpt3-175b", "1T"])
def test_model_flops_match_korthikanti(arch: Architecture) -> None:
    # Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models":
    # model FLOPs per iteration 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)), no recomputation.
    layers, h, s, vocab = arch.layers, arch.hidden, 2048, arch.vocab_size
    formula = 72 * layers * h**2 * (1 + s / (6 * h) + vocab / (12 * layers * h))
    flops = flops_per_token(arch, s, causal=False)
    assert flops.total / formula == pytest.approx(1.0, abs=1e-9)
    assert hardware_flops_per_token(flops, "none").hardware_flops_per_token == flops.total


def test_six_n_and_palm_formula_agree_with_the_breakdown() -> None:
    # nanoGPT transformer_sizing-style cross-check for GPT-2 (124M, T = 1024): Chowdhery et al.
    # 2022 (PaLM), App. B: 6·N + 12·L·H·Q·T. The two differ only by the bias, norm and position
    # parameters that 6·N counts as matmuls (under 1%).
    arch = get_preset("gpt2")
    flops = flops_per_token(arch, 1024, causal=False)
    palm = 6 * count_params(arch).total + 12 * 12 * 12 * 64 * 1024
    assert flops.total / palm == pytest.approx(1.0, abs=0.01)
    assert flops.six_n == 6 * 124_439_808
    # Without the attention term, matmul + LM head is 6·N up to those small parameters.
    assert (flops.matmul + flops.lm_head) / flops.six_n == pytest.approx(1.0, abs=0.01)


def test_gpt3_end_to_end_time_34_days() -> None:
    # Narayanan et al. 2021, Sec. 5.1: GPT-3 175B on 300B tokens, 1024 A100s at 140 TFLOP/s
    # (full recomputation) takes about 34 days (8·T·P/(n·X)).
    hardware = hardware_flops_per_token(flops_per_token(GPT3, 2048), "full")
    days = seconds_from_achieved(300e9, hardware.hardware_flops_per_token, 1024, 140) / DAY
    assert days == pytest.approx(34, abs=1)
    rule = 8 * 175e9 * 300e9 / (1024 * 140e12) / DAY  # their 8·T·P/(n·X)
    assert days == pytest.approx(rule, rel=0.03)


def test_1t_end_to_end_time_84_days() -> None:
    # Narayanan et al. 2021, Sec. 5.1: 1T parameters on 450B tokens, 3072 A100s at 163 TFLOP/s
    # takes about 84 days.
    hardware = hardware_flops_per_token(flops_per_token(ONE_T, 2048), "full")
    days = seconds_from_achieved(450e9, hardware.hardware_flops_per_token, 3072, 163) / DAY
    assert days == pytest.approx(84, abs=1)


def test_full_recompute_is_about_8nt_instead_of_6nt() -> None:
    # Narayanan et al. 2021, eq. 3 vs 72·…: one extra forward of the layers, 8/6 of the model.
    hardware = hardware_flops_per_token(flops_per_token(GPT3, 2048), "full")
    assert hardware.hardware_over_model == pytest.approx(8 / 6, rel=0.005)
    assert hardware.hardware_over_model < 8 / 6  # the LM head is not recomputed


def test_selective_recompute_adds_one_attention_forward() -> None:
    flops = flops_per_token(GPT3, 2048)
    selective = hardware_flops_per_token(flops, "selective")
    full = hardware_flops_per_token(flops, "full")
    # QKᵀ and attention·V forward: 2·2·L·H·Q·(T/2) FLOPs per token, causal.
    assert selective.recompute_flops_per_token == pytest.approx(2 * 2 * 96 * 12288 * 1024)
    assert flops.total < selective.hardware_flops_per_token < full.hardware_flops_per_token
    assert selective.model_flops_per_token == full.model_flops_per_token == flops.total


def test_causal_masking_halves_attention_only() -> None:
    causal = flops_per_token(GPT3, 2048)
    full = flops_per_token(GPT3, 2048, causal=False)
    assert causal.attention * 2 == pytest.approx(full.attention)
    assert (causal.matmul, causal.lm_head) == (full.matmul, full.lm_head)
    # PaLM App. B: 12·L·H·Q·T without masking.
    assert full.attention == pytest.approx(12 * 96 * 96 * 128 * 2048)
    assert (causal.attention_context, full.attention_context) == (1024, 2048)


def test_moe_counts_active_experts_and_router() -> None:
    # Mixtral is Mistral-7B's shape with 8 experts of the same MLP, 2 per token, and a router:
    # per token it runs one more MLP and the 4096 × 8 router in each of 32 layers.
    mistral = flops_per_token(get_preset("mistral-7b"), 4096)
    mixtral = flops_per_token(get_preset("mixtral-8x7b"), 4096)
    assert mixtral.matmul - mistral.matmul == 6 * 32 * (3 * 4096 * 14336 + 4096 * 8)
    assert mixtral.attention == mistral.attention
    # 6·N_active differs from the breakdown: it counts the embedding lookup and misses attention.
    assert mixtral.six_n == 6 * 12_879_925_248


def test_sliding_window_caps_the_attention_context() -> None:
    mistral = get_preset("mistral-7b")  # window 4096
    short = flops_per_token(mistral, 4096)
    long = flops_per_token(mistral, 32768)
    assert short.attention_context == 2048
    # Mean of min(i, W) over i in [0, T]: W − W²/(2T) = 4096 − 4096²/65536 = 3840.
    assert long.attention_context == 3840
    assert flops_per_token(mistral, 32768, causal=False).attention_context == 4096


def test_latent_attention_uses_qk_and_v_head_sizes() -> None:
    # Megatron-LM counts MLA core attention over H·(Q_nope + Q_rope) and H·Q_v, causal.
    arch = get_preset("deepseek-v3")
    flops = flops_per_token(arch, 4096)
    assert flops.attention == pytest.approx(6 * 61 * 128 * 2048 * (192 + 128))
    assert flops.lm_head == 6 * 7168 * 129280


def test_mfu_from_achieved_hardware_throughput() -> None:
    # Narayanan et al. 2021 report 140 TFLOP/s per A100 (312 dense BF16 peak) for GPT-3 with
    # full recomputation: hardware utilisation 45%, model utilisation about 3/4 of that.
    hardware = hardware_flops_per_token(flops_per_token(GPT3, 2048), "full")
    mfu = mfu_from_achieved(140, 312, hardware.model_flops_per_token,
                            hardware.hardware_flops_per_token)
    assert mfu == pytest.approx(140 / 312 * 6 / 8, rel=0.01)
    # No recomputation: the achieved throughput is all model FLOPs.
    assert mfu_from_achieved(140, 312, 1e9, 1e9) == pytest.approx(140 / 312)


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ((0, 312, 1.0, 1.0), "achieved_tflops"),
        ((float("nan"), 312, 1.0, 1.0), "achieved_tflops"),
        ((100, -1, 1.0, 1.0), "peak_tflops"),
        ((100, 312, True, 1.0), "model_flops_per_token"),
        ((100, 312, 1.0, float("inf")), "hardware_flops_per_token"),
        ((100, 312, 2.0, 1.0), "model_flops_per_token"),
        ((400, 312, 1.0, 1.0), "achieved_tflops"),
    ],
)
def test_mfu_from_achieved_rejects_bad_input(args: tuple[float, ...], field: str) -> None:
    with pytest.raises(InputError) as info:
        mfu_from_achieved(*args)
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: {args[list(FIELDS).index(field)]!r}")


FIELDS = ("achieved_tflops", "peak_tflops", "model_flops_per_token", "hardware_flops_per_token")


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ((0, 1e9, 8, 100), "tokens"),
        ((1e9, -1, 8, 100), "hardware_flops_per_token"),
        ((1e9, 1e9, 0, 100), "devices"),
        ((1e9, 1e9, 1.5, 100), "devices"),
        ((1e9, 1e9, True, 100), "devices"),
        ((1e9, 1e9, 8, float("nan")), "achieved_tflops"),
    ],
)
def test_seconds_from_achieved_rejects_bad_input(args: tuple[float, ...], field: str) -> None:
    with pytest.raises(InputError) as info:
        seconds_from_achieved(*args)  # type: ignore[arg-type]
    assert info.value.field == field


def test_seconds_from_achieved_arithmetic() -> None:
    # 1e12 tokens × 1e9 FLOPs / (1000 devices × 100 TFLOP/s) = 1e4 s.
    assert seconds_from_achieved(1e12, 1e9, 1000, 100) == pytest.approx(1e4)


@pytest.mark.parametrize("seq_len", [0, -5, 1.5, True, "long", 10**8])
def test_seq_len_must_be_a_positive_whole_number(seq_len: object) -> None:
    with pytest.raises(InputError) as info:
        flops_per_token(GPT3, seq_len)  # type: ignore[arg-type]
    assert info.value.field == "seq_len"


def test_seq_len_is_read_as_the_specs_read_it() -> None:
    assert flops_per_token(GPT3, "2048") == flops_per_token(GPT3, 2048)  # type: ignore[arg-type]


def test_unknown_recompute_is_rejected() -> None:
    with pytest.raises(InputError) as info:
        hardware_flops_per_token(flops_per_token(GPT3, 2048), "partial")  # type: ignore[arg-type]
    assert info.value.field == "recompute"


PRESET_NAMES = ["gpt2", "llama-3-8b", "mistral-7b", "mixtral-8x7b", "deepseek-v3"]


@given(
    name=st.sampled_from(PRESET_NAMES),
    seq_len=st.integers(min_value=1, max_value=200_000),
    extra=st.integers(min_value=1, max_value=100_000),
    causal=st.booleans(),
)
def test_longer_context_never_costs_less_and_recompute_never_saves(
    name: str, seq_len: int, extra: int, causal: bool
) -> None:
    arch = get_preset(name)
    short = flops_per_token(arch, seq_len, causal=causal)
    long = flops_per_token(arch, seq_len + extra, causal=causal)
    assert long.total >= short.total
    totals = [hardware_flops_per_token(short, r).hardware_flops_per_token
              for r in ("none", "selective", "full")]
    assert totals == sorted(totals)
    assert math.isclose(totals[0], short.total)
    assert short.total == pytest.approx(short.matmul + short.attention + short.lm_head)


def test_flop_counts_by_convention_for_a_guessed_shape() -> None:
    from compute_budget.skill.model.flops import CALIBRATION_CONTEXT, convert_mfu, flop_counts

    # 12·L·d·T full, half of it causal (Chowdhery et al. 2022, App. B; Megatron-LM).
    counts = flop_counts(6e9, 16384, layers=10, hidden=1000)
    assert counts.attention_full == pytest.approx(12 * 10 * 1000 * 16384)
    assert counts.attention_causal == pytest.approx(6 * 10 * 1000 * 16384)
    assert counts.attention_at_calibration == pytest.approx(6 * 10 * 1000 * CALIBRATION_CONTEXT)
    assert counts.estimate == pytest.approx(6e9 + 6 * 10 * 1000 * (16384 - CALIBRATION_CONTEXT))
    assert counts.per_token("6n") == 6e9
    assert convert_mfu(0.5, "full", counts) == pytest.approx(
        0.5 * counts.estimate / (6e9 + 12 * 10 * 1000 * 16384))
    # Below the calibration context nothing is added (the prior already contains it).
    assert flop_counts(6e9, 2048, layers=10, hidden=1000).estimate == 6e9
