"""Run estimates from an architecture (config.json or preset): exact counts, FLOPs by term,
recomputation, measured throughput, and the memory check."""

from pathlib import Path

import pytest
from pydantic import ValidationError

from compute_budget import RunSpec, count_params, estimate_run, get_preset
from compute_budget.skill.errors import describe_error
from compute_budget.skill.vocabulary import DefaultUsed

CONFIGS = Path(__file__).parent.parent / "fixtures" / "configs"


def _spec(**fields: object) -> RunSpec:
    base: dict[str, object] = {"tokens": "1T", "gpu": "h100", "gpu_count": 64}
    base.update(fields)
    return RunSpec(**base)  # type: ignore[arg-type]


def test_config_path_gives_exact_counts_and_flops_terms() -> None:
    est = estimate_run(_spec(config=str(CONFIGS / "meta-llama-3-8b.json"), seq_len=8192))
    # Llama-3-8B: 8,030,261,248 parameters (HF Meta-Llama-3-8B, sum of numel).
    assert est.params == 8_030_261_248
    assert est.flops_method == "architecture"
    b = est.flops_breakdown
    assert b is not None and est.param_breakdown is not None
    assert b.total == pytest.approx(b.matmul + b.attention + b.lm_head)
    # Causal attention at 8192 tokens: 6·L·H·Q·T (half of PaLM's 12·L·H·Q·T).
    assert b.attention == pytest.approx(6 * 32 * 32 * 128 * 8192)
    assert b.lm_head == pytest.approx(6 * 4096 * 128256)
    # The estimate counts in the prior's convention: 6·N from the exact count plus only the
    # causal attention beyond the 4k calibration context (8192 − 4096 tokens of it).
    assert est.flop_counts is not None and est.flop_counts.calibration_context == 4096
    assert est.flops_per_token == pytest.approx(6 * 8_030_261_248 + 6 * 32 * 32 * 128 * 4096)
    assert est.flops == pytest.approx(est.flops_per_token * 1e12)
    assert not est.seq_len_inferred


def test_config_object_equals_config_file() -> None:
    import json

    data = json.loads((CONFIGS / "mixtral-8x7b-v0.1.json").read_text())
    from_object = estimate_run(_spec(config=data))
    from_file = estimate_run(_spec(config=str(CONFIGS / "mixtral-8x7b-v0.1.json")))
    assert from_object.flops == from_file.flops
    # Mixtral-8x7B: 46.7B total, 12.9B active (HF model card; Jiang et al. 2024).
    assert from_object.params == 46_702_792_704
    assert from_object.active_params == 12_879_925_248
    assert from_object.mfu_used.family == "moe"  # inferred from the experts


def test_preset_matches_its_config() -> None:
    preset = estimate_run(_spec(preset="llama-2-7b", seq_len=4096))
    config = estimate_run(_spec(config=str(CONFIGS / "llama-2-7b-hf.json"), seq_len=4096))
    assert preset.params == config.params == 6_738_415_616
    assert preset.flops == pytest.approx(config.flops)


def test_default_sequence_length_is_said_and_capped_by_learned_positions() -> None:
    assert estimate_run(_spec(preset="llama-3-8b")).seq_len_inferred
    assert estimate_run(_spec(preset="gpt2")).seq_len == 1024  # its learned position table
    with pytest.raises(ValidationError) as info:
        _spec(preset="gpt2", seq_len=4096)
    assert describe_error(info.value).startswith("seq_len: 4096 is not allowed")


def test_architecture_flops_stay_close_to_six_n_at_short_context() -> None:
    # nanoGPT's transformer_sizing check: 6N against the PaLM-style count, within a few %.
    est = estimate_run(_spec(preset="llama-2-7b", seq_len=2048))
    b = est.flops_breakdown
    assert b is not None
    assert b.total / b.six_n == pytest.approx(1.0, abs=0.03)


def test_long_context_makes_attention_matter() -> None:
    short = estimate_run(_spec(preset="llama-3-8b", seq_len=2048, mfu=0.3))
    long = estimate_run(_spec(preset="llama-3-8b", seq_len=131072, mfu=0.3))
    assert long.flops > 1.5 * short.flops


