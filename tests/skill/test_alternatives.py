"""Cheaper alternatives: each fully estimated, each with its saving."""

import pytest

from compute_budget import RunSpec, suggest_alternatives
from compute_budget.skill.errors import InputError

SPEC = RunSpec(params="7B", tokens="100B", gpu="a100", gpu_count=8, usd_per_gpu_hour=1.5)


def _run(spec, **options):
    report = suggest_alternatives(spec, **options)
    return report.original, report.alternatives


def _by_kind(alternatives, kind):
    return [a for a in alternatives if a.kind == kind]


def test_all_kinds_present_each_with_an_estimate() -> None:
    _, alts = _run(SPEC)
    kinds = [a.kind for a in alts]
    for kind in ("smaller_scale", "shorter_run", "distillation", "other_hardware",
                 "different_idea"):
        assert kind in kinds
    for a in alts:
        if a.kind == "different_idea":
            assert a.estimate is None and a.dollar_cost is None
        else:
            assert a.estimate is not None
            assert a.dollar_cost == a.estimate.dollar_cost


def test_smaller_scale_is_four_times_cheaper() -> None:
    original, alts = _run(SPEC)
    (small,) = _by_kind(alts, "smaller_scale")
    assert small.cost_ratio == pytest.approx(0.25)
    assert small.saving_usd == pytest.approx(0.75 * original.dollar_cost)
    # Same tokens per parameter as the original.
    assert small.tokens / small.params == pytest.approx(original.tokens / original.params)


def test_shorter_run_uses_thirty_percent_of_tokens() -> None:
    original, alts = _run(SPEC)
    (short,) = _by_kind(alts, "shorter_run")
    assert short.tokens == pytest.approx(0.3 * original.tokens)
    assert short.cost_ratio == pytest.approx(0.3)


def test_distillation_counts_teacher_forward_passes() -> None:
    _, alts = _run(SPEC, teacher_params=70e9)
    (dist,) = _by_kind(alts, "distillation")
    # 10% of the tokens, at 6·7B (student) + 2·70B (teacher forward) FLOPs per token.
    assert dist.flops == pytest.approx((6 * 7e9 + 2 * 70e9) * 1e10)
    assert dist.teacher_params == 70e9


def test_other_hardware_is_cheaper_at_the_same_flops() -> None:
    original, alts = _run(SPEC)
    hardware = _by_kind(alts, "other_hardware")
    assert hardware
    for a in hardware:
        assert a.flops == pytest.approx(original.flops)
        assert a.accelerator != original.accelerator
    cheapest = hardware[0]
    assert cheapest.dollar_cost is not None and original.dollar_cost is not None


def test_unknown_price_gives_unknown_savings_but_ratios_on_same_device() -> None:
    original, alts = _run(RunSpec(params="7B", tokens="100B", gpu="tpu-v4",
                                                  gpu_count=8))
    assert original.dollar_cost is None
    (small,) = _by_kind(alts, "smaller_scale")
    assert small.saving_usd is None
    assert small.cost_ratio == pytest.approx(0.25)
    (idea,) = _by_kind(alts, "different_idea")
    assert idea.runs_affordable == pytest.approx(4.0)


@pytest.mark.parametrize("field", ["distill_token_fraction", "shorter_run_fraction"])
@pytest.mark.parametrize("bad", [0, 1.5, -0.1])
def test_bad_fractions(field: str, bad: float) -> None:
    with pytest.raises(InputError, match=rf"^{field}: "):
        suggest_alternatives(SPEC, **{field: bad})


def test_bad_teacher() -> None:
    with pytest.raises(InputError, match=r"^teacher_params: "):
        suggest_alternatives(SPEC, teacher_params=-1)


def test_measured_throughput_carries_over_as_mfu_not_as_tflops() -> None:
    # 400 TFLOP/s measured on H100 is above an A100's 312 peak: it must not be reused as such.
    spec = RunSpec(params="7B", tokens="100B", gpu="h100", gpu_count=8, achieved_tflops=400)
    original, alts = _run(spec)
    assert original.mfu_source == "achieved"
    for a in _by_kind(alts, "other_hardware"):
        assert a.estimate is not None
        assert a.estimate.mfu == pytest.approx(original.mfu)
