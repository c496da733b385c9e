"""The plan's footnote names the prior its costs are at: the flat prior of a CNN or spiking
model and the encoder prior are one level for every device, not a device's calibrated prior."""

from __future__ import annotations

import pytest

from compute_budget.prompts import render_plan
from compute_budget.skill.planning.plan import PlanSpec, plan_run


def _footnote(family: str, gpu: str = "h100-sxm") -> str:
    report = plan_run(PlanSpec(params="1B", tokens="100B", deadline_days=30, family=family,
                               gpus=[gpu]))
    return next(x for x in render_plan(report).splitlines() if x.startswith("Costs are at"))


@pytest.mark.parametrize(("family", "label"), [("cnn", "CNN-heavy model"),
                                               ("snn", "spiking (SNN) model")])
def test_a_flat_prior_is_named_as_one_no_runs_calibrate(family: str, label: str) -> None:
    line = _footnote(family)
    # FAMILY_PRIORS (skill/hardware/mfu.py): 0.10–0.20 for CNN-heavy and spiking models.
    assert (f", at the skill's flat prior for a {label} (0.10–0.20), which no published runs "
            "calibrate," in line)
    assert "calibrated MFU prior for the device" not in line


def test_the_encoder_prior_is_named_with_its_runs() -> None:
    report = plan_run(PlanSpec(params="1B", tokens="100B", deadline_days=30, family="encoder",
                               gpus=["h100-sxm"]))
    prior = report.plans[0].estimate.mfu_used.prior
    assert prior.scope == "family" and prior.n_runs > 0
    line = next(x for x in render_plan(report).splitlines() if x.startswith("Costs are at"))
    assert (f", at the encoder prior, the median of {prior.n_runs} published encoder and "
            "encoder–decoder runs, one level for every device and size," in line)
    assert "calibrated MFU prior for the device" not in line


def test_a_dense_models_plan_keeps_the_devices_calibrated_prior() -> None:
    assert ", at the calibrated MFU prior for the device and the model's size" in _footnote("dense")