def test_user_params_that_disagree_with_the_config_are_flagged() -> None:
    est = estimate_run(_spec(preset="llama-3-8b", params="7B"))
    assert est.params == count_params(get_preset("llama-3-8b")).total
    assert [w.code for w in est.warnings] == ["params_differ"]
    assert est.warnings[0].numbers["exact"] == 8_030_261_248
    assert not estimate_run(_spec(preset="llama-3-8b", params="8.03B")).warnings


# Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters", Sec.
# 5.1: end-to-end time ≈ 8·T·P / (n·X) with full recomputation.
def test_narayanan_gpt3_through_the_estimator() -> None:
    # GPT-3 175B on 300B tokens, 1024 A100 at 140 TFLOP/s achieved: about 34 days.
    est = estimate_run(RunSpec(preset="gpt3-175b", tokens="300B", gpu="a100", gpu_count=1024,
                               achieved_tflops=140, recompute="full", seq_len=2048))
    assert est.mfu_used.origin == "achieved"
    assert est.wall_days == pytest.approx(34, abs=1)
    assert est.hfu == pytest.approx(140 / 312, rel=1e-9)
    assert est.hardware_flops / est.flops == pytest.approx(4 / 3, rel=0.02)


def test_narayanan_1t_through_the_estimator() -> None:
    # 1T parameters on 450B tokens, 3072 A100 at 163 TFLOP/s achieved: about 84 days.
    est = estimate_run(RunSpec(params="1T", tokens="450B", gpu="a100", gpu_count=3072,
                               achieved_tflops=163, recompute="full"))
    assert est.wall_days == pytest.approx(84, abs=2)
    assert est.mfu == pytest.approx(163 * 6 / 8 / 312)


def test_achieved_without_recomputation_is_mfu_directly() -> None:
    est = estimate_run(_spec(params="7B", achieved_tflops=400))
    assert est.mfu == pytest.approx(400 / 989.5)
    assert est.hfu == pytest.approx(est.mfu)


def test_recomputation_does_not_change_time_under_a_given_mfu() -> None:
    plain = estimate_run(_spec(preset="llama-3-8b", mfu=0.3))
    full = estimate_run(_spec(preset="llama-3-8b", mfu=0.3, recompute="full"))
    assert full.wall_hours == pytest.approx(plain.wall_hours)
    assert full.hardware_flops > plain.hardware_flops == pytest.approx(plain.flops)


def test_memory_check_finds_the_lowest_zero_stage_that_fits() -> None:
    est = estimate_run(_spec(preset="llama-3-8b", gpu_count=8, recompute="full", tp=1))
    assert est.memory is not None and est.memory.fits
    assert est.memory.layout.chosen_by == "search" and est.memory.recompute == "full"
    assert est.memory.zero > 0
    lower = estimate_run(_spec(preset="llama-3-8b", gpu_count=8, recompute="full",
                               zero=est.memory.zero - 1))
    # ZeRO pinned one stage lower does not fit at TP 1; the search then opens up what the user
    # left open (tensor parallelism) instead of declaring the run impossible.
    assert lower.memory is not None and lower.memory.zero == est.memory.zero - 1
    assert lower.memory.fits and lower.memory.tp > 1


def test_memory_check_tries_recomputation_and_tensor_parallelism_left_open() -> None:
    est = estimate_run(_spec(preset="llama-3-70b", gpu_count=64, seq_len=8192))
    assert est.memory is not None and est.memory.fits
    assert (est.memory.recompute, est.memory.tp) != ("none", 1)
    # With the layout pinned down by the user, nothing is adjusted.
    pinned = estimate_run(_spec(preset="llama-3-70b", gpu_count=64, seq_len=8192,
                                recompute="none", tp=1, pp=1, zero=3, offload=False))
    assert pinned.feasibility == "does_not_fit"
    assert pinned.memory is not None and pinned.memory.layout.chosen_by == "given"
    assert pinned.memory.layout.binding == "pinned"


def test_memory_check_reports_when_nothing_fits() -> None:
    est = estimate_run(_spec(preset="llama-3-70b", gpu_count=1, seq_len=8192))
    assert est.feasibility == "does_not_fit"
    assert est.memory is not None and est.memory.fits is False


