"""CPU offload on devices without a modelled host link (TPUs, Trainium, Gaudi): every reply says
what it checked and what it left out.

A reviewer found three replies that overclaimed. ``memory --gpu tpu-v5p --gpus 3 --params 100B``
said "**Fits** … 496.7 GiB of CPU RAM per device" with no host RAM to check it against (H100
checks it); ``estimate`` on one TPU v5p said "every optimizer step waits for the host" with a
time that left that host step out, unsaid; and a plan's TPU v6e row read "fits only with
optimizer offload (its host step counted)", which it was not. A TPU host's RAM is now the
default where Google's docs give it (hardware/host.py), unknown elsewhere and said so; the host
step, not estimated on these devices, is said to be left out of the time."""

from __future__ import annotations

import pytest

from compute_budget import (
    BudgetTableSpec,
    MemorySpec,
    PlanSpec,
    RunSpec,
    budget_table,
    decision_summary,
    estimate_memory,
    estimate_run,
    plan_run,
)
from compute_budget.prompts import (
    render_decision,
    render_estimate,
    render_memory,
    render_plan,
    render_split,
)
from compute_budget.skill.hardware.host import cpu_ram, host_platform
from compute_budget.tools.relay import relay

GIB = 2**30


@pytest.mark.parametrize(("key", "gib", "chips", "page"), [
    # cloud.google.com/tpu/docs/v6e: "DRAM per host 1536 GiB", "Chips per host 8"
    ("tpu-v6e", 1536 / 8, 8, "cloud.google.com/tpu/docs/v6e"),
    # cloud.google.com/tpu/docs/v5e, VM types: ct5lp-hightpu-1t/4t/8t have 48, 192 and 384 GB
    # (the host's "DRAM per host 512 GiB" is more than a VM gets)
    ("tpu-v5e", 384e9 / 2**30 / 8, 8, "cloud.google.com/tpu/docs/v5e"),
    # cloud.google.com/tpu/docs/v5p-training, VM, host and slice properties: 4 v5p chips,
    # RAM (GB) 448
    ("tpu-v5p", 448e9 / 4 / GIB, 4, "cloud.google.com/tpu/docs/v5p-training"),
])
def test_a_tpu_hosts_ram_is_the_default_where_google_gives_it(key: str, gib: float, chips: int,
                                                               page: str) -> None:
    assert host_platform(key) is None  # still no host link, so no host step
    ram = cpu_ram(key)
    assert ram is not None and ram.origin == "default"
    assert ram.bytes_per_device == pytest.approx(gib * GIB)
    assert ram.devices_per_host == chips
    assert ram.source is not None and page in ram.source
    mine = cpu_ram(key, ram_gib=50)
    assert mine is not None and mine.origin == "user" and mine.bytes_per_device == 50 * GIB


@pytest.mark.parametrize("key", ["tpu-v3", "tpu-v4", "tpu-v7", "gaudi2", "gaudi3"])
def test_a_host_no_public_source_gives_is_unknown_not_zero(key: str) -> None:
    assert cpu_ram(key) is None
    given = cpu_ram(key, ram_gib=64)
    assert given is not None and given.bytes_per_device == 64 * GIB


def test_repro_tpu_v5p_offload_is_checked_against_its_hosts_ram() -> None:
    # memory --gpu tpu-v5p --gpus 3 --params 100B said "**Fits**" with 496.7 GiB of CPU RAM per
    # device; a v5p host has 448 GB for 4 chips, 104.3 GiB each, 93.9 GiB usable at 90%.
    m = estimate_memory(MemorySpec(params="100B", gpu="tpu-v5p", gpu_count=3))
    assert m.fits is False and m.layout.binding == "host_memory"
    assert m.host_ram is not None and m.host_ram.origin == "default"
    reply = render_memory(m)
    assert "**Fits**" not in reply
    assert "496.7 GiB of CPU RAM per device, more than its 93.9 GiB usable of 104.3 GiB" in reply
    assert "cloud.google.com/tpu/docs/v5p-training" in reply
    told = relay("estimate_memory", m)
    assert told is not None and told["headline"].startswith("Does not fit on 3 × TPU v5p")


@pytest.mark.parametrize(("gpu", "count"), [("tpu-v4", 8), ("gaudi3", 2)])
def test_unknown_host_ram_makes_no_plain_fits_claim(gpu: str, count: int) -> None:
    m = estimate_memory(MemorySpec(params="100B", gpu=gpu, gpu_count=count))
    assert m.fits is True and m.offload and m.host_ram is None
    assert "host_ram_unknown" in m.notes
    assert m.offload_gaps == ["host_ram_unknown", "host_step_not_estimated"]
    reply = render_memory(m)
    assert "**Fits**" not in reply
    assert reply.splitlines()[2].startswith("**Fits device memory; CPU RAM unknown, not checked**")
    assert f"The host's CPU RAM is unknown for {m.accelerator}, so this was not checked" in reply
    assert "The run estimate leaves it out of the time" in reply
    assert "the run estimate prices it" not in reply and "within its" not in reply
    told = relay("estimate_memory", m)
    assert told is not None
    assert told["headline"].startswith(f"Fits device memory on {count} × ")
    assert "the host's CPU RAM is unknown, not checked" in told["headline"]
    assert "was not checked (ask for it)" in told["offload"]
    assert "host step is not estimated" in told["offload"]


