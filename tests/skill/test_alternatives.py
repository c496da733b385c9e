"""Cheaper alternatives: chosen by the kind of run, each fully estimated, each with its saving."""

import json
from pathlib import Path

import pytest

from compute_budget import RunSpec, suggest_alternatives
from compute_budget.cli import main
from compute_budget.prompts import naming, render_alternatives
from compute_budget.skill.advice.alternative_rows import is_on_demand, on_demand_quote, seeds_needed
from compute_budget.skill.advice.alternatives import AlternativesSpec, alternatives_for
from compute_budget.skill.errors import InputError
from compute_budget.skill.estimate import estimate_run
from compute_budget.skill.hardware import mfu as mfu_module
from compute_budget.skill.hardware.catalog import get_accelerator, list_accelerators

CONFIGS = Path(__file__).parent.parent / "fixtures" / "configs"
# 7B × 100B on 8 A100 at MFU 0.4 and $1.50: 4.2e21 FLOPs / (8 × 312e12 × 0.4) = 4,206,731 s,
# 9,348.3 GPU-h, $14,022.4 (the stage-3 skill's worked example).
SPEC = RunSpec(params="7B", tokens="100B", gpu="a100", gpu_count=8, mfu=0.4,
               usd_per_gpu_hour=1.5)
WORKED_COST = 4.2e21 / (8 * 312e12 * 0.4) / 3600 * 8 * 1.5
# An ablation, 1.3B × 26B on 8 A100 at MFU 0.4 and $2: 6 · 1.3e9 · 26e9 = 2.028e20 FLOPs;
# / (8 × 312e12 × 0.4 FLOP/s) = 203,125 s = 56.42 h → 451.39 GPU-h → $902.78 a run.
ABLATION = RunSpec(params="1.3B", tokens="26B", gpu="a100", gpu_count=8, mfu=0.4,
                   usd_per_gpu_hour=2.0, kind="ablation")
ABLATION_COST = 2.028e20 / (8 * 312e12 * 0.4) / 3600 * 8 * 2.0


def _run(spec, **options):
    report = suggest_alternatives(spec, **options)
    return report.original, report.alternatives


def _by_kind(alternatives, kind):
    return [a for a in alternatives if a.kind == kind]


def _kinds(spec, **options):
    return {a.kind for a in suggest_alternatives(spec, **options).alternatives}


# --- which alternatives, by kind of run ------------------------------------------------------

FROM_SCRATCH = {"smaller_scale", "shorter_run", "distillation"}


@pytest.mark.parametrize(
    ("fields", "options", "present", "absent"),
    [
        # Pre-training with no larger model to distil from: no distillation row.
        ({"params": "7B"}, {}, {"smaller_scale", "shorter_run", "other_hardware",
                                "different_idea"},
         {"distillation", "more_seeds", "lora", "fewer_tokens", "smaller_base"}),
        ({"params": "7B"}, {"teacher_params": 70e9}, {"distillation"}, set()),
        ({"preset": "llama-3-8b"}, {}, {"distillation"}, set()),  # Llama 3 70B exists
        ({"preset": "llama-3-70b"}, {}, {"smaller_scale"}, {"distillation"}),  # none larger
        # Continued pre-training of Llama 3 8B: nothing from scratch, and no smaller Llama 3
        # preset to start from.
        ({"preset": "llama-3-8b", "kind": "continued-pretrain"}, {},
         {"fewer_tokens", "lora", "other_hardware", "different_idea"},
         FROM_SCRATCH | {"smaller_base", "more_seeds"}),
        ({"preset": "llama-2-70b", "kind": "fine-tune"}, {},
         {"fewer_tokens", "lora", "smaller_base"}, FROM_SCRATCH),
        # Already LoRA: no LoRA row; known only by size: no smaller base.
        ({"params": "7B", "kind": "fine-tune", "lora_rank": 8}, {}, {"fewer_tokens"},
         FROM_SCRATCH | {"lora", "smaller_base"}),
        # An ablation: a smaller proxy and more seeds; no distillation (a teacher is refused,
        # test_a_teacher_only_where_distillation_is_offered).
        ({"params": "1.3B", "kind": "ablation"}, {},
         {"smaller_scale", "more_seeds", "other_hardware", "different_idea"},
         {"distillation", "shorter_run", "lora", "fewer_tokens", "smaller_base"}),
    ],
)
def test_alternatives_follow_the_kind_of_run(
    fields: dict[str, object], options: dict[str, object], present: set[str],
    absent: set[str],
) -> None:
    spec = RunSpec.model_validate({"tokens": "50B", "gpu": "h100", "gpu_count": 8, **fields})
    report = suggest_alternatives(spec, **options)
    kinds = {a.kind for a in report.alternatives}
    assert present <= kinds
    assert not kinds & absent
    assert report.kind == spec.resolved_kind
    assert {a.run_kind for a in report.alternatives} == {spec.resolved_kind}
    assert report.alternatives[-1].kind == "different_idea"