def test_lora_costs_fewer_flops_and_fits_where_full_fine_tuning_does_not() -> None:
    # 70B with 200M trainable (LoRA) on 8 H100: frozen weights skip their weight gradients.
    full = estimate_run(_spec(preset="llama-3-70b", gpu_count=8, tokens="1B", mfu=0.3))
    lora = estimate_run(_spec(preset="llama-3-70b", gpu_count=8, tokens="1B", mfu=0.3,
                              trainable_params="200M"))
    frozen = full.params - 200e6
    assert lora.flops_per_token == pytest.approx(full.flops_per_token - 2 * frozen)
    assert full.memory is not None and full.memory.offload  # full fine-tuning needs offload
    assert lora.memory is not None and lora.memory.fits and not lora.memory.offload
    assert lora.memory is not None and lora.memory.trainable_params == 200e6
    kinds = [a.kind for a in __import__("compute_budget").suggest_alternatives(
        _spec(preset="llama-3-70b", gpu_count=8, tokens="1B", trainable_params="200M")
    ).alternatives]
    assert "distillation" not in kinds


@pytest.mark.parametrize(
    ("fields", "name"),
    [
        ({"preset": "llama-3-8b", "tp": 3, "gpu_count": 63}, "tp"),
        ({"preset": "llama-3-8b", "pp": 64}, "pp"),
        ({"preset": "gpt5"}, "preset"),
        ({"preset": "llama-3-8b", "config": str(CONFIGS / "gpt2.json")}, "preset"),
        ({"config": "/nonexistent/config.json"}, "config"),
        ({"config": {"model_type": "llama", "hidden_size": 4096}}, "num_attention_heads"),
        ({"config": {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
                     "num_attention_heads": 30, "intermediate_size": 11008,
                     "vocab_size": 32000}}, "num_attention_heads"),
        ({"params": "7B", "mfu": 0.4, "achieved_tflops": 300}, "achieved_tflops"),
        ({"params": "7B", "achieved_tflops": 2000}, "achieved_tflops"),
        ({"tokens": "1T"}, "params"),
        ({"params": "7B", "recompute": "sometimes"}, "recompute"),
    ],
)
def test_bad_architecture_input_names_the_field(fields: dict[str, object], name: str) -> None:
    with pytest.raises(ValueError) as info:
        estimate_run(_spec(**fields))
    assert describe_error(info.value).startswith(f"{name}: "), describe_error(info.value)


def test_unreadable_and_invalid_config_files(tmp_path: Path) -> None:
    bad_json = tmp_path / "config.json"
    bad_json.write_text("{not json")
    with pytest.raises(ValidationError) as info:
        _spec(config=str(bad_json))
    assert "valid JSON" in describe_error(info.value)
    not_object = tmp_path / "list.json"
    not_object.write_text("[1, 2]")
    with pytest.raises(ValidationError) as info:
        _spec(config=str(not_object))
    assert "a JSON object" in describe_error(info.value)


def test_alternatives_with_an_architecture_keep_their_ratios() -> None:
    from compute_budget import suggest_alternatives

    report = suggest_alternatives(_spec(preset="llama-3-8b", seq_len=8192, mfu=0.3,
                                        usd_per_gpu_hour=2.0))
    by_kind = {a.kind: a for a in report.alternatives}
    # The given MFU (6n convention) fixes the original's time at 6·N·T; the scaled alternative
    # runs its per-token count (attention beyond the 4k calibration context included) at it.
    counts = report.original.flop_counts
    assert counts is not None
    assert by_kind["smaller_scale"].cost_ratio == pytest.approx(
        0.25 * counts.estimate / counts.six_n)
    assert by_kind["shorter_run"].cost_ratio == pytest.approx(0.3)
    distilled = by_kind["distillation"]
    # the teacher is the next larger Llama 3, the 70B (70,553,706,496 parameters): its forward
    # pass, 2 FLOPs per parameter per token, on a tenth of the tokens
    assert distilled.flops == pytest.approx(
        (report.original.flops_per_token + 2 * 70_553_706_496) * 1e11)


# --- One FLOP convention (issue 11): the prior applies to 6·N_active·T ---------------------

def _llama2(**fields: object) -> RunSpec:
    return _spec(preset="llama-2-7b", tokens="2T", gpu="a100-80gb", gpu_count=256, **fields)


