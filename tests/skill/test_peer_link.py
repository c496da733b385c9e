"""The link between the devices of a node prices tensor parallelism and ZeRO-3.

Before the peer link, every device was costed as if joined by NVLink (R = 600 FLOPs per byte,
an A100 over ~230 GB/s): Llama 3.1 8B on eight RTX 4090 was laid out at TP 8 for ×1.21, though
GeForce cards reach each other through host memory at about 18 GB/s of NCCL all-reduce bandwidth
(github.com/NVIDIA/nccl/issues/1603), and ZeRO-3 cost a flat ×1.05 whatever it moved."""

from __future__ import annotations

import re
from typing import Any

import pytest

from compute_budget import MemorySpec, RunSpec, estimate_memory, estimate_run
from compute_budget.prompts import render_estimate, render_memory
from compute_budget.skill.hardware.catalog import get_accelerator
from compute_budget.skill.hardware.peer_link import (
    ACHIEVED_SHARE,
    FABRIC,
    FABRIC_FLOPS_PER_BYTE,
    PCIE_BUS_GBS,
    device_peer_link,
)
from compute_budget.skill.memory.costs import ZERO3_SLOWDOWN, Costs
from compute_budget.skill.memory.states import Layout

EIGHT_4090: dict[str, Any] = dict(preset="llama-3.1-8b", gpu="rtx-4090", gpu_count=8)


@pytest.mark.parametrize("key", ["h100-sxm", "a100-80gb", "gb200", "mi300x", "tpu-v5p",
                                 "trainium2"])
def test_devices_on_a_scale_up_fabric_keep_the_nvlink_anchor(key: str) -> None:
    link = device_peer_link(get_accelerator(key))
    assert link.kind == "fabric" and link.flops_per_byte == FABRIC_FLOPS_PER_BYTE == 600


@pytest.mark.parametrize(("key", "bus", "peak"), [
    ("rtx-4090", 18.0, 165.2),   # GeForce: through host memory (nccl issue 1603)
    ("l40s", 22.0, 362.05),      # Gen4 with peer-to-peer (nccl issue 1603)
    ("rtx-5090", 28.0, 209.6),   # 8 x 5090, Gen5 (nccl issue 1639)
    ("h100-pcie", 37.6, 756.5),  # Gen5 with peer-to-peer (8 x RTX PRO 6000 Blackwell)
])
def test_pcie_cards_pay_their_compute_over_their_bus(key: str, bus: float, peak: float) -> None:
    acc = get_accelerator(key)
    assert acc.peak_tflops.bf16 == pytest.approx(peak, abs=0.05)
    peak = acc.peak_tflops.bf16
    link = device_peer_link(acc)
    assert link.kind == "pcie" and link.bus_gbs == bus
    # R = 0.4 of the dense BF16 peak over the bus: an RTX 4090's is about 3,700, 6x NVLink's
    assert link.flops_per_byte == pytest.approx(ACHIEVED_SHARE * peak * 1e12 / (bus * 1e9))
    assert link.flops_per_byte > 4 * FABRIC_FLOPS_PER_BYTE
    assert "github.com" in link.source or "no measurement" in link.source


def test_every_pcie_figure_names_its_measurement() -> None:
    assert all(source for _, source in PCIE_BUS_GBS.values())


def test_tensor_parallelism_costs_r_times_more_over_pcie() -> None:
    model = MemorySpec(**EIGHT_4090).model
    pcie = device_peer_link(get_accelerator("rtx-4090"))
    layout = Layout(tp=8)
    fabric_tp = Costs(model, 4096, "megatron", 8, FABRIC).factors(layout)[1]
    pcie_tp = Costs(model, 4096, "megatron", 8, pcie).factors(layout)[1]
    assert (pcie_tp - 1) / (fabric_tp - 1) == pytest.approx(
        pcie.flops_per_byte / FABRIC_FLOPS_PER_BYTE)
    assert pcie_tp > 2  # TP 8 of an 8B model over PCIe more than doubles the step


def test_zero3_overlaps_on_nvlink_and_is_exposed_between_pcie_cards() -> None:
    model = MemorySpec(**EIGHT_4090).model
    link = device_peer_link(get_accelerator("rtx-4090"))
    r = link.flops_per_byte
    # 2 gathers of the 16-bit weights and one reduce-scatter of the 16-bit gradients (6 bytes a
    # parameter, 7/8 of them moved) against the hardware FLOPs of the micro-batch's tokens
    def c(costs: Costs, rate: float, tokens: int) -> float:
        return 6 * model.total * 7 / 8 * rate / (costs.flops_per_token["none"] * tokens)

    nvlink = Costs(model, 4096, "hf", 8, FABRIC)
    assert c(nvlink, FABRIC_FLOPS_PER_BYTE, 4096) < 0.2
    assert nvlink.zero3(Layout(zero=3)) == ZERO3_SLOWDOWN  # hidden behind the compute
    short = Costs(model, 256, "hf", 8, FABRIC)
    assert short.zero3(Layout(zero=3)) == pytest.approx(c(short, FABRIC_FLOPS_PER_BYTE, 256))
    pcie = Costs(model, 4096, "hf", 8, link)
    expected = c(pcie, r, 4096)
    assert pcie.zero3(Layout(zero=3)) == pytest.approx(1 + expected)  # exposed
    # a larger micro-batch amortises the gathers; recomputation's FLOPs dilute them
    assert pcie.zero3(Layout(zero=3, micro_batch=4)) == pytest.approx(1 + expected / 4)
    assert pcie.zero3(Layout(zero=3, recompute="full")) < 1 + expected
    assert pcie.zero3(Layout(zero=2)) == 1.0


