"""When every past run is doubted (faster than any published run, left out of the fit) the MFU
is the published prior's and every reply says so, with why the runs were left out; and the runs
a reply counts are the fitted ones."""

from __future__ import annotations

from typing import Any

import pytest

from compute_budget.prompts import render_estimate
from compute_budget.skill import RunSpec, estimate_run, get_accelerator
from compute_budget.tools.relay import relay

RUN = {"params": "7B", "tokens": "1T", "gpu": "h100", "gpu_count": 64}


def past(mfu: float, gpu: str = "h100", **more: Any) -> dict[str, Any]:
    """A 7B, 100B-token past run that reached ``mfu`` end to end."""
    peak = get_accelerator(gpu).peak("bf16") * 1e12
    return {"params": 7e9, "tokens": 1e11, "gpu": gpu,
            "gpu_hours": 6 * 7e9 * 1e11 / (mfu * peak * 3600), **more}


def test_one_doubted_run_leaves_the_published_prior_labelled_as_such() -> None:
    # a review: one run at 0.80 (faster than the 0.51 of LLaMA-1 13B, mfu_priors.json) read
    # "0.20, fitted to your past runs" over MCP and "from your 1 run (the published prior
    # weighs 100%)" in the short estimate, though nothing was fitted
    est = estimate_run(RunSpec(**RUN, calibration=[past(0.80, name="fast")]))
    plain = estimate_run(RunSpec(**RUN))
    assert est.mfu_used.origin == "prior" and est.mfu == pytest.approx(plain.mfu)
    assert est.mfu_used.own_runs is not None and est.mfu_used.own_runs.fitted == 0
    told = relay("estimate_run_cost", est)
    assert told is not None
    assert "fitted to your" not in told["mfu_source"]
    assert told["mfu_source"].endswith("; your 1 run was left out of the fit, faster than any "
                                       "published run: ask whether its hours are device-hours")
    short = render_estimate(est)
    assert "from your 1 run" not in short and "weighs 100%" not in short
    assert "a prior from 26 published runs on Hopper" in short
    assert "; your 1 run was left out of the fit, faster than any published run (up to 0.80 " \
           "against 0.51 end to end): check its hours are device-hours" in short
    full = render_estimate(est, detail="full")
    assert "a prior, not a measurement" in full and "weighted 0%" not in full
    assert "Your 1 run (fast 0.80 (prior 0.20, left out)) was left out of the fit" in full


def test_the_runs_on_another_generation_count_only_the_fitted_ones() -> None:
    # three H100 runs, one doubted (0.80), and one A100 run, for a run on A100: the short
    # reply said "3 of them on H100 SXM" while the full one said 2 ran on another generation
    runs = [past(0.80), past(0.15), past(0.18), past(0.30, gpu="a100-80gb")]
    est = estimate_run(RunSpec(**{**RUN, "gpu": "a100-80gb"}, calibration=runs))
    fit = est.mfu_used.own_runs
    assert fit is not None and fit.fitted == 3 and fit.same_generation == 1
    assert ", 2 of them on H100 SXM, carried" in render_estimate(est)
    assert "; 2 of them ran on another generation" in render_estimate(est, detail="full")