@pytest.mark.parametrize(("fields", "allowed"), [
    ({"preset": "llama-3-8b", "kind": "continued-pretrain"}, "only with kind pretrain"),
    ({"params": "1.3B", "kind": "ablation"}, "only with kind pretrain"),
    ({"params": "7B", "lora_rank": 8}, "only with kind pretrain"),  # fine-tune by default
    ({"params": "7B", "kind": "pretrain", "trainable_params": "1B"}, "trains every weight"),
])
def test_a_teacher_only_where_distillation_is_offered(fields: dict[str, object],
                                                      allowed: str) -> None:
    # A teacher given to a run that gets no distillation row was dropped without a word
    # (a CLI review: --kind continued-pretrain --teacher-params 70B): refused, naming the kind.
    spec = RunSpec.model_validate({"tokens": "50B", "gpu": "h100", "gpu_count": 8, **fields})
    with pytest.raises(InputError) as info:
        suggest_alternatives(spec, teacher_params=70e9)
    assert info.value.field == "teacher_params" and info.value.value == 70e9
    assert allowed in info.value.allowed
    if "kind" in allowed:
        assert spec.resolved_kind in info.value.allowed
    with pytest.raises(InputError, match=r"^teacher_params: 70B is not allowed; only "):
        alternatives_for(AlternativesSpec.model_validate({
            "tokens": "50B", "gpu": "h100", "gpu_count": 8, "teacher_params": "70B", **fields}))


def test_every_row_but_the_different_idea_has_an_estimate() -> None:
    for spec in (SPEC, ABLATION, SPEC.model_copy(update={"kind": "fine-tune"})):
        for a in suggest_alternatives(spec).alternatives:
            if a.kind == "different_idea":
                assert a.estimate is None and a.dollar_cost is None
            elif a.kind == "more_seeds":
                assert a.estimate is not None and a.detail.runs is not None
                assert a.dollar_cost == pytest.approx(a.detail.runs * a.estimate.dollar_cost)
            else:
                assert a.estimate is not None
                assert a.dollar_cost == a.estimate.dollar_cost


# --- pre-training ----------------------------------------------------------------------------

def test_smaller_scale_is_four_times_cheaper() -> None:
    original, alts = _run(SPEC)
    assert original.dollar_cost == pytest.approx(WORKED_COST)
    (small,) = _by_kind(alts, "smaller_scale")
    assert small.cost_ratio == pytest.approx(0.25)
    assert small.saving_usd == pytest.approx(0.75 * WORKED_COST)
    # Same tokens per parameter as the original, and its own memory check.
    assert small.tokens / small.params == pytest.approx(original.tokens / original.params)
    assert small.estimate.memory is not None and small.feasibility == "ok"


def test_shorter_run_uses_thirty_percent_of_tokens() -> None:
    original, alts = _run(SPEC)
    (short,) = _by_kind(alts, "shorter_run")
    assert short.tokens == pytest.approx(0.3 * original.tokens)
    assert short.detail.token_fraction == 0.3
    assert short.dollar_cost == pytest.approx(0.3 * WORKED_COST)


def test_distillation_counts_teacher_forward_passes() -> None:
    _, alts = _run(SPEC, teacher_params=70e9)
    (dist,) = _by_kind(alts, "distillation")
    # 10% of the tokens, at 6·7B (student) + 2·70B (teacher forward) FLOPs per token.
    assert dist.flops == pytest.approx((6 * 7e9 + 2 * 70e9) * 1e10)
    assert dist.detail.teacher_params == 70e9 and dist.detail.teacher_preset is None


