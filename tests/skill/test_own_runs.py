"""Issue 17 item 4: the team's own past runs move the MFU of a new run toward theirs, shrunk
toward the published prior by how many runs they give, with a band that narrows as runs are
added but never below their own scatter; every door that prices time uses it."""

from __future__ import annotations

import math
from statistics import NormalDist, stdev
from typing import Any

import pytest
from pydantic import ValidationError

from compute_budget.skill import (
    AlternativesSpec,
    BudgetTableSpec,
    PastRun,
    PlanSpec,
    RunSpec,
    VerdictSpec,
    alternatives_for,
    budget_table,
    describe_error,
    estimate_run,
    get_accelerator,
    mfu_prior,
    own_runs_mfu,
    parse_calibration,
    plan_run,
    verdict_on,
)
from compute_budget.skill.errors import InputError
from compute_budget.skill.hardware.mfu_table import load_mfu_priors
from compute_budget.skill.hardware.own_runs import SPREAD_PRIOR_RUNS, WITHIN_TEAM_SPREAD

RUN = {"params": "7B", "tokens": "1T", "gpu": "h100", "gpu_count": 64}
"""The new run: 7B on 1T tokens on 64 × H100."""


def past(mfu: float, params: float = 7e9, tokens: float = 1e12, gpu: str = "h100",
         **more: Any) -> dict[str, Any]:
    """A past run that reached ``mfu`` end to end: its GPU-hours are 6·N·T / (MFU · peak)."""
    peak = get_accelerator(gpu).peak("bf16") * 1e12
    return {"params": params, "tokens": tokens, "gpu": gpu,
            "gpu_hours": 6 * params * tokens / (mfu * peak * 3600), **more}


def band_width(low: float, high: float) -> float:
    return math.log10(high / low)


def test_three_runs_at_045_move_the_estimate_toward_045_and_narrow_the_band() -> None:
    published = estimate_run(RunSpec(**RUN))
    ours = estimate_run(RunSpec(**RUN, calibration=[past(0.45)] * 3))
    assert published.mfu_used.origin == "prior" and ours.mfu_used.origin == "own_runs"
    assert published.mfu < ours.mfu < 0.45
    # most of the way: three agreeing runs outweigh the published prior
    assert (0.45 - ours.mfu) < 0.5 * (0.45 - published.mfu)
    assert band_width(*ours.mfu_used.range) < band_width(*published.mfu_used.range)
    assert ours.gpu_hours < published.gpu_hours
    fit = ours.mfu_used.own_runs
    assert fit is not None and fit.n_runs == 3 and fit.same_generation == 3
    assert fit.level == pytest.approx(0.45) and 0.5 < fit.weight < 1


def test_one_run_moves_it_less_than_three() -> None:
    prior = estimate_run(RunSpec(**RUN)).mfu
    one = estimate_run(RunSpec(**RUN, calibration=[past(0.45)]))
    three = estimate_run(RunSpec(**RUN, calibration=[past(0.45)] * 3))
    assert prior < one.mfu < three.mfu < 0.45
    assert one.mfu_used.own_runs is not None and three.mfu_used.own_runs is not None
    assert one.mfu_used.own_runs.weight < three.mfu_used.own_runs.weight
    assert band_width(*three.mfu_used.range) < band_width(*one.mfu_used.range)


def test_the_weight_is_the_precision_weighted_combination() -> None:
    """One run: w = τ² / (τ² + σ₀²), τ the prior's band's mean half-width over z (BDA3 §2.5),
    σ₀ the published scatter of one organisation's runs; the shift is w × log10(run / prior)."""
    acc = get_accelerator("h100")
    prior = mfu_prior("dense", acc, "bf16", params=7e9)
    fit = own_runs_mfu([PastRun(**past(0.45))], prior)
    z = NormalDist().inv_cdf((1 + load_mfu_priors().coverage_target) / 2)
    assert prior.band_factor is not None and prior.band_high_factor is not None
    tau = math.log10(prior.band_factor * prior.band_high_factor) / (2 * z)
    weight = tau**2 / (tau**2 + WITHIN_TEAM_SPREAD**2)
    assert fit.weight == pytest.approx(weight)
    assert fit.central == pytest.approx(prior.central * (0.45 / prior.central) ** weight)
    # the band of one new run: z·√(Var δ̂ + σ²) either side, Var δ̂ = 1 / (1/τ² + 1/σ²)
    half = z * math.sqrt(1 / (1 / tau**2 + 1 / WITHIN_TEAM_SPREAD**2) + WITHIN_TEAM_SPREAD**2)
    assert fit.low == pytest.approx(fit.central / 10**half)
    # held at the fastest run published (or given): the slope cannot carry a level past both
    cap = max(load_mfu_priors().highest_mfu or 0.9, 0.45)
    assert fit.high == pytest.approx(min(cap, max(fit.central * 10**half, 0.45)))