def test_config_and_params_agree_at_ordinary_context() -> None:
    # Llama 2 7B: 6,738,415,616 parameters (HF Llama-2-7b-hf); at its 4k training context the
    # exact config and "7B" differ only by 7B / 6.74B (3.9%), not the +6% of term-by-term FLOPs.
    exact = estimate_run(_llama2(seq_len=4096))
    rough = estimate_run(_spec(params="7B", tokens="2T", gpu="a100-80gb", gpu_count=256,
                               seq_len=4096))
    assert exact.params == 6_738_415_616
    assert exact.flops_per_token == pytest.approx(6 * 6_738_415_616)
    assert exact.gpu_hours == pytest.approx(rough.gpu_hours, rel=0.04)


def test_long_context_adds_only_the_attention_beyond_the_calibration_context() -> None:
    at_4k = estimate_run(_llama2(seq_len=4096))
    at_32k = estimate_run(_llama2(seq_len=32768))
    # Causal attention 6·L·H·Q·T, L = 32, H·Q = 4096: what 32k adds beyond 4k.
    beyond = 6 * 32 * 4096 * (32768 - 4096)
    assert at_32k.flops_per_token - at_4k.flops_per_token == pytest.approx(beyond)
    assert at_32k.flop_counts is not None
    assert at_32k.flop_counts.attention_beyond_calibration == pytest.approx(beyond)
    # Same prior, so the time grows by the FLOPs (+56% for Llama 2 7B at 32k) and by the
    # layout the longer sequence's activations need (TP 2 and ZeRO-3, ×1.08): the prior's runs,
    # at their 4k, did not pay it, so it is not credited against them
    assert at_4k.layout_cost is not None and at_32k.layout_cost is not None
    assert at_4k.layout_cost.total == 1.0 and at_32k.layout_cost.in_prior == 1.0
    assert at_32k.layout_cost.total == pytest.approx(1.08, abs=0.005)
    assert at_32k.wall_hours / at_4k.wall_hours == pytest.approx(
        at_32k.flops_per_token / at_4k.flops_per_token * at_32k.layout_cost.total, rel=1e-3)


@pytest.mark.parametrize(("convention", "attention"), [
    ("6n", 0), ("causal", 6 * 32 * 4096 * 32768), ("full", 12 * 32 * 4096 * 32768)])
def test_a_given_mfu_is_converted_from_its_convention(convention: str, attention: int) -> None:
    # An MFU of 0.4 counted as 6N + attention (0 / causal / full at 32k) means the run does
    # (6N + attention)·T at 0.4 of peak; the estimate's MFU is re-expressed on its own count.
    est = estimate_run(_llama2(seq_len=32768, mfu=0.4, mfu_convention=convention))
    six_n = 6 * 6_738_415_616
    assert est.mfu_used.convention == convention and est.mfu_used.given == 0.4
    assert est.mfu == pytest.approx(0.4 * est.flops_per_token / (six_n + attention))
    assert est.wall_hours * 3600 == pytest.approx(
        (six_n + attention) * 2e12 / (256 * 312e12 * 0.4), rel=1e-6)


def test_full_attention_mfu_read_as_causal_would_be_too_short() -> None:
    # Issue 11: a nanoGPT/torchtitan/PaLM MFU (full attention) read as causal makes a 32k run
    # too short; here by (6N + full) / (6N + causal) = 1.39 for Llama 2 7B.
    full = estimate_run(_llama2(seq_len=32768, mfu=0.4, mfu_convention="full"))
    causal = estimate_run(_llama2(seq_len=32768, mfu=0.4, mfu_convention="causal"))
    assert full.wall_hours / causal.wall_hours == pytest.approx(
        (6 * 6_738_415_616 + 12 * 32 * 4096 * 32768) / (6 * 6_738_415_616 + 6 * 32 * 4096 * 32768))


def test_mfu_convention_needs_an_mfu() -> None:
    with pytest.raises(ValidationError) as info:
        _llama2(mfu_convention="full")
    assert "mfu_convention" in str(info.value)


def test_default_convention_is_6n_and_says_so() -> None:
    est = estimate_run(_llama2(seq_len=4096, mfu=0.4))
    assert est.mfu_used.convention == "6n"
    assert DefaultUsed(field="mfu_convention", value="6n", basis="default") in est.defaults_used
    assert estimate_run(_llama2(seq_len=4096)).mfu_used.convention is None