def test_distillation_from_the_next_larger_model_of_the_family() -> None:
    spec = RunSpec(preset="llama-3-8b", tokens="50B", gpu="h100", gpu_count=8)
    original, alts = _run(spec)
    (dist,) = _by_kind(alts, "distillation")
    # Llama 3 70B: 70,553,706,496 parameters (meta-llama/Meta-Llama-3-70B config.json).
    assert dist.detail.teacher_preset == "llama-3-70b" and dist.detail.teacher_name == "Llama 3 70B"
    assert dist.detail.teacher_params == 70_553_706_496
    assert dist.flops == pytest.approx((original.flops_per_token + 2 * 70_553_706_496) * 5e9)


# Llama 3 8B on 12 L4 needs TP 4 over PCIe: the layout divides the prior MFU by 1.29
# (`compute-budget estimate --gpu l4 --gpus 12 --preset llama-3-8b --tokens 30B`: 57.0 days,
# 16,429 GPU-h, $24,578). Without the memory check the 30B row read 44.1 days and $19,020.
L4_RUN = RunSpec(preset="llama-3-8b", tokens="100B", gpu="l4", gpu_count=12)
# Llama 3 70B continued pre-training on 32 H100: layout cost 1.05 (30B tokens: 18.3 days,
# $56,151 by `estimate`; the row without the memory check read 17.5 days and $53,477).
H100_RUN = RunSpec(preset="llama-3-70b", tokens="100B", gpu="h100", gpu_count=32,
                   kind="continued-pretrain")


@pytest.mark.parametrize(("spec", "row"), [
    (L4_RUN, "shorter_run"),
    (L4_RUN.model_copy(update={"kind": "continued-pretrain"}), "fewer_tokens"),
    (H100_RUN, "fewer_tokens"),
])
def test_same_model_on_fewer_tokens_is_the_estimate_of_that_run(spec: RunSpec, row: str) -> None:
    original, alts = _run(spec)
    assert original.layout_cost is not None and original.layout_cost.total > 1.04
    (short,) = _by_kind(alts, row)
    alone = estimate_run(spec.model_copy(update={"tokens": spec.tokens * 0.3}))
    assert short.tokens == pytest.approx(30e9)
    assert short.dollar_cost == pytest.approx(alone.dollar_cost)
    assert short.wall_days == pytest.approx(alone.wall_days)
    assert short.gpu_hours == pytest.approx(alone.gpu_hours)
    # the original's layout and its cost, so its post-layout MFU: 70% of the cost, not less
    assert short.estimate.layout_cost.total == pytest.approx(original.layout_cost.total)
    assert short.estimate.mfu == pytest.approx(original.mfu)
    assert short.cost_ratio == pytest.approx(0.3)


def test_same_model_rows_on_l4_match_the_estimate_cli() -> None:
    # The numbers `compute-budget estimate ... --tokens 30B` prints (comment above L4_RUN).
    (short,) = _by_kind(suggest_alternatives(L4_RUN).alternatives, "shorter_run")
    assert short.wall_days == pytest.approx(57.0, abs=0.05)
    assert short.gpu_hours == pytest.approx(16_429, abs=0.5)
    assert short.dollar_cost == pytest.approx(24_578, abs=0.5)
    (fewer,) = _by_kind(suggest_alternatives(H100_RUN).alternatives, "fewer_tokens")
    assert fewer.wall_days == pytest.approx(18.3, abs=0.05)
    assert fewer.dollar_cost == pytest.approx(56_151, abs=0.5)


def test_distillation_pays_the_originals_layout_cost() -> None:
    # The teacher's forward runs on the same devices: every FLOP at the student's post-layout
    # MFU, so 10% of the tokens at (6·8B + 2·70.6B) / 6·8B the FLOPs costs that share of the time.
    original, alts = _run(L4_RUN)
    (dist,) = _by_kind(alts, "distillation")
    assert dist.estimate.memory is not None and dist.estimate.layout_cost is not None
    assert dist.estimate.layout_cost.total == pytest.approx(original.layout_cost.total)
    assert dist.estimate.mfu == pytest.approx(original.mfu)
    flops_ratio = dist.flops / original.flops
    assert dist.gpu_hours == pytest.approx(flops_ratio * original.gpu_hours)
    assert dist.dollar_cost == pytest.approx(flops_ratio * original.dollar_cost)
    # and says what it leaves out
    row = next(line for line in render_alternatives(suggest_alternatives(L4_RUN)).splitlines()
               if line.startswith("| Distillation"))
    assert "memory for its weights (not counted here)" in row


