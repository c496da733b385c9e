"""The team's past runs are read against the prior of the new run's family when its counts
cannot tell it (encoder, CNN, SNN: only given), and against the family each run's counts imply
(dense or MoE) otherwise."""

from __future__ import annotations

import pytest

from compute_budget.skill import RunSpec, estimate_run, get_accelerator, mfu_prior

ENCODER = {"params": "355M", "tokens": "400B", "gpu": "a100-80gb", "gpu_count": 8,
           "seq_len": 512, "family": "encoder"}
"""A review's repro: a 355M encoder on 400B tokens on 8 × A100 80GB."""


def encoder_run() -> dict[str, object]:
    """355M on 400B tokens in 5,925 A100-hours: 6 · 355e6 · 400e9 / (5925 · 3600 · 312e12)
    = 0.128 end to end, about the encoder prior's 0.13 (mfu_priors.json, 10 encoder runs)."""
    return {"params": "355M", "tokens": "400B", "gpu": "a100-80gb", "gpu_hours": 5925}


def test_three_encoder_runs_at_the_encoder_prior_give_it() -> None:
    # the review: each run was read against the dense prior (0.22 at 355M), ×0.58, and that
    # ratio applied to the encoder prior gave 0.07 (0.05-0.11), the three runs outside their band
    est = estimate_run(RunSpec(**ENCODER, calibration=[encoder_run()] * 3))
    fit = est.mfu_used.own_runs
    assert fit is not None
    encoder = mfu_prior("encoder", get_accelerator("a100-80gb"), "bf16", params=355e6)
    assert [run.prior_mfu for run in fit.runs] == [pytest.approx(encoder.central)] * 3
    assert fit.ratio == pytest.approx(0.128 / encoder.central, rel=0.01)
    assert fit.central == pytest.approx(0.128, abs=0.005)
    assert fit.low < 0.128 < fit.high


@pytest.mark.parametrize("family", ["cnn", "snn"])
def test_a_flat_family_reads_every_run_against_its_own_prior(family: str) -> None:
    spec = {**ENCODER, "family": family}
    fit = estimate_run(RunSpec(**spec, calibration=[encoder_run()])).mfu_used.own_runs
    flat = mfu_prior(family, get_accelerator("a100-80gb"), "bf16")  # type: ignore[arg-type]
    assert fit is not None and fit.runs[0].prior_mfu == pytest.approx(flat.central)


def test_a_given_moe_family_still_reads_a_dense_run_as_dense() -> None:
    # a dense past run (active = total) is a dense run beside a new MoE one: its own family's
    # prior, as before
    dense_run = {"params": "7B", "tokens": "1T", "gpu": "h100", "gpu_hours": 30000}
    spec = {"params": "47B", "active_params": "13B", "tokens": "1T", "gpu": "h100",
            "gpu_count": 64, "family": "moe"}
    fit = estimate_run(RunSpec(**spec, calibration=[dense_run])).mfu_used.own_runs
    dense = mfu_prior("dense", get_accelerator("h100"), "bf16", params=7e9)
    assert fit is not None and fit.runs[0].prior_mfu == pytest.approx(dense.central)
