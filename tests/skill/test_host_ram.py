"""CPU RAM: offload's CPU-resident states must fit in the host's memory, or "fits with CPU
offload" is a claim no machine can keep.

Before this check, QLoRA of Qwen3-235B-A22B on one RTX 4090 was "Fits: 9.87 GiB of 24 GiB,
weights and optimizer offloaded to CPU": 113 GiB of 4-bit weights and 49 GiB of adapter state
in the CPU memory of a desktop, which holds 64-128 GiB. The defaults are the CPU RAM of each
device generation's usual host (NVIDIA DGX datasheets and user guides; a desktop's two DIMMs),
per device; ``host_ram_gib`` gives the user's."""

from __future__ import annotations

from typing import Any

import pytest

from compute_budget import (
    AlternativesSpec,
    MemorySpec,
    RunSpec,
    decision_summary,
    estimate_memory,
    estimate_run,
    suggest_alternatives,
)
from compute_budget.prompts import (
    render_alternatives,
    render_decision,
    render_estimate,
    render_memory,
)
from compute_budget.skill.errors import InputError
from compute_budget.skill.hardware.host import host_platform
from compute_budget.skill.memory.states import HOST_USABLE_FRACTION

GIB = 2**30
QWEN_QLORA: dict[str, Any] = dict(preset="qwen3-235b-a22b", lora_rank=16, weights_bits=4,
                                  gpu="rtx-4090", seq_len=2048)


@pytest.mark.parametrize(("key", "gib"), [
    ("v100", 96.0),         # DGX-2: 1.5 TiB for 16 V100
    ("a100-40gb", 128.0),   # DGX A100 320GB: 1 TiB for 8
    ("a100-80gb", 256.0),   # DGX A100 640GB: 2 TiB for 8
    ("h100-sxm", 256.0),    # DGX H100: 2 TiB for 8
    ("gh200", 480e9 / GIB),  # GH200 datasheet: 480 GB of LPDDR5X per Grace, one GPU
    ("gb200", 240e9 / GIB),  # the same Grace shared by two B200
    ("rtx-4090", 48.0),     # a desktop: 2 × 48 GiB DIMMs for two cards
])
def test_each_generation_defaults_to_its_usual_hosts_ram(key: str, gib: float) -> None:
    platform = host_platform(key)
    assert platform is not None and platform.ram_origin == "default"
    assert platform.ram_bytes == pytest.approx(gib * GIB)
    assert platform.ram_source  # named, so the reply can say where it comes from
    mine = host_platform(key, ram_gib=64)
    assert mine is not None and mine.ram_bytes == 64 * GIB and mine.ram_origin == "user"
    assert mine.ram_source is None


def test_a_model_too_large_for_the_hosts_ram_does_not_fit_with_offload() -> None:
    m = estimate_memory(MemorySpec(**QWEN_QLORA, gpu_count=1))
    assert m.fits is False and m.layout.binding == "host_memory"
    # What the cheapest device-fitting layout would need: the 4-bit base (235B at 4.127 bits,
    # 16-bit embeddings and norms) and 3.3B adapters with 18 bytes each (16-bit weights, fp32
    # gradients, fp32 master and two moments), about 170 GiB.
    need = m.layout.host_needed_bytes
    assert need is not None and 166 * GIB < need < 174 * GIB
    assert m.host_ram is not None and need > HOST_USABLE_FRACTION * m.host_ram.bytes_per_device
    # More devices share the offloaded states: the fewest that fit is the count whose share
    # fits the 43.2 GiB usable per device, and one fewer does not.
    n = m.layout.min_gpu_count
    assert n is not None and n == 4
    assert estimate_memory(MemorySpec(**QWEN_QLORA, gpu_count=n)).fits is True
    assert estimate_memory(MemorySpec(**QWEN_QLORA, gpu_count=n - 1)).fits is False
    reply = render_memory(m)
    assert "The CPU RAM binds" in reply
    assert "170.1 GiB of CPU RAM per device, more than its 43.2 GiB usable of 48.0 GiB" in reply
    assert ("default: a desktop's 2 × 48 GiB DIMMs, shared by 2 cards; cloud machines often "
            "give less per device: give yours") in reply