def test_moe_teacher_costs_its_active_parameters() -> None:
    spec = RunSpec(preset="mistral-7b", tokens="50B", gpu="h100", gpu_count=8)
    original, alts = _run(spec)
    (dist,) = _by_kind(alts, "distillation")
    # Mixtral 8x7B: 46.7B parameters, 12,879,925,248 active per token (2 of 8 experts).
    assert dist.detail.teacher_preset == "mixtral-8x7b"
    assert dist.detail.teacher_active_params == 12_879_925_248
    assert dist.flops == pytest.approx((original.flops_per_token + 2 * 12_879_925_248) * 5e9)


def test_a_config_is_known_by_its_checkpoint_name_only() -> None:
    data = json.loads((CONFIGS / "llama-2-7b-hf.json").read_text())
    assert data["_name_or_path"] == "meta-llama/Llama-2-7b-hf"
    named = RunSpec(config=data, tokens="50B", gpu="h100", gpu_count=8)
    (dist,) = _by_kind(suggest_alternatives(named).alternatives, "distillation")
    assert dist.detail.teacher_preset == "llama-2-70b"
    # The same shape without its name: nothing is guessed from the shape.
    anonymous = {k: v for k, v in data.items() if k != "_name_or_path"}
    assert "distillation" not in _kinds(
        RunSpec(config=anonymous, tokens="50B", gpu="h100", gpu_count=8))


# --- starting from a model -------------------------------------------------------------------

def test_fewer_tokens_states_its_stop_rule_in_numbers() -> None:
    spec = SPEC.model_copy(update={"kind": "continued-pretrain"})
    _, alts = _run(spec, predicted_gain=2.0, gain_uncertainty=0.5)
    (fewer,) = _by_kind(alts, "fewer_tokens")
    # 30% of the tokens first: 30% of $14,022.4; stop unless the metric moved by 0.3 × 2.0.
    assert fewer.tokens == pytest.approx(30e9)
    assert fewer.dollar_cost == pytest.approx(0.3 * WORKED_COST)
    assert fewer.detail.stop_if_gain_below == pytest.approx(0.6)
    row = next(line for line in render_alternatives(suggest_alternatives(
        spec, predicted_gain=2.0)).splitlines() if line.startswith("| Fewer tokens first"))
    assert "stop unless the eval metric has moved by at least 0.6 by then" in row
    assert "(30% of the predicted gain 2)" in row
    # Without a gain: the rule as a share, and what to give for the number.
    (bare,) = _by_kind(suggest_alternatives(spec).alternatives, "fewer_tokens")
    assert bare.detail.stop_if_gain_below is None
    reply = render_alternatives(suggest_alternatives(spec))
    assert "give the predicted gain for the number" in reply
    # A gain ≤ 0 is a known gain too: the rule is any movement at all, never "give the gain".
    none = suggest_alternatives(spec, predicted_gain=-0.2, gain_uncertainty=0.5)
    (flat,) = _by_kind(none.alternatives, "fewer_tokens")
    assert flat.detail.stop_if_gain_below == 0
    reply = render_alternatives(none)
    assert "stop unless the eval metric has moved at all by then (the predicted gain, −0.2" in reply
    assert "give the predicted gain" not in reply


def test_lora_is_priced_with_its_own_estimate_and_memory() -> None:
    spec = RunSpec(preset="llama-3-8b", tokens="50B", gpu="h100", gpu_count=8,
                   kind="continued-pretrain")
    original, alts = _run(spec)
    (lora,) = _by_kind(alts, "lora")
    assert (lora.detail.lora_rank, lora.detail.weights_bits) == (16, 16)
    # r·(d_in + d_out) per adapted layer, Llama 3 8B: 16 × (q 8192 + k 5120 + v 5120 + o 8192
    # + gate, up, down 3 × 18432) = 1,310,720 per layer × 32 layers.
    assert lora.estimate.trainable_params == 16 * 81_920 * 32 == 41_943_040
    assert lora.estimate.memory is not None and lora.estimate.memory.lora_rank == 16
    assert lora.feasibility == "ok" and lora.estimate.memory.fits
    assert lora.flops < original.flops  # the frozen base computes no weight gradients
    assert 0 < lora.saving_usd < original.dollar_cost