def test_a_users_ram_on_a_device_without_a_host_link_is_checked() -> None:
    small = estimate_memory(MemorySpec(params="100B", gpu="tpu-v4", gpu_count=8,
                                       host_ram_gib=100))
    assert small.fits is False and small.layout.binding == "host_memory"
    big = estimate_memory(MemorySpec(params="100B", gpu="tpu-v4", gpu_count=8, host_ram_gib=300))
    assert big.fits is True and big.offload and "host_ram_unknown" not in big.notes
    assert big.offload_gaps == ["host_step_not_estimated"]
    reply = render_memory(big)
    assert reply.splitlines()[2].startswith("**Fits**:")
    assert "186.3 GiB per device, within its 270.0 GiB usable of 300.0 GiB (yours)" in reply


def test_repro_split_on_tpu_says_what_offload_leaves_unchecked() -> None:
    # split --budget-usd 100k --gpu tpu-v5p --gpus 3 read "100B … yes, with CPU offload": on
    # v5p hosts the 100B row's offload overflows the RAM, and it needs 16 chips.
    v5p = budget_table(BudgetTableSpec(budget_usd=100_000, gpu="tpu-v5p", gpu_count=3))
    big = next(r for r in v5p.rows if r.params == 100e9)
    assert big.fits is False and big.min_gpu_count == 16
    assert "yes, with CPU offload" not in render_split(v5p)
    # On TPU v4, whose host RAM is unknown, the rows that fit only with offload say so.
    v4 = budget_table(BudgetTableSpec(budget_usd=100_000, gpu="tpu-v4", gpu_count=3))
    offloaded = [r for r in [*v4.rows, v4.ratio_split] if r.fit_needs_offload]
    assert offloaded
    assert all(r.fit_offload_gaps == ["host_ram_unknown", "host_step_not_estimated"]
               for r in offloaded)
    reply = render_split(v4, detail="full")
    assert "with CPU offload (CPU RAM unknown, not checked; its host step not estimated)" in reply
    assert "CPU offload's host step is not estimated on TPU v4 (per chip)" in reply
    assert "host step is priced at the compute-optimal batch" not in reply
    told = relay("split_budget", v4)
    assert told is not None and "not checked" in told["offload"]


def test_repro_estimate_says_the_time_leaves_the_host_step_out() -> None:
    # estimate --gpu tpu-v5p --gpus 1 --preset llama-3-8b --tokens 10B: v5p's host (104.3 GiB a
    # chip) cannot hold the 119.7 GiB; v6e's (192 GiB a chip) can, and its step is unestimated.
    v5p = estimate_run(RunSpec(preset="llama-3-8b", tokens="10B", gpu="tpu-v5p", gpu_count=1))
    assert v5p.feasibility == "does_not_fit"
    run = RunSpec(preset="llama-3-8b", tokens="10B", gpu="tpu-v6e", gpu_count=1)
    e = estimate_run(run)
    assert e.memory is not None and e.memory.offload_needed
    assert e.layout_cost is not None and e.layout_cost.offload is None
    for detail in ("short", "full"):
        first = render_estimate(e, detail=detail).splitlines()[0]
        assert "within its 172.8 GiB usable of 192.0 GiB" in first
        assert "that host step is not estimated for TPU v6e Trillium (per chip): the time below " \
               "leaves it out" in first
        assert "included below" not in first
    assert "its host step not estimated, left out of the time" in render_estimate(e)
    told = relay("estimate_run_cost", e)
    assert told is not None and "run times leave it out" in told["offload"]
    verdict = render_decision(decision_summary(e, 1.0, 0.5))
    assert "(not estimated for these devices: the time and cost below leave it out)" in verdict
    assert "(priced below)" not in verdict
    # On an H100 the host step is estimated and in the time, as before.
    h100 = estimate_run(RunSpec(preset="llama-3-8b", tokens="10B", gpu="h100", gpu_count=1))
    assert h100.memory is not None and h100.memory.offload_gaps == []
    assert "included below" in render_estimate(h100).splitlines()[0]


@pytest.mark.slow  # about 1 s: the quick set keeps its minute on two cores
def test_repro_plan_row_does_not_say_its_host_step_is_counted() -> None:
    # plan --preset deepseek-v3 --tokens 2T --deadline-days 90 --budget 5M: the TPU v6e row
    report = plan_run(PlanSpec(preset="deepseek-v3", tokens="2T", deadline_days=90,
                               budget_usd=5e6))
    tpu = next(p for p in report.plans if p.gpu == "tpu-v6e")
    assert "offload" in tpu.notes
    assert tpu.estimate.memory is not None
    assert "host_step_not_estimated" in tpu.estimate.memory.offload_gaps
    assert tpu.estimate.layout_cost is not None and tpu.estimate.layout_cost.offload is None
    row = next(line for line in render_plan(report).splitlines() if "× TPU v6e" in line)
    assert "its host step counted" not in row and "host step is in" not in row
    assert "fits only with optimizer offload (its host step is not estimated on this device: " \
           "the days leave it out)" in row


def test_a_larger_device_with_offload_says_when_its_cpu_ram_is_unknown() -> None:
    # 200B on 3 TPU v6e: the larger device named (TPU7x, whose host RAM no source gives) fits
    # only with offload; the remedy said "with CPU offload" as if that were checked
    memory = estimate_memory(MemorySpec(params="200B", gpu="tpu-v6e", gpu_count=3))
    larger = next(r for r in memory.layout.remedies if r.kind == "larger_device")
    assert larger.gpu == "tpu-v7" and larger.needs_offload and larger.host_ram_unknown
    assert "with CPU offload (its CPU RAM unknown, not checked)" in render_memory(memory)
    # a device whose host RAM is known keeps the plain wording (H100: the DGX H100's)
    h100 = estimate_memory(MemorySpec(params="400B", gpu="a100-40gb", gpu_count=8))
    assert all(not r.host_ram_unknown for r in h100.layout.remedies)
