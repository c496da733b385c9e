"""Weight offload: a frozen base streamed in from CPU memory a layer at a time (ZeRO 3 with
offload), tried after optimizer offload and only when some weights are frozen.

The case it exists for: Answer.AI's FSDP+QLoRA (answer.ai/posts/2024-03-06-fsdp-qlora, March
2024) fine-tunes a 70B model on two 24 GB gaming GPUs with 4-bit weights sharded by FSDP,
gradient checkpointing and CPU offloading; Axolotl's ``layer_offloading`` streams a LoRA run's
frozen decoder layers from CPU memory the same way. Without it the estimate said such a run fits
at no layout at 4,096 tokens."""

from __future__ import annotations

import pytest

from compute_budget import MemorySpec, RunSpec, estimate_memory, estimate_run
from compute_budget.prompts import render_estimate, render_memory
from compute_budget.skill.hardware.host import host_platform
from compute_budget.skill.memory.layouts import Pins, all_layouts, pins_of
from compute_budget.skill.memory.lora import BITS_PER_WEIGHT, decoder_linear_weights
from compute_budget.skill.memory.offload import LINK_EFFICIENCY, offload_cost, offload_factor
from compute_budget.skill.memory.states import Layout, Setup, device_bytes

GIB = 2**30
QLORA_70B = dict(preset="llama-3-70b", lora_rank=16, weights_bits=4, gpu="rtx-4090",
                 seq_len=4096)


def _setup(spec: MemorySpec) -> Setup:
    return Setup(gpu_count=spec.gpu_count, seq_len=spec.resolved_seq_len, optimizer_bytes=12.0,
                 stack=spec.resolved_stack, capacity_bytes=None)


def test_qlora_70b_fits_two_24_gb_cards_only_by_streaming_its_weights() -> None:
    spec = MemorySpec(**QLORA_70B, gpu_count=2)  # type: ignore[arg-type]
    m = estimate_memory(spec)
    assert m.fits is True and m.offload and m.offload_weights and m.zero == 3
    assert m.layout.tried["offload"] == [False, True, "weights"]  # only values actually tried
    assert m.tp == 1 and m.pp == 1  # no model parallelism was needed on top
    # On the device only the gathered units: two 4-bit layers, and the 16-bit embedding and LM
    # head (128256 × 8192 × 2 bytes each) of FSDP's root unit,
    embedding = 128256 * 8192 * 2
    layer = 8192 * (8192 + 2 * 1024 + 8192) + 3 * 8192 * 28672
    assert m.zero3_gathered_bytes == pytest.approx(
        2 * embedding + 2 * layer * BITS_PER_WEIGHT[4] / 8)
    # and the largest 4-bit matrix dequantized to 16 bits for its matmul (8192 × 28672).
    assert m.dequantized_bytes == 2 * 8192 * 28672
    assert m.per_gpu_bytes.weights == pytest.approx(m.zero3_gathered_bytes + m.dequantized_bytes)
    # In CPU memory: each device's half of the 4-bit decoder (68.5B weights at 4.127 bits), of
    # the 16-bit rest (embedding, LM head, norms) and of the adapters with their fp32 gradients
    # and Adam state (2 + 4 + 12 bytes each).
    linear = decoder_linear_weights(spec.model.shape)
    weights = linear * BITS_PER_WEIGHT[4] / 8 + 2 * (m.params - linear)
    assert m.host_bytes == pytest.approx((weights + 18 * m.lora_params) / 2, rel=1e-9)
    assert m.offload_cost is not None
    assert m.offload_cost.streamed_bytes == pytest.approx(2 * (m.host_bytes - (
        m.trainable_params / 2) * (4 + 12)), rel=1e-6)
    # Without offload it needs four of them, and the reply names what is offloaded.
    plain = estimate_memory(MemorySpec(**QLORA_70B, gpu_count=2, offload=False))  # type: ignore[arg-type]
    assert plain.fits is False
    assert m.layout.min_gpu_count == 1 and m.layout.min_gpu_count_without_offload == 5
    reply = render_memory(m)
    assert "weights and optimizer offloaded to CPU" in reply.splitlines()[2]
    assert "the gradients and optimizer state, and the weights, live in CPU memory" in reply


def test_weight_offload_only_at_zero_3_with_optimizer_offload_and_a_frozen_base() -> None:
    lora = MemorySpec(**QLORA_70B, gpu_count=2)  # type: ignore[arg-type]
    layouts = list(all_layouts(Pins(), lora.model, 2))
    streamed = [lay for lay in layouts if lay.offload_weights]
    assert streamed and all(lay.zero == 3 and lay.offload for lay in streamed)
    # Full training: ZeRO-Infinity would need ~16 bytes per parameter of host memory, which is
    # not checked, so it is never tried and a 70B full fine-tune still does not fit one H100.
    full = MemorySpec(preset="llama-3-70b", gpu="h100", gpu_count=1, seq_len=4096)
    assert not any(lay.offload_weights for lay in all_layouts(Pins(), full.model, 1))
    assert estimate_memory(full).fits is False
    # The user turning offload off turns both off.
    assert not any(lay.offload for lay in all_layouts(Pins(offload=False), lora.model, 2))


