"""A fewest-devices count says what its machines rent: TPU v5p comes in slices of 4, 8, 16, 32
and 64 chips (then whole cubes), AWS rents T4s one, four or eight to a machine. The memory reply
said "Without offload the run needs 20 × TPU v5p", which no one can rent; the estimate of that
run priced the 32 of a v5p-64."""

from __future__ import annotations

import pytest

from compute_budget import MemorySpec, RunSpec, estimate_memory, estimate_run
from compute_budget.prompts import render_estimate, render_memory
from compute_budget.skill.hardware.catalog import get_accelerator


@pytest.mark.parametrize(("gpu", "count", "rented"), [
    # cloud.google.com/tpu/docs/v5p: v5p-8 (4 chips) … v5p-64 (32 chips), v5p-128 (one cube)
    ("tpu-v5p", 20, 32), ("tpu-v5p", 16, None), ("tpu-v5p", 2, 4), ("tpu-v5p", 70, 128),
    # AWS g4dn: xlarge (1 T4), 12xlarge (4), metal (8)
    ("t4", 2, 4), ("t4", 4, None), ("t4", 1, None),
    # a per-device price rents what it uses; no price, nothing to say
    ("h100", 3, None), ("h20", 3, None),
])
def test_the_devices_a_count_rents(gpu: str, count: int, rented: int | None) -> None:
    acc = get_accelerator(gpu)
    assert acc.rented_count(count) == rented
    paid = acc.price(None, gpu_count=count).paid_gpus
    assert rented == paid  # the estimate prices the same machines


def test_the_fewest_devices_say_what_they_rent() -> None:
    # 100B on 3 TPU v5p needs 496.7 GiB of CPU RAM per chip to offload (tests/skill/
    # test_offload_without_host_link.py): the fewest without offload are 20, a v5p-64's 32
    memory = estimate_memory(MemorySpec(params="100B", gpu="tpu-v5p", gpu_count=3))
    layout = memory.layout
    assert layout.min_gpu_count_without_offload == 20
    assert layout.min_gpu_count_without_offload_rented == 32
    assert layout.min_gpu_count == 16 and layout.min_gpu_count_rented is None
    text = render_memory(memory)
    assert "at least 16 × TPU v5p (per chip) with CPU offload, 20 without (rented as 32)" in text
    assert "Without offload the run needs 20 × TPU v5p (per chip) (rented as 32)." in text
    assert "min_gpu_count_rented" not in layout.model_dump()


def test_an_estimate_that_does_not_fit_names_the_machines_of_its_fewest() -> None:
    # 2B full training does not fit one T4 (15 GiB usable); its fewest are 3, which AWS rents
    # in a g4dn.12xlarge of 4 (the 2 and 4 of the g4dn sizes); JSON and text agree
    est = estimate_run(RunSpec(params="2B", tokens="1B", gpu="t4", gpu_count=1))
    assert est.feasibility == "does_not_fit" and est.memory is not None
    layout = est.memory.layout
    # 2 fit with the optimizer offloaded into the g4dn.12xlarge's 96 GiB per T4 used (one
    # T4's g4dn.xlarge has 16 GiB, too little): they rent 4 too, so the reply names the 3
    assert (layout.min_gpu_count, layout.min_gpu_count_rented) == (2, 4)
    assert layout.min_gpu_count_without_offload == 3
    assert layout.min_gpu_count_without_offload_rented == 4
    assert "Fewest devices it fits on: 3 × T4 (rented as 4)." in render_estimate(est)
    from compute_budget.tools.relay import relay

    told = relay("estimate_run_cost", est)
    assert told is not None and "(fewest devices: 3, rented as 4)." in told["headline"]
    memory = estimate_memory(MemorySpec(params="2B", gpu="t4", gpu_count=1))
    told = relay("estimate_memory", memory)
    assert told is not None and "fewest devices: 3, rented as 4." in told["headline"]
    # where offload rents no fewer devices, the relay names the count without it, as the
    # markdown does: 60B on v5p, 10 with offload and 12 without both rent 16
    told = relay("estimate_memory", estimate_memory(MemorySpec(params="60B", gpu="tpu-v5p",
                                                               gpu_count=1)))
    assert told is not None and told["headline"].endswith("fewest devices: 12, rented as 16.")
    from compute_budget import decision_summary

    verdict = relay("render_verdict", decision_summary(
        estimate_run(RunSpec(params="60B", tokens="10B", gpu="tpu-v5p", gpu_count=1)), 1, 0.2))
    assert verdict is not None and verdict["headline"].endswith(
        "(fewest devices: 12, rented as 16).")


def test_a_verdict_on_a_run_that_does_not_fit_names_what_its_fewest_rent() -> None:
    from compute_budget import decision_summary
    from compute_budget.prompts import render_decision

    decision = decision_summary(
        estimate_run(RunSpec(params="2B", tokens="1B", gpu="t4", gpu_count=1)), 2, 0.5)
    assert decision.verdict == "no-go"
    assert (decision.min_gpu_count, decision.min_gpu_count_rented) == (2, 4)
    assert decision.min_gpu_count_without_offload == 3  # what the text names: both rent 4
    assert "it needs at least 3 of them (rented as 4)." in render_decision(decision)