@pytest.mark.parametrize("params", [1e9, 7e9, 70e9])
@pytest.mark.parametrize("gpu", ["h100", "a100"])
def test_each_runs_own_mfu_lies_in_the_band_exactly(params: float, gpu: str) -> None:
    # A run at the new run's size on its device is its own level: the band holds it without a
    # floating-point hair of log10 round trip (0.197 · 10^log10(0.62 / 0.197) is 0.61999…).
    # 0.62 is faster than any published run (0.51) but not doubted: under 1.25 × 0.514.
    prior = mfu_prior("dense", get_accelerator(gpu), "bf16", params=params)
    for mfus in ((0.25, 0.45, 0.62), (0.1, 0.5), (0.62,)):
        fit = own_runs_mfu([PastRun(**past(m, params=params, gpu=gpu)) for m in mfus], prior)
        assert fit.faster_than_published == 0
        for run in fit.runs:
            assert fit.low <= run.mfu <= fit.high, (mfus, run.mfu, fit.low, fit.high)


def test_the_band_never_claims_less_spread_than_the_runs_show() -> None:
    prior = mfu_prior("dense", get_accelerator("h100"), "bf16", params=7e9)
    scattered = [PastRun(**past(m)) for m in (0.25, 0.45, 0.62)]
    fit = own_runs_mfu(scattered, prior)
    assert fit.low <= 0.25 and fit.high >= 0.62  # every run's own level lies in the band
    assert fit.runs_spread == pytest.approx(stdev(math.log10(m / prior.central)
                                                  for m in (0.25, 0.45, 0.62)))
    # many agreeing runs narrow the band to their scatter, pooled with the published one
    many = own_runs_mfu([PastRun(**past(0.45))] * 40, prior)
    floor = WITHIN_TEAM_SPREAD * math.sqrt(SPREAD_PRIOR_RUNS / (SPREAD_PRIOR_RUNS + 39))
    assert many.spread == pytest.approx(floor)
    z = NormalDist().inv_cdf((1 + load_mfu_priors().coverage_target) / 2)
    assert math.log10(many.high / many.central) >= z * floor
    # scattered runs weigh less than agreeing ones: their scatter says each one tells less
    agreeing = own_runs_mfu([PastRun(**past(0.45))] * 3, prior)
    assert fit.weight < agreeing.weight
    assert band_width(fit.low, fit.high) > band_width(agreeing.low, agreeing.high)


def test_runs_on_another_generation_count_through_their_own_generations_prior() -> None:
    """A100 runs say how the team does against the A100 prior; that ratio carries to an H100
    run (the published prior's generation ratio scales it)."""
    a100 = mfu_prior("dense", get_accelerator("a100"), "bf16", params=7e9).central
    published = estimate_run(RunSpec(**RUN))
    at_prior = estimate_run(RunSpec(**RUN, calibration=[past(a100, gpu="a100")] * 2))
    assert at_prior.mfu == pytest.approx(published.mfu, rel=1e-9)  # no ratio, no move
    assert band_width(*at_prior.mfu_used.range) < band_width(*published.mfu_used.range)
    faster = estimate_run(RunSpec(**RUN, calibration=[past(1.5 * a100, gpu="a100")] * 2))
    fit = faster.mfu_used.own_runs
    assert fit is not None and fit.same_generation == 0 and fit.ratio == pytest.approx(1.5)
    assert faster.mfu == pytest.approx(published.mfu * 1.5**fit.weight, rel=1e-3)


