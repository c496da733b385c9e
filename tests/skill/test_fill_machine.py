"""A run that uses only part of the machine its price rents pays for all of it: the alternatives
offer the same run on every device paid for (``fill_machine``), and the estimate points at them.

Golden prices: DigitalOcean rents the MI300X in droplets of 1 or 8, $2.59/h and $20.72/h
(gpu-mi300x1-192gb, gpu-mi300x8-1536gb; DigitalOcean API /v2/sizes read 2026-10-08, transcribed in
github.com/shyamsfo/bernoulli), so 4 that talk over Infinity Fabric take the 8x at $20.72/h,
$5.18 per device used. AWS rents the T4 in g4dn instances of 1, 4 or 8 (us-east-1 Linux
on-demand, aws.amazon.com/ec2/pricing/on-demand as compiled in github.com/tsaol/aws-gpu,
data/g4dn_instances.js, 2026-01-21): 2 take a g4dn.12xlarge of 4 at $3.912/h. The H100's
default price is RunPod's per-device Secure Cloud quote (runpod.io/pricing): any count alike.
"""

from __future__ import annotations

import pytest

from compute_budget import RunSpec, suggest_alternatives
from compute_budget.operations import Reply, by_command, reply_text
from compute_budget.prompts import render_alternatives, render_estimate
from compute_budget.skill.advice import alternative_rows
from compute_budget.skill.advice.alternative_rows import fill_machine_row
from compute_budget.skill.estimate import estimate_run
from compute_budget.tools.relay import relay

MI300X_8X_USD_PER_HOUR = 20.72  # gpu-mi300x8-1536gb (DigitalOcean /v2/sizes, 2026-10-08)
G4DN_12XLARGE_USD_PER_HOUR = 3.912  # 4 × T4 (AWS on-demand us-east-1, 2026-01-21)
# the reviewed case: a 1.3B MoE with 300M active parameters on 100B tokens, 4 of 8 MI300X used
MOE_ON_4 = RunSpec(params="1.3B", active_params="300M", tokens="100B", gpu="mi300x", gpu_count=4)
# 350M dense on 7B tokens on 2 T4, which AWS rents in a g4dn.12xlarge of 4
DENSE_ON_2_T4 = RunSpec(params="350M", tokens="7B", gpu="t4", gpu_count=2)


def _fill(spec: RunSpec):
    report = suggest_alternatives(spec)
    rows = [a for a in report.alternatives if a.kind == "fill_machine"]
    assert len(rows) <= 1
    return report, (rows[0] if rows else None)


def test_four_of_eight_mi300x_are_offered_all_eight_for_half_the_money_and_time() -> None:
    report, fill = _fill(MOE_ON_4)
    o = report.original
    assert o.price.paid_gpus == 8
    assert o.usd_per_gpu_hour == pytest.approx(MI300X_8X_USD_PER_HOUR / 4)
    assert fill is not None and fill.feasibility == "ok"
    assert fill.estimate.gpu_count == 8 and fill.estimate.price.paid_gpus is None
    assert (fill.detail.gpu_count_used, fill.detail.paid_gpus) == (4, 8)
    assert fill.estimate.usd_per_gpu_hour == pytest.approx(MI300X_8X_USD_PER_HOUR / 8)
    # the same machine-hour price for half the hours: 6 · 300M · 100B = 1.8e20 FLOPs at the prior
    # MFU 0.131 (the same at 4 and 8) on 1,307 TFLOP/s: 73.0 h on 4 ($1,512, $2,268 with the
    # ×1.5 failure budget), 36.5 h on 8 ($756, $1,134)
    assert fill.estimate.mfu == pytest.approx(o.mfu)
    hours = 1.8e20 / (4 * 1307e12 * o.mfu) / 3600
    assert o.wall_hours == pytest.approx(hours, rel=1e-3)
    assert o.dollar_cost == pytest.approx(hours * MI300X_8X_USD_PER_HOUR, rel=1e-3)
    assert fill.estimate.wall_hours == pytest.approx(hours / 2, rel=1e-3)
    assert fill.dollar_cost == pytest.approx(hours / 2 * MI300X_8X_USD_PER_HOUR, rel=1e-3)
    assert (round(o.wall_days, 2), round(o.dollar_cost_with_failures)) == (3.04, 2268)
    assert (round(fill.wall_days, 2), round(fill.dollar_cost_with_failures)) == (1.52, 1134)
    assert fill.cost_ratio == pytest.approx(0.5, rel=1e-3)
    assert fill.saving_usd == pytest.approx(o.dollar_cost / 2, rel=1e-3)
    # estimated as the run itself on 8 is, memory check and all
    alone = estimate_run(MOE_ON_4.model_copy(update={"gpu_count": 8}))
    assert fill.dollar_cost == pytest.approx(alone.dollar_cost)
    assert fill.wall_days == pytest.approx(alone.wall_days)
    assert fill.estimate.memory is not None and fill.estimate.memory.data_parallel == 8
    # offered before other hardware, ranked with the rows by the relay's saving rule
    kinds = [a.kind for a in report.alternatives]
    assert kinds.index("fill_machine") < kinds.index("other_hardware")