def test_lora_is_priced_on_the_original_runs_stack() -> None:
    # A full fine-tune of 70B on 64 H100 defaults to megatron (TP 4, no recomputation); LoRA on
    # its own default, hf, recomputes fully (x1.49) and read as "none: $69 more", though it
    # does a third fewer FLOPs. On the same stack it saves about a third.
    spec = RunSpec(preset="llama-3.1-70b", tokens="20B", gpu="h100", gpu_count=64,
                   kind="fine-tune")
    original, alts = _run(spec)
    (lora,) = _by_kind(alts, "lora")
    assert original.memory is not None and original.memory.stack == "megatron"
    assert lora.estimate.memory is not None and lora.estimate.memory.stack == "megatron"
    assert lora.estimate.memory.recompute == "none"
    assert lora.saving_usd == pytest.approx(original.dollar_cost / 3, rel=0.05)


def test_qlora_when_16_bit_lora_does_not_fit() -> None:
    # Llama 2 70B on one H100 (80 GiB): its 16-bit weights alone are 128 GiB.
    spec = RunSpec(preset="llama-2-70b", tokens="100M", gpu="h100", gpu_count=1,
                   kind="fine-tune")
    original, alts = _run(spec)
    assert original.feasibility == "does_not_fit"
    (lora,) = _by_kind(alts, "lora")
    assert lora.detail.weights_bits == 4 and lora.feasibility == "ok"
    (fewer,) = _by_kind(alts, "fewer_tokens")
    assert fewer.feasibility == "does_not_fit"  # the same model on the same device


@pytest.mark.parametrize(
    ("preset", "smaller", "params"),
    [
        ("llama-2-70b", "llama-2-7b", 6_738_415_616),
        ("llama-3-70b", "llama-3-8b", 8_030_261_248),
        ("mixtral-8x7b", "mistral-7b", 7_241_732_096),
    ],
)
def test_smaller_base_is_an_existing_model_of_the_family(
    preset: str, smaller: str, params: int
) -> None:
    # The user's tensor parallelism is for the larger model: the smaller one's is searched.
    spec = RunSpec(preset=preset, tokens="1B", gpu="h100", gpu_count=8, kind="fine-tune", tp=8)
    (base,) = _by_kind(suggest_alternatives(spec).alternatives, "smaller_base")
    assert base.detail.base_preset == smaller
    assert base.params == params and base.tokens == 1e9
    assert base.estimate.memory is not None


# --- ablations -------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("gain", "sigma", "runs", "rule"),
    [
        # (0.5/0.3)² = 2.78 → k = 3: σ/√3 = 0.289 < 0.3, while σ/√2 = 0.354 is not.
        (0.3, 0.5, 3, "clears_gain"),
        # (1/0.5)² = 4 exactly: σ/√4 = 0.5 equals the gain, not under it → k = 5.
        (0.5, 1.0, 5, "clears_gain"),
        (0.3, 0.2, 1, "clears_gain"),  # 0.2 < 0.3 already
        (0.3, 0.0, 1, "clears_gain"),
        (None, 0.5, 4, "halves_uncertainty"),
        (0.3, None, 4, "halves_uncertainty"),
        (0.0, 0.5, None, "gain_not_positive"),
        (-0.1, 0.5, None, "gain_not_positive"),
        (1e-4, 1.0, None, "out_of_reach"),  # (1/1e-4)² = 10⁸ runs
        (1e-300, 1.0, None, "out_of_reach"),  # (σ/g)² would overflow a float
    ],
)
def test_seeds_needed(gain: float | None, sigma: float | None, runs: int | None,
                      rule: str) -> None:
    assert seeds_needed(gain, sigma) == (runs, rule)