def test_h100_runs_carry_to_a100_as_their_ratio_to_the_hopper_prior() -> None:
    """A review read 0.19 for an A100 from "fast" H100 runs: that is what runs at 0.11 give.
    By hand, at 7B (mfu_priors.json as of 2026-12-06): the Hopper prior 0.206 × the size term
    10^(0.13 × log10(7/10)) = 0.9547 is 0.197, the Ampere one 0.343 × 0.9547 = 0.327; both
    bands ÷2.02 to ×1.51 over 85% of the runs, so z = Φ⁻¹(0.925) = 1.4395 and
    τ = log10(2.02 × 1.51) / 2z = 0.48433 / 2.8790 = 0.16823. Three agreeing runs: s = 0, so
    σ² = 4 × 0.113² / (4 + 2) = 0.0085127 and w = (3/σ²) / (1/τ² + 3/σ²) = 352.42 / 387.76 =
    0.90887. Runs at 0.11: log10(0.11 / 0.197) = −0.25306, so the A100's MFU is
    0.327 × 10^(0.90887 × −0.25306) = 0.327 × 0.58884 = 0.1925 (the Hopper prior itself,
    0.197, is not carried). Runs at 0.45: 0.327 × 10^(0.90887 × 0.35875) = 0.693, above the
    fastest run, so held at it, 0.45."""
    a100 = mfu_prior("dense", get_accelerator("a100"), "bf16", params=7e9)
    h100 = mfu_prior("dense", get_accelerator("h100"), "bf16", params=7e9)
    assert (h100.central, a100.central) == (0.197, 0.327)
    slow = own_runs_mfu([PastRun(**past(0.11, tokens=300e9))] * 3, a100)
    assert slow.weight == pytest.approx(0.90887, abs=1e-5)
    assert slow.ratio == pytest.approx(0.11 / 0.197)
    assert slow.central == pytest.approx(0.1925, abs=2e-4)
    assert slow.central == pytest.approx(a100.central * slow.ratio ** slow.weight)
    assert slow.same_generation == 0 and slow.carried_from == ("H100 SXM",)
    assert slow.generation_label == "Ampere"
    fast = own_runs_mfu([PastRun(**past(0.45, tokens=300e9))] * 3, a100)
    assert a100.central * fast.ratio ** fast.weight == pytest.approx(0.693, abs=1e-3)
    assert fast.central == pytest.approx(0.45) and fast.central_cap == pytest.approx(0.45)
    # on their own generation nothing is carried, whichever Hopper or Ampere device it is
    assert own_runs_mfu([PastRun(**past(0.11))] * 3, h100).carried_from == ()
    mixed = own_runs_mfu([PastRun(**past(0.3, gpu=g)) for g in ("a100", "h100", "h100")], a100)
    assert mixed.same_generation == 1 and mixed.carried_from == ("H100 SXM",)


def test_wall_days_count_as_devices_times_days() -> None:
    by_hours = PastRun(**past(0.4))
    assert by_hours.gpu_hours is not None
    by_days = PastRun(params="7B", tokens="1T", gpu="h100", gpu_count=64,
                      wall_days=by_hours.gpu_hours / 64 / 24)
    assert by_days.mfu == pytest.approx(by_hours.mfu) == pytest.approx(0.4)


def errors_of(**spec: Any) -> str:
    with pytest.raises(ValidationError) as info:
        RunSpec(**RUN, **spec)
    return describe_error(info.value)


def test_bad_runs_are_named_each_at_once() -> None:
    message = errors_of(calibration=[
        past(0.4) | {"gpu_hours": -5},
        past(0.4) | {"gpu": "h999"},
        {"params": "7B", "tokens": "1T", "gpu": "h100"},
        past(0.4) | {"wall_days": 3, "gpu_count": 8},
        {"params": "7B", "tokens": "1T", "gpu": "h100", "wall_days": 3},
        {"params": "7B", "tokens": "1T", "gpu": "h100", "gpu_hours": 1},
        past(0.4) | {"active_params": "8B"},
    ])
    lines = message.splitlines()
    assert lines[0].startswith("calibration[0].gpu_hours: -5 is not allowed; must be > 0")
    assert lines[1].startswith("calibration[1].gpu: 'h999' is not allowed; unknown accelerator")
    assert lines[2].startswith("calibration[2].gpu_hours: required but missing; give gpu_hours "
                               "or wall_days")
    assert lines[3].startswith("calibration[3].wall_days: 3.0 is not allowed; not together with "
                               "gpu_hours")
    assert lines[4].startswith("calibration[4].gpu_count: required but missing; the number of "
                               "devices, needed with wall_days")
    assert lines[5].startswith("calibration[5].gpu_hours: 1.0 is not allowed; it implies an MFU")
    assert lines[6].startswith("calibration[6].active_params: 8B is not allowed")
    assert len(lines) == 7


