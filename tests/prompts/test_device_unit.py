"""Device-hours are counted in the unit their seller prices: GPU-hours for GPUs, chip-hours for
TPU, Trainium and Gaudi (Google Cloud TPU and AWS Trainium price per chip-hour)."""

import pytest

from compute_budget import (
    BudgetTableSpec,
    RunSpec,
    budget_table,
    decision_summary,
    estimate_run,
    get_accelerator,
    suggest_alternatives,
)
from compute_budget.prompts import (
    render_alternatives,
    render_decision,
    render_estimate,
    render_plan,
    render_split,
)
from compute_budget.skill import PlanSpec, list_accelerators, plan_run

TPU_RUN = RunSpec(params="7B", tokens="100B", gpu="tpu-v5p", gpu_count=64)


@pytest.mark.parametrize(("vendor", "unit"), [("NVIDIA", "GPU"), ("AMD", "GPU"),
                                              ("Google", "chip"), ("AWS", "chip"),
                                              ("Intel", "chip")])
def test_each_vendor_counts_its_devices_in_its_own_unit(vendor: str, unit: str) -> None:
    devices = [a for a in list_accelerators() if a.vendor == vendor]
    assert devices and {a.device_unit for a in devices} == {unit}


def test_a_tpu_estimate_counts_chip_hours_and_a_gpu_estimate_gpu_hours() -> None:
    tpu = render_estimate(estimate_run(TPU_RUN), closing=False)
    assert "| Chip-hours |" in tpu and "/chip-h, on-demand" in tpu and "GPU-h" not in tpu
    gpu = render_estimate(estimate_run(RunSpec(params="7B", tokens="100B", gpu="h100",
                                               gpu_count=64)), closing=False)
    assert "| GPU-hours |" in gpu and "chip-h" not in gpu


def test_the_verdict_and_alternatives_of_a_tpu_run_speak_chip_hours() -> None:
    verdict = render_decision(decision_summary(estimate_run(TPU_RUN), 2.0, 0.5, 1.0,
                                               benefit="the paper's main claim"))
    assert "chip-h |" in verdict and "GPU-h" not in verdict
    alternatives = render_alternatives(suggest_alternatives(TPU_RUN))
    original = alternatives.split("Original:", 1)[1].split("\n", 1)[0]
    assert original.endswith("chip-h.")


def test_a_price_per_hour_of_a_chip_in_a_split_and_a_plan() -> None:
    split = render_split(budget_table(BudgetTableSpec(budget_usd=50_000, gpu="tpu-v5p",
                                                      gpu_count=16)))
    assert "/chip-h" in split or "per chip-hour" in split
    assert "GPU-h" not in split
    plan = render_plan(plan_run(PlanSpec(params="1B", tokens="20B", deadline_days=10,
                                         gpus=["tpu-v5p", "h100"])))
    rows = [line for line in plan.splitlines() if line.startswith("| ") and "×" in line]
    assert any("TPU v5p" in r and "/chip-h" in r for r in rows)
    assert any("H100" in r and "/GPU-h" in r for r in rows)


def test_the_catalog_entry_says_its_unit() -> None:
    assert get_accelerator("trainium2").device_unit == "chip"
    assert get_accelerator("rtx-4090").device_unit == "GPU"