def test_more_seeds_prices_k_runs_of_the_ablation() -> None:
    original, alts = _run(ABLATION, predicted_gain=0.3, gain_uncertainty=0.5)
    assert original.dollar_cost == pytest.approx(ABLATION_COST)  # $902.78
    (seeds,) = _by_kind(alts, "more_seeds")
    assert seeds.detail.runs == 3 and seeds.detail.seeds_rule == "clears_gain"
    assert seeds.detail.uncertainty_after == pytest.approx(0.5 / 3**0.5)  # 0.2887
    assert seeds.dollar_cost == pytest.approx(3 * ABLATION_COST)  # $2,708.33
    assert seeds.saving_usd == pytest.approx(-2 * ABLATION_COST)  # it costs two runs more
    assert seeds.wall_days == pytest.approx(3 * original.wall_days)
    text = render_alternatives(suggest_alternatives(ABLATION, predicted_gain=0.3,
                                                    gain_uncertainty=0.5))
    assert "3 runs of the ablation (seeds)" in text
    assert "σ/√3 = 0.5/√3 = 0.2887 is under the gain 0.3" in text


def test_more_seeds_without_the_gain_halves_sigma_and_asks_for_it() -> None:
    _, alts = _run(ABLATION)
    (seeds,) = _by_kind(alts, "more_seeds")
    assert seeds.detail.runs == 4 and seeds.dollar_cost == pytest.approx(4 * ABLATION_COST)
    text = render_alternatives(suggest_alternatives(ABLATION))
    assert "σ/√4 halves the noise" in text
    # the command line's flags; an assistant is named the tool's arguments
    assert "give --gain and --uncertainty for the number" in text
    with naming(None):
        text = render_alternatives(suggest_alternatives(ABLATION))
    assert "give predicted_gain and gain_uncertainty for the number" in text


@pytest.mark.parametrize(("gain", "phrase"), [
    (-0.1, "none: a predicted gain of −0.1 (≤ 0) never clears its uncertainty"),
    (1e-6, "none: σ is 1,000,000 times the gain"),
])
def test_more_seeds_that_no_number_of_runs_can_give(gain: float, phrase: str) -> None:
    report = suggest_alternatives(ABLATION, predicted_gain=gain, gain_uncertainty=1.0)
    (seeds,) = _by_kind(report.alternatives, "more_seeds")
    assert seeds.detail.runs is None and seeds.dollar_cost is None and seeds.estimate is None
    row = next(line for line in render_alternatives(report).splitlines()
               if line.startswith("| More seeds"))
    assert phrase in row and row.endswith("| | | | |")


def test_ablation_smaller_proxy_keeps_tokens_per_parameter() -> None:
    _, alts = _run(ABLATION)
    (small,) = _by_kind(alts, "smaller_scale")
    assert (small.params, small.tokens) == pytest.approx((0.65e9, 13e9))
    assert small.dollar_cost == pytest.approx(ABLATION_COST / 4)
    (idea,) = _by_kind(alts, "different_idea")
    assert idea.detail.runs_of == "smaller_scale"
    assert idea.detail.runs_affordable == pytest.approx(4.0)


# --- other hardware --------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("gpu", "price", "kind"),
    [
        # The default is the on-demand quote of the first public list that prices the device
        # (issue 17's rule: RunPod, Lambda, AWS, DigitalOcean, CoreWeave; catalog 2026-12-01).
        ("h100-sxm", 3.99, "on-demand"),  # RunPod Secure Cloud, 2026-11
        ("h200", 4.59, "on-demand"),  # RunPod Secure Cloud
        ("a100-40gb", 1.99, "on-demand"),  # Lambda (RunPod lists no 40 GB part)
        ("h800", None, None),  # the price DeepSeek-V3's report assumed is no quote: dropped
        ("mi325x", 3.8, "on-demand"),  # DigitalOcean (RunPod, Lambda, AWS list none)
        ("h20", None, None),  # no public list prices it: unknown, never $0
    ],
)
def test_on_demand_quote(gpu: str, price: float | None, kind: str | None) -> None:
    quote = on_demand_quote(get_accelerator(gpu))
    assert (None if quote is None else (quote.usd_per_gpu_hour, quote.kind)) == (
        None if price is None else (price, kind))