def test_the_users_ram_replaces_the_default() -> None:
    m = estimate_memory(MemorySpec(**QWEN_QLORA, gpu_count=1, host_ram_gib=200))
    assert m.fits is True and m.offload_weights
    assert m.host_ram is not None and m.host_ram.origin == "user"
    assert m.host_bytes <= HOST_USABLE_FRACTION * 200 * GIB
    reply = render_memory(m)
    assert "usable of 200.0 GiB (yours)" in reply
    first = reply.splitlines()[2]
    assert first.startswith("**Fits**") and "GiB of CPU RAM per device" in first
    # Just below what the states need, it no longer fits.
    too_small = m.host_bytes / HOST_USABLE_FRACTION / GIB * 0.99
    assert estimate_memory(MemorySpec(**QWEN_QLORA, gpu_count=1,
                                      host_ram_gib=too_small)).fits is False


def test_a_host_too_small_for_the_weights_falls_back_to_optimizer_offload() -> None:
    # Llama 3 70B QLoRA on 2 × RTX 4090 streams its weights (about 20 GiB of CPU RAM per
    # device); with 8 GiB per device it cannot, and at 2 cards nothing else fits.
    base: dict[str, Any] = dict(preset="llama-3-70b", lora_rank=16, weights_bits=4,
                                gpu="rtx-4090", gpu_count=2)
    assert estimate_memory(MemorySpec(**base)).offload_weights
    small = estimate_memory(MemorySpec(**base, host_ram_gib=8))
    assert small.fits is False and small.layout.binding == "host_memory"
    # On 8 cards the 4-bit weights fit on the devices and only the adapters' state is offloaded
    # or nothing is.
    eight = estimate_memory(MemorySpec(**{**base, "gpu_count": 8}, host_ram_gib=8))
    assert eight.fits is True and not eight.offload_weights


def test_a_pinned_offload_layout_that_overflows_the_host_does_not_fit() -> None:
    m = estimate_memory(MemorySpec(params="13B", gpu="a100-80gb", gpu_count=1, zero=1, tp=1,
                                   pp=1, recompute="full", offload=True, micro_batch=1,
                                   host_ram_gib=64))
    # 13B × (2 + 12) bytes = 182 GB of gradients and Adam state: more than 57.6 GiB usable.
    assert m.layout.chosen_by == "given" and m.fits is False
    assert m.layout.binding == "host_memory"
    assert m.layout.host_needed_bytes == pytest.approx(m.host_bytes)
    assert m.host_ram is not None
    assert m.host_ram.usable_bytes == pytest.approx(HOST_USABLE_FRACTION * 64 * GIB)
    reply = render_memory(m)
    assert "at the layout you set" in reply
    assert (", which the device holds. The CPU RAM binds: the run fits device memory only with "
            "CPU offload") in reply
    assert "more than its 57.6 GiB usable of 64.0 GiB (yours)" in reply


def test_the_run_estimate_states_the_ram_its_offload_takes() -> None:
    est = estimate_run(RunSpec(**QWEN_QLORA, gpu_count=4, tokens="10M"))
    assert est.memory is not None and est.memory.fits and est.memory.offload_weights
    first = render_estimate(est).splitlines()[0]
    assert "of CPU RAM per device, within its 43.2 GiB usable of 48.0 GiB" in first


@pytest.mark.parametrize("value", [0, -4, 0.5, float("inf"), True])
def test_a_bad_ram_size_names_the_field(value: object) -> None:
    with pytest.raises((InputError, ValueError)) as caught:
        MemorySpec(**QWEN_QLORA, gpu_count=1, host_ram_gib=value)  # type: ignore[arg-type]
    assert "host_ram_gib" in str(caught.value)