@pytest.mark.parametrize("spec", [
    MOE_ON_4.model_copy(update={"gpu_count": 8}),  # the whole droplet of 8
    MOE_ON_4.model_copy(update={"gpu": "h100"}),  # RunPod prices each H100: nothing left idle
    DENSE_ON_2_T4.model_copy(update={"usd_per_gpu_hour": 0.5}),  # the user's price per device
], ids=["8-mi300x", "4-h100", "own-price"])
def test_a_run_that_pays_for_no_idle_device_gets_no_such_row(spec: RunSpec) -> None:
    report, fill = _fill(spec)
    assert report.original.price.paid_gpus is None
    assert fill is None
    assert "All devices paid for" not in render_alternatives(report)
    assert "tries all" not in render_estimate(report.original)


def test_two_t4_in_a_machine_of_four() -> None:
    report, fill = _fill(DENSE_ON_2_T4)
    o = report.original
    assert o.price.instance == "g4dn.12xlarge" and o.price.paid_gpus == 4
    assert o.usd_per_gpu_hour == pytest.approx(G4DN_12XLARGE_USD_PER_HOUR / 2)
    assert fill is not None and fill.estimate.gpu_count == 4
    assert fill.estimate.price.instance == "g4dn.12xlarge"
    assert fill.estimate.usd_per_gpu_hour == pytest.approx(G4DN_12XLARGE_USD_PER_HOUR / 4)
    # 6 · 350M · 7B = 1.47e19 FLOPs on 65 TFLOP/s T4s at the prior MFU (the same at 2 and 4):
    # 180.5 h on 2 ($706), 90.3 h on 4 ($353) at $3.912 an hour
    assert fill.estimate.mfu == pytest.approx(o.mfu)
    hours = 1.47e19 / (2 * 65e12 * o.mfu) / 3600
    assert o.dollar_cost == pytest.approx(hours * G4DN_12XLARGE_USD_PER_HOUR, rel=1e-3)
    assert fill.dollar_cost == pytest.approx(hours / 2 * G4DN_12XLARGE_USD_PER_HOUR, rel=1e-3)
    assert (round(o.dollar_cost), round(fill.dollar_cost)) == (706, 353)
    assert fill.wall_days < o.wall_days / 1.9
    text = render_alternatives(report)
    assert ("| All devices paid for | the same run on all 4 × T4 the original pays for but uses 2"
            " of, at $0.98/GPU-h (on-demand, 2026-01; g4dn.12xlarge of 4 devices)") in text


def test_a_pinned_layout_the_paid_count_cannot_hold_gets_no_row() -> None:
    # pp = 3 on 3 T4 (a g4dn.12xlarge of 4): 4 devices cannot hold 3 pipeline stages evenly
    spec = RunSpec(params="350M", tokens="7B", gpu="t4", gpu_count=3, pp=3)
    report, fill = _fill(spec)
    assert report.original.price.paid_gpus == 4
    assert fill is None


def test_offered_only_when_cheaper_or_no_dearer_and_faster(
        monkeypatch: pytest.MonkeyPatch) -> None:
    original = estimate_run(DENSE_ON_2_T4)
    cost, hours = original.dollar_cost, original.wall_hours
    assert cost is not None

    def offered(dollars: float, wall_hours: float, feasibility: str = "ok") -> bool:
        full = original.model_copy(update={
            "gpu_count": 4, "dollar_cost": dollars, "wall_hours": wall_hours,
            "feasibility": feasibility})
        monkeypatch.setattr(alternative_rows, "estimate_run", lambda *a, **k: full)
        return fill_machine_row(DENSE_ON_2_T4, original) is not None

    assert offered(cost * 0.9, hours * 2)  # cheaper, even if slower
    assert offered(cost, hours * 0.5)  # no dearer and faster
    assert not offered(cost, hours)  # no gain at all
    assert not offered(cost * 1.01, hours * 0.5)  # faster but dearer
    assert not offered(cost * 0.5, hours * 0.5, "does_not_fit")


def test_the_estimate_points_at_the_row_in_each_doors_words() -> None:
    e = estimate_run(MOE_ON_4)
    op = by_command("estimate")
    cli = reply_text(op, e, Reply())
    mcp = reply_text(op, e, Reply(assistant=True))
    assert "8 paid for 4 used: `compute-budget alternatives` tries all 8)" in cli
    assert "8 paid for 4 used: `suggest_alternatives` tries all 8)" in mcp
    assert "tries all 8" in reply_text(op, e, Reply(full=True))
    assert len(cli) <= 1500  # issue 9: the short estimate reply (1,486 characters here)
    price_source = relay("estimate_run_cost", e)["price_source"]
    assert price_source.endswith("8 paid for 4 used: suggest_alternatives tries all 8)")
    # the other tools' price lines name no tool
    report = suggest_alternatives(MOE_ON_4)
    assert "tries all" not in relay("suggest_alternatives", report)["price_source"]