def test_other_hardware_is_priced_on_demand_only_and_says_so() -> None:
    spec = RunSpec(params="7B", tokens="100B", gpu="h100", gpu_count=8)
    original, alts = _run(spec)
    hardware = _by_kind(alts, "other_hardware")
    assert hardware
    without = {a.name for a in list_accelerators() if on_demand_quote(a) is None}
    for a in hardware:
        assert a.accelerator not in without
        assert is_on_demand(a.detail.price_quote.kind)
        assert a.estimate.usd_per_gpu_hour == a.detail.price_quote.usd_per_gpu_hour
        assert a.flops == pytest.approx(original.flops)
        assert a.detail.original_price_on_demand is True  # H100's default quote is on-demand
    assert "compared at on-demand prices only" in render_alternatives(
        suggest_alternatives(spec))


def test_a_reserved_original_price_is_said_to_be_of_another_kind() -> None:
    spec = RunSpec(params="7B", tokens="100B", gpu="a100-40gb", gpu_count=8,
                   price_kind="reserved")
    report = suggest_alternatives(spec)
    assert report.original.price.kind == "reserved"
    hardware = _by_kind(report.alternatives, "other_hardware")
    assert hardware and all(a.detail.original_price_on_demand is False for a in hardware)
    assert "your run is priced at the catalog's reserved rate" in render_alternatives(report)


def test_uncalibrated_device_saving_range_includes_no_saving() -> None:
    _, alts = _run(SPEC)
    (mi300x,) = [a for a in _by_kind(alts, "other_hardware") if a.accelerator == "MI300X"]
    assert mi300x.detail.uncalibrated and mi300x.estimate.mfu_used.prior.scope == "nearest"
    # Your MFU 0.4 carried over: 4.2e21 / (8 × 1307.4e12 × 0.4) s = 278.86 h → 2,230.9 GPU-h
    # × $2.59 (DigitalOcean on-demand) = $5,778.0, a nominal saving of $14,022.4 − $5,778.0.
    nominal = 4.2e21 / (8 * 1307.4e12 * 0.4) / 3600 * 8 * 2.59
    assert mi300x.dollar_cost == pytest.approx(nominal)
    assert mi300x.saving_usd == pytest.approx(WORKED_COST - nominal)
    low, high = mi300x.detail.saving_usd_range
    assert low <= 0.0  # uncalibrated, it may save nothing (here the slow end costs more)
    assert high == pytest.approx(WORKED_COST - mi300x.estimate.dollar_cost_range[0])
    row = next(line for line in render_alternatives(suggest_alternatives(SPEC)).splitlines()
               if "MI300X" in line)
    assert "MFU 0.40 (uncalibrated: no published runs on CDNA 3 (MI300); your MFU carried over)" \
        in row
    assert f"uncalibrated: from no saving (${-low:,.0f} more) to ${high:,.0f}" in row


def test_calibrated_devices_keep_the_plain_band(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mfu_module, "UNCALIBRATED_SCOPES", ())
    _, alts = _run(SPEC)
    (mi300x,) = [a for a in _by_kind(alts, "other_hardware") if a.accelerator == "MI300X"]
    slow_cost = mi300x.estimate.dollar_cost_range[1]
    assert not mi300x.detail.uncalibrated
    # the plain band: at its slow end the dearer MI300X ($2.59/h) costs more than the original
    assert mi300x.detail.saving_usd_range[0] == pytest.approx(WORKED_COST - slow_cost)


def test_measured_throughput_carries_over_as_mfu_not_as_tflops() -> None:
    # 400 TFLOP/s measured on H100 is above an A100's 312 peak: it must not be reused as such.
    spec = RunSpec(params="7B", tokens="100B", gpu="h100", gpu_count=8, achieved_tflops=400)
    original, alts = _run(spec)
    assert original.mfu_used.origin == "achieved"
    for a in _by_kind(alts, "other_hardware"):
        assert a.estimate.mfu == pytest.approx(original.mfu)


# --- feasibility -----------------------------------------------------------------------------

@pytest.mark.slow  # about 1 s: the quick set keeps its minute on two cores
def test_rows_that_cannot_run_say_so_instead_of_a_saving() -> None:
    spec = RunSpec(params="7T", tokens="1T", gpu="rtx-4090", gpu_count=1)
    original, alts = _run(spec)
    assert original.feasibility == "does_not_fit"
    (small,) = _by_kind(alts, "smaller_scale")  # 3.5T from scratch fits no 4090 either
    assert small.feasibility == "does_not_fit"
    (short,) = _by_kind(alts, "shorter_run")
    assert short.feasibility == "does_not_fit"
    assert not _by_kind(alts, "other_hardware")  # none fits 7T on one device
    text = render_alternatives(suggest_alternatives(spec))
    assert text.startswith("**The run as planned cannot run")
    rows = [line for line in text.splitlines()
            if line.startswith(("| Smaller scale", "| Shorter run first"))]
    assert len(rows) == 2
    for row in rows:
        saving = row.split(" | ")[-1]
        assert saving.startswith("none: does not fit on 1 × RTX 4090"), row


