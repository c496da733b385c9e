"""The fastest plan says when its devices span machines whose network is not modelled, as the
cheapest does: 152 × L4 for a QLoRA of Llama-3.1-8B are 38 g6.12xlarge of 4, and the
structured plan carried the pcie_cluster note while neither the text nor the relay said it
(review helper-56, finding 6)."""

from __future__ import annotations

from compute_budget.prompts import render_plan
from compute_budget.skill import PlanSpec, plan_run
from compute_budget.tools.relay import relay


def test_the_fastest_plan_names_its_unmodelled_network() -> None:
    report = plan_run(PlanSpec(preset="llama-3.1-8b", tokens="500M", lora_rank=16,
                               weights_bits=4, deadline_days=7, gpus=["l4", "t4"]))
    fast, cheap = report.fastest[0], report.plans[0]
    assert fast.accelerator == "L4" and fast.gpu_count > 8 and "pcie_cluster" in fast.notes
    assert "pcie_cluster" not in cheap.notes  # 4 × L4: one g6.12xlarge
    text = render_plan(report)
    fastest = next(line for line in text.splitlines() if line.startswith("**Fastest"))
    assert fastest.endswith("Its devices span machines whose network is not modelled: ask the "
                            "seller what joins them.")
    told = relay("plan_run", report)
    assert told is not None
    assert told["headline"].endswith("(over machines whose network is not modelled).")