def test_calibration_replaces_no_given_mfu() -> None:
    for given in ({"mfu": 0.4}, {"achieved_tflops": 400}):
        assert errors_of(calibration=[past(0.4)], **given).startswith(
            "calibration: '1 run' is not allowed; not together with")
    assert errors_of(calibration=[]).startswith("calibration: [] is not allowed; one to 500")


def test_csv_and_json_read_the_same_runs() -> None:
    csv_runs = parse_calibration("name,params,active-params,tokens,gpu,GPU hours\n"
                                 "first,7B,,1T,h100,30000\n"
                                 "moe,47B,13B,2T,a100,900000\n")
    json_runs = parse_calibration('[{"name": "first", "params": "7B", "tokens": "1T", '
                                  '"gpu": "h100", "gpu_hours": 30000}, {"name": "moe", '
                                  '"params": "47B", "active_params": "13B", "tokens": "2T", '
                                  '"gpu": "a100", "gpu_hours": 900000}]')
    assert csv_runs == json_runs
    assert csv_runs[1].active == 13e9 and csv_runs[1].gpu == "a100-80gb"


def test_a_table_it_cannot_read_is_named_without_its_contents() -> None:
    with pytest.raises(ValueError, match=r"column 1 of the header row") as info:
        parse_calibration("root:x:0:0:root:/root:/bin/bash\n")
    assert "root" not in str(info.value)
    with pytest.raises(ValueError, match="at least one run"):
        parse_calibration("params,tokens,gpu,gpu_hours\n")
    with pytest.raises(ValueError, match="a JSON list of runs"):
        parse_calibration('{"params": "7B"}')
    with pytest.raises(InputError) as bad:  # a table's row by its line, the header's being 1
        parse_calibration("params,tokens,gpu,gpu_hours\n7B,1T,h100,-1\n")
    assert str(bad.value) == "line 2, column gpu_hours: '-1' is not allowed; must be > 0"


CAL = [past(0.45)] * 3


def test_the_verdict_prices_the_run_at_the_runs_mfu() -> None:
    decision = verdict_on(VerdictSpec(**RUN, calibration=CAL, predicted_gain=2,
                                      gain_uncertainty=1))
    estimate = estimate_run(RunSpec(**RUN, calibration=CAL))
    assert decision.gpu_hours == pytest.approx(estimate.gpu_hours)
    assert decision.assumptions is not None and decision.assumptions.own_runs is not None
    assert decision.assumptions.own_runs_mfu == pytest.approx(estimate.mfu)
    plain = verdict_on(VerdictSpec(**RUN, predicted_gain=2, gain_uncertainty=1))
    assert plain.assumptions is not None and plain.assumptions.own_runs is None
    assert "own_runs" not in plain.assumptions.model_dump()  # left out, not null


def test_the_split_prices_each_size_at_the_runs_mfu() -> None:
    ours = budget_table(BudgetTableSpec(budget_usd="$400k", gpu="h100", calibration=CAL))
    published = budget_table(BudgetTableSpec(budget_usd="$400k", gpu="h100"))
    assert ours.rate_basis == "gpu_with_own_runs" and ours.mfu_used is not None
    assert ours.mfu_used.origin == "own_runs" and ours.mfu_used.own_runs is not None
    assert published.mfu is not None and ours.mfu is not None and ours.mfu > published.mfu
    assert ours.budget_flops > published.budget_flops  # the same dollars buy more compute
    # an estimate of the ratio split gives the same MFU (one computation)
    split = ours.ratio_split
    run = estimate_run(RunSpec(params=split.params, tokens=split.tokens, gpu="h100",
                               gpu_count=8, calibration=CAL))
    assert run.mfu == pytest.approx(ours.mfu, rel=1e-6)
    with pytest.raises(ValidationError, match="calibration: '3 runs' is not allowed; only with"):
        BudgetTableSpec(budget_flops="1e22", calibration=CAL)
    with pytest.raises(ValidationError, match="not together with mfu"):
        BudgetTableSpec(budget_flops="1e22", gpu="h100", mfu=0.4, calibration=CAL)