def test_unknown_price_gives_unknown_savings_but_ratios_on_same_device() -> None:
    original, alts = _run(RunSpec(params="7B", tokens="100B", gpu="tpu-v3", gpu_count=8))
    assert original.dollar_cost is None
    (small,) = _by_kind(alts, "smaller_scale")
    assert small.saving_usd is None
    # a quarter of the FLOPs, at the smaller model's own (lower) prior MFU
    assert small.cost_ratio == pytest.approx(0.25 * original.mfu / small.estimate.mfu)
    (idea,) = _by_kind(alts, "different_idea")
    # the smaller runs it buys
    assert idea.detail.runs_affordable == pytest.approx(1 / small.cost_ratio)


# --- bad input -------------------------------------------------------------------------------

@pytest.mark.parametrize("field", ["distill_token_fraction", "shorter_run_fraction"])
@pytest.mark.parametrize("bad", [0, 1.5, -0.1])
def test_bad_fractions(field: str, bad: float) -> None:
    with pytest.raises(InputError, match=rf"^{field}: "):
        suggest_alternatives(SPEC, **{field: bad})


@pytest.mark.parametrize(
    ("field", "bad"),
    [("teacher_params", -1), ("predicted_gain", float("nan")),
     ("gain_uncertainty", -0.5), ("gain_uncertainty", float("inf"))],
)
def test_bad_options(field: str, bad: float) -> None:
    with pytest.raises(InputError, match=rf"^{field}: "):
        suggest_alternatives(SPEC, **{field: bad})


# --- the CLI's contract (belongs with tests/test_cli.py) ---------------------------------------

def test_cli_alternatives_json_for_a_fine_tune(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["alternatives", "--params", "7B", "--tokens", "1B", "--gpu", "a100", "--gpus",
                 "8", "--kind", "fine-tune", "--json"])
    report = json.loads(capsys.readouterr().out)  # the whole AlternativesReport
    assert code == 0 and report["kind"] == "fine-tune"
    assert report["original"]["tokens"] == 1e9
    data = report["alternatives"]
    for item in data:
        assert "kind" in item and "dollar_cost" in item
    kinds = {item["kind"] for item in data}
    assert {"fewer_tokens", "lora", "different_idea"} <= kinds
    assert not kinds & FROM_SCRATCH


def test_a_lora_run_is_a_fine_tune_unless_told_otherwise() -> None:
    # LoRA trains adapters on a trained model: a smaller model from scratch or distillation
    # from a teacher are pre-training's alternatives, not this run's.
    spec = RunSpec(preset="llama-3-8b", lora_rank=16, tokens="50M", gpu="a100-80gb",
                   gpu_count=1)
    assert spec.kind is None and spec.resolved_kind == "fine-tune"
    _, alts = _run(spec)
    kinds = {a.kind for a in alts}
    assert "fewer_tokens" in kinds and not kinds & {"smaller_scale", "distillation"}
    frozen = RunSpec(params="7B", trainable_params="1B", tokens="1B", gpu="h100", gpu_count=8)
    assert frozen.resolved_kind == "fine-tune"
    told = RunSpec(preset="llama-3-8b", lora_rank=16, tokens="50M", gpu="a100-80gb",
                   gpu_count=1, kind="continued-pretrain")
    assert told.resolved_kind == "continued-pretrain"
    assert RunSpec(params="7B", tokens="1B", gpu="h100", gpu_count=8).resolved_kind == "pretrain"
    # One rule for every spec that takes a kind: a plan of the same LoRA run is a fine-tune too.
    from compute_budget.skill.planning.plan_spec import PlanSpec

    plan = PlanSpec(preset="llama-3-8b", lora_rank=16, tokens="50M", deadline_days=3)
    assert plan.resolved_kind == "fine-tune"