def test_a_frozen_4_bit_base_moves_a_quarter_of_the_bytes() -> None:
    base = MemorySpec(preset="llama-3.1-70b", gpu="rtx-a6000", gpu_count=4, lora_rank=64).model
    qlora = MemorySpec(preset="llama-3.1-70b", gpu="rtx-a6000", gpu_count=4, lora_rank=64,
                       weights_bits=4).model
    link = device_peer_link(get_accelerator("rtx-a6000"))
    full, four = (Costs(m, 128, "hf", 4, link).zero3(Layout(zero=3)) - 1
                  for m in (base, qlora))
    # 4.127 bits a weight (NF4 with double quantization) against 16, the 16-bit embeddings and
    # head aside; the adapters' gradients are a rounding error
    assert full / 4.5 < four < full / 3


def test_routed_experts_are_gathered_at_ep_1_on_either_stack_and_sharded_by_ep() -> None:
    # ZeRO-3 gathers every weight it shards: at EP 1 the routed experts (97% of Qwen3-30B-A3B)
    # are in its bytes on megatron as on hf; they were left out on megatron, on the grounds that
    # expert parallelism moves tokens to them, at a layout with none
    model = MemorySpec(preset="qwen3-30b-a3b", gpu="l40s", gpu_count=8).model
    link = device_peer_link(get_accelerator("l40s"))
    r = link.flops_per_byte
    dense = model.total - model.experts
    for stack in ("hf", "megatron"):
        costs = Costs(model, 512, stack, 8, link)
        c = 6 * model.total * 7 / 8 * r / (costs.flops_per_token["none"] * 512)
        assert costs.zero3(Layout(zero=3)) == pytest.approx(1 + c)
        # expert parallelism of 4 shards the experts over 2 ranks each: a quarter of them,
        # half moved; at EP 8 (= the data-parallel degree) none
        c = 6 * (dense * 7 / 8 + model.experts / 4 / 2) * r / (costs.flops_per_token["none"] * 512)
        assert costs.zero3(Layout(zero=3, ep=4)) == pytest.approx(1 + c)
        c = 6 * dense * 7 / 8 * r / (costs.flops_per_token["none"] * 512)
        assert costs.zero3(Layout(zero=3, ep=8)) == pytest.approx(1 + c)


def test_eight_geforce_cards_are_not_laid_out_at_tp_8() -> None:
    # was TP 8 at ×1.21 with NVLink's R. Over PCIe, TP and ZeRO-3 cost more than offloading
    # the optimizer (its host step, priced at its worst, a micro-batch per step): ZeRO 3 with
    # offload at micro-batch 2; without offload the search settles on TP 4 at ×2.04
    m = estimate_memory(MemorySpec(**EIGHT_4090))
    assert m.fits and m.tp == 1 and m.offload and m.offload_by_choice
    assert m.layout.offload_priced
    plain = estimate_memory(MemorySpec(**EIGHT_4090, offload=False))
    assert plain.fits and 1 < plain.tp < 8 and not plain.offload
    assert plain.layout.slowdown.total > 1.8
    assert m.peer_link is not None and m.peer_link.bus_gbs == 18.0
    fabric = estimate_memory(MemorySpec(**EIGHT_4090), fabric=True)
    assert fabric.tp == 8 and fabric.peer_link is None and not fabric.offload
    # the run estimate prices both at the real batch: offload by choice is the faster
    chosen, without = (estimate_run(RunSpec(**EIGHT_4090, tokens=1e9, **extra))
                       for extra in ({}, {"offload": False}))
    assert chosen.wall_hours < without.wall_hours
    first = render_estimate(chosen).splitlines()[0]
    assert "only with" not in first  # it fits without offload too: offload is a choice here
    assert "chosen for speed: between PCIe cards its host step costs" in render_estimate(chosen)