@pytest.mark.parametrize("preset,bits,gpus", [
    ("llama-3-70b", 4, 2), ("llama-3-8b", 16, 1), ("qwen3-30b-a3b", 4, 4), ("gemma-2-9b", 8, 8),
    ("smollm2-135m", 16, 8),
])
def test_streaming_the_weights_never_needs_more_device_memory(preset: str, bits: int,
                                                              gpus: int) -> None:
    # The search relies on it: within a group, the most frugal layout bounds the others.
    spec = MemorySpec(preset=preset, lora_rank=16, weights_bits=bits,  # type: ignore[arg-type]
                      gpu="h100", gpu_count=gpus, seq_len=2048)
    setup = _setup(spec)
    for recompute in ("none", "full"):
        kept = Layout(zero=3, offload=True, recompute=recompute)
        optimizer_only = device_bytes(spec.model, kept, setup)
        both = device_bytes(spec.model, Layout(zero=3, offload=True, offload_weights=True,
                                               recompute=recompute), setup)
        assert both.total <= optimizer_only.total
        assert both.weights == both.gathered + both.dequantized and both.streamed > 0
        assert both.host == pytest.approx(optimizer_only.host + both.streamed)


def test_a_4_bit_base_is_gathered_at_4_bits() -> None:
    # ZeRO 3 without offload, over 8 ranks: two 4-bit layers, a quarter of what 16-bit layers
    # would take, and the root unit (FSDP keeps it gathered): the 16-bit embedding and LM head.
    spec = MemorySpec(preset="llama-3-8b", lora_rank=16, weights_bits=4, gpu="h100",
                      gpu_count=8, seq_len=2048, zero=3)
    setup = _setup(spec)
    layer = 4096 * (4096 + 2 * 1024 + 4096) + 3 * 4096 * 14336  # Llama 3 8B's linear weights
    gathered = device_bytes(spec.model, Layout(zero=3), setup).gathered
    embedding = 128256 * 4096 * 2
    assert gathered == pytest.approx(2 * layer * BITS_PER_WEIGHT[4] / 8 + 2 * embedding)


def test_streaming_costs_time_only_where_the_copies_outlast_the_compute() -> None:
    platform = host_platform("rtx-4090", None)
    assert platform is not None
    shard = 20e9  # bytes of weights per device, copied in twice per micro-batch
    cost = offload_cost(0.0, platform, shard)
    streamed = 2 * shard
    assert cost.streamed_bytes == streamed
    central_copy = streamed / (platform.link_gbs * 1e9 * LINK_EFFICIENCY[1])
    # A long micro-batch (70B at 4,096 tokens on a 4090: about a minute) hides the copies.
    factor, (fast, slow) = offload_factor(cost, 60.0 * 8, micro_batches=8)
    assert factor == pytest.approx(1.0) and fast == pytest.approx(1.0)
    assert slow > 1.05  # no overlap at the slow end: the copies add up
    # A short one (half a second of compute) waits for them every micro-batch: accumulation
    # does not amortise the copies, unlike the optimizer step.
    factor, _ = offload_factor(cost, 0.5 * 8, micro_batches=8)
    assert factor == pytest.approx(central_copy / 0.5)


def test_the_run_estimate_prices_the_copies_and_names_them() -> None:
    est = estimate_run(RunSpec(**QLORA_70B, gpu_count=2, tokens="10M",  # type: ignore[arg-type]
                               kind="fine-tune"))
    assert est.memory is not None and est.memory.offload_weights
    assert est.layout_cost is not None and est.layout_cost.offload is not None
    first = render_estimate(est).splitlines()[0]
    assert "only with the optimizer state and the weights offloaded to CPU memory" in first
    assert "every micro-batch for the weights" in first
    # 16-bit LoRA of the same model on 2 × A100 40GB at 512 tokens: each device copies its half
    # of 141 GB in twice per micro-batch (~7 s over PCIe 4), against ~2 s of compute.
    short = estimate_run(RunSpec(preset="llama-3-70b", lora_rank=16, gpu="a100-40gb",
                                 gpu_count=2, seq_len=512, tokens="10M", kind="fine-tune"))
    assert short.memory is not None and short.memory.offload_weights
    assert short.layout_cost is not None and short.layout_cost.offload is not None
    assert short.layout_cost.offload_without_accumulation is not None
    assert short.layout_cost.offload_without_accumulation > 2


def test_a_device_without_a_host_offload_path_never_streams_its_weights() -> None:
    # TPUs have no CUDA-style host offload path (hardware/host.py): nothing prices the copies,
    # so a LoRA of a 70B model on 4 TPU v5e chips (16 GB each) does not fit, as before.
    spec = MemorySpec(preset="llama-3-70b", lora_rank=16, gpu="tpu-v5e", gpu_count=4,
                      seq_len=4096)
    assert pins_of(spec).offload_weights is False
    assert not any(lay.offload_weights for lay in all_layouts(pins_of(spec), spec.model, 4))
    m = estimate_memory(spec)
    assert m.fits is False and not m.offload_weights
    assert m.layout.tried["offload"] == [False, True]
    assert "before the frozen weights" not in render_memory(m)
    # The same run on 4 A100 40GB may stream (a PCIe host link).
    gpu = MemorySpec(preset="llama-3-70b", lora_rank=16, gpu="a100-40gb", gpu_count=4,
                     seq_len=4096)
    assert pins_of(gpu).offload_weights is None