def test_a_split_row_that_does_not_fit_names_what_its_fewest_rent() -> None:
    # $300k on 4 TPU v6e: the 100B row needs 10 chips, which Google rents as a v6e-16 slice
    # (v6e slices: 1, 4, 8, 16 … 256 chips, cloud.google.com/tpu/docs/v6e)
    from compute_budget import BudgetTableSpec, budget_table
    from compute_budget.prompts import render_split

    table = budget_table(BudgetTableSpec(budget_usd=300_000, gpu="tpu-v6e", gpu_count=4))
    row = next(r for r in table.rows if r.params == 100e9)
    assert (row.fits, row.min_gpu_count, row.min_gpu_count_rented) == (False, 10, 16)
    assert "no: needs 10 (rented as 16) |" in render_split(table)


def test_offload_that_rents_no_fewer_devices_is_not_offered() -> None:
    # 60B on TPU v5p: 10 chips with CPU offload and 12 without both rent a v5p-32 of 16, so
    # "10 (rented as 16) with CPU offload, 12 without (rented as 16)" offered offload for nothing
    memory = estimate_memory(MemorySpec(params="60B", gpu="tpu-v5p", gpu_count=1))
    layout = memory.layout
    assert (layout.min_gpu_count, layout.min_gpu_count_rented) == (10, 16)
    assert (layout.min_gpu_count_without_offload,
            layout.min_gpu_count_without_offload_rented) == (12, 16)
    text = render_memory(memory)
    assert "at least 12 × TPU v5p (per chip) (rented as 16);" in text
    assert "with CPU offload, 12 without" not in text
    # where offload does rent fewer, both stay: 16 chips (a v5p-32) with it, 20 (a v5p-64)
    assert "16 × TPU v5p (per chip) with CPU offload, 20 without (rented as 32)" in render_memory(
        estimate_memory(MemorySpec(params="100B", gpu="tpu-v5p", gpu_count=3)))
    from compute_budget import decision_summary
    from compute_budget.prompts import render_decision

    decision = decision_summary(
        estimate_run(RunSpec(params="60B", tokens="10B", gpu="tpu-v5p", gpu_count=1)), 1, 0.2)
    assert "it needs at least 12 of them (rented as 16)." in render_decision(decision)


def test_a_verdict_relay_names_the_fewest_devices_and_what_they_rent() -> None:
    from compute_budget import decision_summary
    from compute_budget.tools.relay import relay

    decision = decision_summary(
        estimate_run(RunSpec(params="2B", tokens="1B", gpu="t4", gpu_count=1)), 2, 0.5)
    told = relay("render_verdict", decision)
    assert told is not None and told["headline"] == (
        "NO-GO: the run fits device memory only with more CPU RAM than the host has (fewest "
        "devices: 3, rented as 4).")


def test_the_plan_counts_say_what_they_rent() -> None:
    # 60B on TPU v5p fits 10 chips at the fewest (with offload), a v5p-32 slice of 16; 896 chips
    # finish 1T tokens in 30 days (112 nodes of 8, a whole number of cubes: no rounding up).
    # The plan said "needs at least 10 devices" and "fewest that fit are 10" without the 16.
    from compute_budget.prompts import render_plan
    from compute_budget.skill import PlanSpec, plan_run
    from compute_budget.tools.relay import relay

    base = {"params": "60B", "tokens": "1T", "deadline_days": 30}
    alone = plan_run(PlanSpec(**base, gpus=["tpu-v5p"], available={"tpu-v5p": 8}))
    memory = next(b for b in alone.binding if b.code == "memory")
    assert memory.numbers["gpu_count_needed"] == 10
    assert memory.numbers["gpu_count_needed_rented"] == 16
    availability = next(b for b in alone.binding if b.code == "availability")
    assert availability.numbers["gpu_count_needed"] == 896
    assert availability.numbers["gpu_count_needed_rented"] is None
    assert "the fewest that fit are 10 × TPU v5p (per chip) (`tpu-v5p`) (rented as 16)" in (
        render_plan(alone))
    mixed = plan_run(PlanSpec(**base, gpus=["tpu-v5p", "h100"], available={"tpu-v5p": 8}))
    v5p = next(t for t in mixed.frontier if t.gpu == "tpu-v5p")
    assert (v5p.min_gpu_count, v5p.min_gpu_count_rented) == (10, 16)
    assert "it needs at least 10 devices (rented as 16)" in render_plan(mixed)
    told = relay("plan_run", mixed)
    assert told is not None and "it needs at least 10 devices (rented as 16)" in str(told)


@pytest.mark.parametrize("count", [1, 2, 3])
def test_the_fewest_devices_do_not_depend_on_the_count_asked(count: int) -> None:
    # The CPU RAM per device offload must fit in is the machines' rented for each count tried:
    # one T4 (g4dn.xlarge) has 16 GiB, too little for 2B's offloaded optimizer (29.8 GiB);
    # two rent a g4dn.12xlarge, 192 GiB for four (aws.amazon.com/ec2/instance-types/g4).
    # Asked on 2 or 3 T4, the memory reply said "Fewest devices it fits on: 1 × T4 with CPU
    # offload", reading 1's RAM as 96 GiB, and on 1 T4 it said 3 where 2 fit.
    from compute_budget.prompts import render_memory

    memory = estimate_memory(MemorySpec(params="2B", gpu="t4", gpu_count=count))
    layout = memory.layout
    assert (layout.min_gpu_count, layout.min_gpu_count_without_offload) == (2, 3)
    assert "1 × T4 with CPU offload" not in render_memory(memory)
    one = estimate_memory(MemorySpec(params="2B", gpu="t4", gpu_count=1))
    assert one.fits is False and one.layout.binding == "host_memory"
    # the user's RAM holds for every count: 64 GiB a device fits one T4 with offload
    given = estimate_memory(MemorySpec(params="2B", gpu="t4", gpu_count=count, host_ram_gib=64))
    assert given.layout.min_gpu_count == 1