def test_the_reply_says_the_layout_pays_over_pcie_and_names_the_measurement() -> None:
    reply = render_memory(estimate_memory(MemorySpec(**EIGHT_4090, offload=False)))
    assert "TP communication ×" in reply and "over PCIe" in reply
    assert "- Link: these cards reach each other over PCIe only, at 18 GB/s" in reply
    assert "nccl/issues/1603, read 2026-12-07)" in reply  # the figure's source and date
    assert "NVLink bridge" not in reply  # no bridge joins GeForce 40-series cards
    bridged = render_memory(estimate_memory(MemorySpec(preset="llama-3.1-70b", gpu="rtx-a6000",
                                                       gpu_count=8, lora_rank=16)))
    assert "a pair joined by an NVLink bridge is faster" in bridged
    priced = render_memory(estimate_memory(MemorySpec(**EIGHT_4090)))
    assert "CPU offload of the optimizer state priced at its host step" in priced


def test_nvlink_and_single_devices_say_nothing_of_a_link() -> None:
    for spec in (dict(preset="llama-3.1-70b", gpu="h100", gpu_count=8),
                 dict(preset="llama-3.1-8b", gpu="rtx-4090", gpu_count=1)):
        m = estimate_memory(MemorySpec(**spec))
        assert m.peer_link is None
        reply = render_memory(m)
        assert re.search(r"over PCIe(?! Gen)", reply) is None and "- Link:" not in reply
        assert "peer_link" not in m.model_dump(mode="json")  # left out of the structured reply


def test_the_run_estimate_prices_the_pcie_layout_against_the_nvlink_prior() -> None:
    est = estimate_run(RunSpec(**EIGHT_4090, tokens=1e9, offload=False))
    cost = est.layout_cost
    assert cost is not None and cost.applied
    # the prior's runs paid NVLink's parallelism: in_prior is priced on the fabric, so the
    # PCIe layout's extra cost is not cancelled by it
    assert cost.tensor_parallel > 1.1 and cost.in_prior < 1.1
    full = render_estimate(est, detail="full")
    assert "TP communication ×" in full and "Link: these cards reach each other" in full


def test_pcie_cards_on_several_machines_say_their_network_is_not_modelled() -> None:
    one = render_memory(estimate_memory(MemorySpec(**EIGHT_4090)))
    assert "network between them is not modelled" not in one
    many = render_memory(estimate_memory(MemorySpec(preset="llama-3.1-70b", gpu="rtx-a6000",
                                                    gpu_count=64)))
    assert "64 cards take several machines, and the network between them is not modelled" in many
    from compute_budget.skill.planning.plan import plan_run
    from compute_budget.skill.planning.plan_spec import PlanSpec

    report = plan_run(PlanSpec(preset="llama-3.1-70b", tokens="1T", deadline_days=30,
                               gpus=["rtx-a6000", "h100"]))
    notes = {p.gpu: p.notes for p in report.plans}
    assert "pcie_cluster" in notes["rtx-a6000"] and "pcie_cluster" not in notes["h100-sxm"]


def test_exposed_gathers_take_the_largest_micro_batch_that_fits() -> None:
    # Qwen3-30B-A3B on the hf stack: FSDP gathers all 30.5B weights (the experts too) for every
    # micro-batch of 4,096 tokens; over L40S's PCIe that costs ×9.6 at micro-batch 1
    spec = MemorySpec(preset="qwen3-30b-a3b", gpu="l40s", gpu_count=8)
    m = estimate_memory(spec)
    assert m.zero == 3 and m.layout.micro_batch_raised
    assert m.micro_batch == m.layout.max_micro_batch and m.micro_batch > 1
    one = estimate_memory(spec.model_copy(update={"micro_batch": 1}))
    assert not one.layout.micro_batch_raised and one.micro_batch == 1
    assert one.layout.slowdown.zero > 8
    assert m.layout.slowdown.zero - 1 == pytest.approx((one.layout.slowdown.zero - 1)
                                                       / m.micro_batch)
    assert "micro-batch 4 (the largest that fits" in render_memory(m)
    # on NVLink the same gathers hide behind the compute: micro-batch 1, as the rule says
    h100 = estimate_memory(MemorySpec(preset="qwen3-30b-a3b", gpu="h100", gpu_count=8))
    assert h100.micro_batch == 1 and not h100.layout.micro_batch_raised


def test_the_cli_keeps_everything_on_the_devices_with_no_offload(cli: Any) -> None:
    args = ("memory", "--preset", "llama-3.1-8b", "--gpu", "rtx-4090", "--gpus", "8")
    code, chosen, _ = cli(*args)
    assert code == 0 and "optimizer offloaded to CPU" in chosen
    code, plain, _ = cli(*args, "--no-offload")
    assert code == 0 and "offloaded" not in plain.split("\n\n")[1]
    assert "TP 4" in plain and "kept as you set: offload false" in plain


def test_offload_is_not_chosen_where_a_layout_without_it_costs_nothing() -> None:
    # 8B on 8 L40S (45 GiB usable): ZeRO 1 or 2 fits without any communication beyond plain
    # data parallelism, so the host step of offload would only slow it down
    m = estimate_memory(MemorySpec(preset="llama-3.1-8b", gpu="l40s", gpu_count=8))
    assert m.fits and not m.offload and m.layout.offload_priced
    assert m.zero <= 2 and m.tp == 1 and m.pp == 1 and not m.offload_needed