def test_plans_and_alternatives_move_each_devices_prior_toward_the_runs() -> None:
    report = plan_run(PlanSpec(params="7B", tokens="1T", deadline_days=30, calibration=CAL,
                               gpus=["h100", "a100"]))
    for plan in report.plans:
        assert plan.estimate.mfu_used.origin == "own_runs"
        alone = estimate_run(RunSpec(params="7B", tokens="1T", gpu=plan.estimate.accelerator_key,
                                     gpu_count=plan.gpu_count, calibration=CAL))
        assert plan.estimate.mfu == pytest.approx(alone.mfu)
    others = alternatives_for(AlternativesSpec(**RUN, calibration=CAL))
    hardware = [a for a in others.alternatives if a.kind == "other_hardware"]
    assert hardware and all(a.estimate is not None and a.estimate.mfu_used.origin == "own_runs"
                            for a in hardware)


def test_the_published_scatter_of_one_organisation_is_what_the_calibration_shows() -> None:
    """σ₀ (0.113 in log10) is the pooled scatter of the prior's residuals within one
    organisation's line of runs (the module docstring lists them); recomputed from the packaged
    table by organisation when it records one, else by the model lines named there."""
    lines = {"LLaMA-1": "LLaMA-1", "Llama 2": "Llama 2", "Llama 3": "Llama 3/4",
             "Llama 4": "Llama 3/4", "Phi-3": "Phi", "Phi-4": "Phi", "Falcon": "Falcon",
             "Pythia": "Pythia", "DeepSeek": "DeepSeek"}
    groups: dict[str, list[float]] = {}
    for run in load_mfu_priors().runs:
        if not run.used or run.fitted_mfu is None:
            continue
        key = getattr(run, "organisation", "") or next(
            (g for prefix, g in lines.items() if run.name.startswith(prefix)), "")
        if key:
            groups.setdefault(key, []).append(math.log10(run.end_to_end_mfu / run.fitted_mfu))
    pooled = [(len(v) - 1, stdev(v)) for v in groups.values() if len(v) > 1]
    dof = sum(n for n, _ in pooled)
    spread = math.sqrt(sum(n * s**2 for n, s in pooled) / dof)
    assert dof >= 15
    assert spread == pytest.approx(WITHIN_TEAM_SPREAD, abs=0.02)


def test_a_team_level_carried_far_past_its_runs_is_held_and_said() -> None:
    # A team at 0.45 on 1B, 3B and 7B: the published slope (x1.35 per tenfold) carried its level
    # to 0.68 at 70B with a fast end of 0.90 end to end; now held at the fastest run published
    # (or the team's, were it faster), and the reply says the size is beyond its runs'
    from compute_budget.prompts import render_estimate
    from compute_budget.skill import RunSpec, estimate_run

    runs = [PastRun(**past(0.45, params=n, tokens=100 * n)) for n in (1e9, 3e9, 7e9)]
    highest = load_mfu_priors().highest_mfu
    assert highest is not None and highest > 0.45
    far = own_runs_mfu(runs, mfu_prior("dense", get_accelerator("h100"), "bf16", params=70e9))
    assert far.level > highest and far.high == far.fast_end_cap == highest
    # the MFU itself no higher than the team's fastest run where only the slope lifts it
    assert far.central == far.central_cap == pytest.approx(0.45)
    assert far.beyond_sizes and far.run_sizes == (1e9, 7e9)
    near = own_runs_mfu(runs, mfu_prior("dense", get_accelerator("h100"), "bf16", params=5e9))
    assert not near.beyond_sizes and near.central <= 0.45 + 1e-9 < near.high
    # many agreeing runs narrow the band past the MFU held: the band still holds it
    many = own_runs_mfu(runs * 15, mfu_prior("dense", get_accelerator("h100"), "bf16",
                                             params=70e9))
    assert many.central_cap is not None and many.low <= many.central <= many.high
    # a team faster than every published run keeps its own fastest as the cap (0.6: faster
    # than 0.514, but not doubted, which is over 1.25 × 0.514)
    fast = [PastRun(**past(0.6, params=n, tokens=100 * n)) for n in (1e9, 7e9)]
    held = own_runs_mfu(fast, mfu_prior("dense", get_accelerator("h100"), "bf16", params=70e9))
    assert held.high == pytest.approx(0.6) and held.faster_than_published == 0
    text = render_estimate(estimate_run(RunSpec(params="70B", tokens="2T", gpu="h100",
                                                gpu_count=512, calibration=runs)))
    assert "this size is far from your runs' (1B–7B active parameters)" in text
    assert "held at 0.45, your fastest run, where the slope carried it higher" in text
    assert f"its band's fast end held at {highest:.2f}, the fastest published run" in text