def test_the_most_frugal_layout_shown_says_when_its_offload_overflows_the_host() -> None:
    # A full fine-tune of Llama 3 8B on one RTX 4090 misses the device by a hair even with the
    # optimizer offloaded, and that offload would need 105 GiB of CPU RAM: the reply shows the
    # device's most frugal layout and says its RAM is more than the desktop's, not "within".
    m = estimate_memory(MemorySpec(preset="llama-3-8b", gpu="rtx-4090", gpu_count=1))
    assert m.fits is False and m.offload and m.layout.binding == "model_states"
    assert m.host_ram is not None
    assert m.host_bytes > m.host_ram.usable_fraction * m.host_ram.bytes_per_device
    reply = render_memory(m)
    assert "per device, more than its 43.2 GiB usable of 48.0 GiB" in reply
    assert "within its" not in reply


def test_every_reply_names_the_ram_as_what_stops_the_run() -> None:
    # The estimate, the verdict and the alternatives of a run only the host's RAM stops say
    # that, not "does not fit in device memory", with the RAM it would need.
    run = dict(QWEN_QLORA, gpu_count=1, tokens="10M")
    est = estimate_run(RunSpec(**run))
    first = render_estimate(est).splitlines()[0]
    assert first.startswith("**This run cannot run on 1 × RTX 4090: it fits device memory only "
                            "with CPU offload, and that needs 170.1 GiB of CPU RAM per device")
    decision = decision_summary(est, 1.0, 0.5)
    assert decision.verdict == "no-go" and decision.cause == "host_memory_does_not_fit"
    fit = next(f for f in decision.findings if f.check == "fits_in_memory")
    assert fit.numbers["host_needed_bytes"] == pytest.approx(170.1 * GIB, rel=0.01)
    assert fit.numbers["host_usable_bytes"] == pytest.approx(43.2 * GIB)
    verdict = render_decision(decision)
    assert "it fits device memory only with CPU offload" in verdict
    assert "a host with more CPU RAM" in verdict  # the next step names the RAM
    assert "does not fit in device memory" not in verdict
    # and where the RAM it compares with comes from, when it is a default
    assert "43.2 GiB usable (default: a desktop's 2 × 48 GiB DIMMs, shared by 2 cards; give yours" \
        in verdict
    given = render_decision(decision_summary(
        estimate_run(RunSpec(**run, host_ram_gib=100)), 1.0, 0.5))
    assert "90.0 GiB usable;" in given and "default:" not in given
    alternatives = render_alternatives(suggest_alternatives(AlternativesSpec(**run)))
    assert "cannot run on 1 × RTX 4090: it fits device memory only with CPU offload" in \
        alternatives


def test_ram_given_for_a_device_without_a_host_link_is_checked() -> None:
    # It was "not used" (host_ram_unused) while offload went unchecked on TPUs; now the user's
    # figure is what offload is checked against, as on a GPU.
    m = estimate_memory(MemorySpec(preset="llama-3-8b", gpu="tpu-v5p", gpu_count=1,
                                   host_ram_gib=100))
    assert m.host_ram is not None and m.host_ram.origin == "user"
    assert m.host_ram.bytes_per_device == 100 * GIB
    assert m.fits is False and m.layout.binding == "host_memory"  # 119.7 GiB > 90.0 usable
    assert "more than its 90.0 GiB usable of 100.0 GiB (yours)" in render_memory(m)


def test_a_borrowed_host_says_it_is_borrowed() -> None:
    # the L40S has no DGX of its own: its default RAM is the DGX A100's, and the source said
    # "DGX A100: 1 TiB for 8 GPUs" as if the L40S sat in one
    l40s = host_platform("l40s")
    assert l40s is not None and l40s.ram_source is not None
    assert l40s.ram_source.endswith(", taken for every PCIe Gen4 device")
    a100 = host_platform("a100-40gb")
    assert a100 is not None and a100.ram_source == "DGX A100: 1 TiB for 8 GPUs"