def test_the_slow_side_never_narrows_with_the_distance_from_your_runs() -> None:
    # a reviewer's three H100 runs at 0.35-0.41 end to end (1B, 3B, 7B): at 70B and 405B the
    # MFU was held at the fastest run's, 0.41, but the slow end kept rising with the size slope,
    # to 0.38 and then 0.41 itself, so a run on plan sat on decide's kill line
    runs = [past(0.37, params=1e9, tokens=20e9), past(0.35, params=3e9, tokens=60e9),
            past(0.41, params=7e9, tokens=140e9)]
    slow_sides = []
    for params in ("7B", "70B", "405B"):
        est = estimate_run(RunSpec(params=params, tokens="1T", gpu="h100", gpu_count=512,
                                   calibration=runs))
        low, high = est.mfu_used.range
        assert low < est.mfu <= high
        slow_sides.append(math.log10(est.mfu / low))
    fit = estimate_run(RunSpec(params="405B", tokens="1T", gpu="h100", gpu_count=512,
                               calibration=runs)).mfu_used.own_runs
    assert fit is not None and fit.central_cap == pytest.approx(0.41, abs=0.005)
    # the slow side is the same half-width at every size, held or not
    assert slow_sides[1] == pytest.approx(slow_sides[0], rel=1e-6)
    assert slow_sides[2] == pytest.approx(slow_sides[0], rel=1e-6)


def test_runs_faster_than_any_published_run_are_flagged() -> None:
    # a reviewer's runs implied 0.84-0.97 end to end (node-hours given as GPU-hours read 8
    # times fast) and the estimate took 0.88 without a word; the fastest published run is 0.51
    # (LLaMA-1 13B, mfu_priors.json)
    from compute_budget.prompts import render_estimate
    from compute_budget.tools.relay import relay

    fast = [past(0.84, params=1e9), past(0.92, params=3e9), past(0.97)]
    est = estimate_run(RunSpec(**RUN, calibration=fast))
    fit = est.mfu_used.own_runs
    assert fit is not None and fit.faster_than_published == 3
    assert fit.fastest_published == pytest.approx(load_mfu_priors().highest_mfu)
    # none fitted: the published prior, labelled as such, and why the runs were left out
    assert est.mfu_used.origin == "prior"
    assert "; your 3 runs were all left out of the fit, faster than any published run (up to " \
           "0.97 against 0.51 end to end): check their hours are device-hours" \
           in render_estimate(est)
    told = relay("estimate_run_cost", est)
    assert told is not None and "; your 3 runs were all left out of the fit, faster than any " \
           "published run: ask whether their hours are device-hours" in told["mfu_source"]
    # none of them is fitted: the published prior, not 0.88
    assert fit.weight == 0 and est.mfu == pytest.approx(fit.prior_central)
    assert est.mfu_used.range == pytest.approx((est.mfu_used.prior.low, est.mfu_used.prior.high))
    # 0.45 is fast but published teams have run near it: no flag
    plain = estimate_run(RunSpec(**RUN, calibration=[past(0.45)] * 3)).mfu_used.own_runs
    assert plain is not None and plain.faster_than_published == 0
    assert plain.fastest_published is None


def test_every_run_past_the_fastest_published_is_counted_once_one_is_far_past() -> None:
    # runs at 0.60, 0.66 and 0.70 read "2 of them ran faster than any published run": all
    # three beat the 0.51 of LLaMA-1 13B
    fit = estimate_run(RunSpec(**RUN, calibration=[past(0.60), past(0.66), past(0.70)]))
    assert fit.mfu_used.own_runs is not None
    assert fit.mfu_used.own_runs.faster_than_published == 3
    # none far past it (0.60 is under 1.25 × 0.514): nothing to ask
    near = estimate_run(RunSpec(**RUN, calibration=[past(0.55), past(0.60)]))
    assert near.mfu_used.own_runs is not None
    assert near.mfu_used.own_runs.faster_than_published == 0


def test_a_run_the_reply_doubts_is_left_out_of_the_fit_and_widens_nothing() -> None:
    # a reviewer's list: one run implied 0.79 end to end (faster than the fastest published run,
    # 0.514, LLaMA-1 13B in mfu_priors.json) beside two at 0.10 and 0.12; the reply warned about
    # it, yet the band reached 0.79 (the fast end the published prior holds at 0.51) and the
    # scatter it added carried the slow end down: MFU 0.22 (0.08-0.79). The published
    # derivation leaves such rows out of its fit (Phi-2's 0.63), so the team's fit does too.
    from compute_budget.prompts import render_estimate

    trusted = [past(0.10, params=1e9, tokens=2e11), past(0.12, params=3e9, tokens=6e11)]
    doubted = estimate_run(RunSpec(**RUN, calibration=[past(0.79, name="fast"), *trusted]))
    alone = estimate_run(RunSpec(**RUN, calibration=trusted))
    fit = doubted.mfu_used.own_runs
    assert fit is not None and fit.faster_than_published == 1 and fit.n_runs == 3
    assert [run.left_out for run in fit.runs] == [True, False, False]
    # the fit is the two trusted runs': 0.14 (0.09-0.21), no faster than the published cap
    assert doubted.mfu == pytest.approx(alone.mfu) == pytest.approx(0.14, abs=0.005)
    assert doubted.mfu_used.range == pytest.approx(alone.mfu_used.range)
    assert doubted.mfu_used.range[1] <= load_mfu_priors().highest_mfu
    assert doubted.mfu_used.range[0] == pytest.approx(0.094, abs=0.001)
    # the warning stays, and says what became of the run
    assert "**1 of them ran faster than any published run** (up to 0.79 against 0.51 end to " \
           "end), left out of the fit: check their hours" in render_estimate(doubted)
    assert "fast 0.79 (prior 0.20, left out)" in render_estimate(doubted, detail="full")


def test_the_split_relay_flags_runs_faster_than_any_published_run() -> None:
    from compute_budget.tools.relay import relay

    fast = [past(0.84, params=1e9), past(0.92, params=3e9), past(0.97)]
    table = budget_table(BudgetTableSpec(budget_usd=400_000, gpu="h100", calibration=fast))
    told = relay("split_budget", table)
    assert told is not None and "fitted to your" not in told["mfu_source"]
    assert told["mfu_source"].endswith(
        ", per size; your 3 runs were all left out of the fit, faster than any published run: "
        "ask whether their hours are device-hours")


def test_a_path_as_calibration_names_the_function_that_reads_it(tmp_path: Any) -> None:
    # a review: RunSpec(calibration="runs.csv") said only "must be a valid tuple"
    for text in ("runs.csv", "params,tokens,gpu,gpu_hours\n7B,1T,h100,30000\n"):
        with pytest.raises(ValidationError) as info:
            RunSpec(**RUN, calibration=text)
        assert describe_error(info.value) == (
            f"calibration: {text!r} is not allowed; a list of past runs, not a path or a file's "
            "text; in Python, read the file with parse_calibration(Path('runs.csv').read_text()) "
            "and pass what it returns")
    # and that is what the README says to do
    path = tmp_path / "runs.csv"
    path.write_text("params,tokens,gpu,gpu_hours\n7B,1T,h100,30000\n", encoding="utf-8")
    spec = RunSpec(**RUN, calibration=parse_calibration(path.read_text()))
    assert spec.calibration is not None and spec.calibration[0].gpu_hours == 30000
