"""What a layout costs in speed: one factor per knob (1.0 = no slowdown), their product the
layout search's order (:mod:`.layout`)::

    ZeRO 0, 1, 2        1.0    same communication volume as plain data parallelism
                               (Rajbhandari et al. 2020, Sec. 7.2.1)
    ZeRO 3              1.5x the volume (Sec. 7.2.2): C = B·(d−1)/d·R / (F·s·b), its bytes'
                        time over the compute's, B the bytes one micro-batch moves (the stored
                        weights gathered for the forward and again for the backward pass, the
                        16-bit gradients reduce-scattered), d the data-parallel degree, F the
                        hardware FLOPs per token, s·b the micro-batch's tokens. On NVLink the
                        gathers overlap the compute: max(1.05, C), and C stays under 1 for a
                        dense model at a few hundred tokens per micro-batch or more. Between
                        PCIe cards they do not: max(1.05, 1 + C) (FSDP on two RTX 3090 loses the
                        same 3.7-3.8 s per micro-batch at batch 4 and 6, on two RTX 4090 10%
                        against DDP: ``benchmarks/pcie_layouts.py``). A mixture of experts'
                        routed experts count in B on either stack, each rank's E/EP of them
                        gathered over the dp/EP ranks that share them: all of them at EP 1,
                        none at EP = d (expert parallelism shards them instead). Its
                        all-to-all of the tokens is not modelled (factor 1)
    recomputation       hardware / model FLOPs from the FLOP terms (:mod:`..model.flops`):
                        selective adds the attention scores' forward (a few %), full a forward
                        pass of every layer (about 4/3; Narayanan et al. 2021, eq. 3; about 1.5
                        for LoRA or a frozen base, whose model FLOPs are 4·N)
    tensor parallel t   1 + 8·(t−1)·h·R / (3·W)   four all-reduces of the s·b·h activations per
                        layer (Shoeybi et al. 2019, Sec. 3), ring all-reduce moving 2(t−1)/t of
                        them, against 6·W/t FLOPs of the layer's W matmul weights
    pipeline p          1 + (p−1)/m, the 1F1B bubble (Narayanan et al. 2021, Sec. 2.2) with
                        m = 4·p micro-batches per step assumed; tried only once tensor
                        parallelism is at its largest degree
    offload             a last resort: tried only when nothing else fits, optimizer offload
                        before weight offload (a frozen base only); its host work per optimizer
                        step and its weight copies per micro-batch are :mod:`.offload`'s, and
                        what they cost in time depends on the compute per step, so the run
                        estimate prices them. Between two or more PCIe cards the cheapest fit
                        with the optimizer offloaded is weighed against the cheapest without:
                        its host step over one micro-batch's compute (:meth:`Costs.offload`)
                        against the communication it saves

R is the FLOPs per byte of the device's peer link (:mod:`..hardware.peer_link`): 600 on NVLink
(an A100 at 125 TFLOP/s achieved over about 230 GB/s of all-reduce bandwidth), several times
that between PCIe cards. Data parallelism's once-a-step gradient all-reduce is not counted: it
overlaps the backward pass and is amortised over the micro-batches of a step.
"""

from __future__ import annotations

from functools import lru_cache
from math import prod

from pydantic import BaseModel, ConfigDict, Field

from ..hardware.peer_link import FABRIC, PeerLink
from ..model.flops import flops_per_token, hardware_flops_per_token, rule_of_thumb, trained_share
from ..vocabulary import RECOMPUTE_ORDER, Recompute, Stack
from .lora import BITS_PER_WEIGHT
from .spec import ResolvedModel
from .states import GRADIENT_BYTES, WEIGHT_BYTES, Layout

__all__ = ["PP_MICROBATCHES_PER_STAGE", "ZERO3_SLOWDOWN", "Costs", "Slowdown", "costs",
           "zero3_bytes"]

ZERO3_SLOWDOWN = 1.05
PP_MICROBATCHES_PER_STAGE = 4


class Slowdown(BaseModel):
    """Estimated slowdown of a layout against one that needs no memory savings (factors ≥ 1)."""

    model_config = ConfigDict(frozen=True)

    recompute: float = Field(description="Hardware / model FLOPs of the recomputation.")
    tensor_parallel: float = Field(description="Tensor-parallel communication, 1 + overhead.")
    pipeline: float = Field(description="Pipeline bubble, 1 + (p−1)/m.")
    zero: float = Field(description="ZeRO-3's extra communication.")
    offload: bool = Field(description="Optimizer offload (slowdown not estimated).")
    offload_weights: bool = Field(
        default=False, description="Weight offload as well (slowdown not estimated).")
    fabric_parallel: float | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="Between PCIe cards: the TP, PP and ZeRO-3 factors' product at NVLink's "
                    "speed, the part a run estimate credits against its MFU prior's runs; left "
                    "out on a fabric.")

    @property
    def total(self) -> float:
        """The product of the factors (offload not counted)."""
        return self.recompute * self.parallel

    @property
    def parallel(self) -> float:
        """The TP, PP and ZeRO-3 factors' product."""
        return self.tensor_parallel * self.pipeline * self.zero

    def charged(self, in_prior: float) -> float:
        """The TP, PP and ZeRO-3 cost beyond ``in_prior``, what a run estimate's MFU prior
        already holds: at NVLink's speed, what exceeds it (at least 1); between PCIe cards,
        times the excess the link adds over NVLink, in full: the prior's runs, on NVLink and
        InfiniBand, paid none of it."""
        fabric = self.fabric_parallel or self.parallel
        return max(1.0, fabric / in_prior) * self.parallel / fabric


class Costs:
    """Slowdown factors for one model, sequence, stack, device count and peer link (the FLOP
    ratios and the bytes computed once)."""

    def __init__(self, model: ResolvedModel, seq_len: int, stack: Stack, gpu_count: int,
                 link: PeerLink, offload_seconds: float | None = None) -> None:
        self.recompute, self.flops_per_token, self.layer_weights = _flop_terms(model, seq_len)
        self.offload_seconds = offload_seconds
        self.achieved = link.flops_per_byte * link.bus_gbs * 1e9
        self.hidden = model.shape.hidden
        self.stack = stack
        self.seq_len = seq_len
        self.gpu_count = gpu_count
        self.flops_per_byte = link.flops_per_byte
        self.exposed = link.kind == "pcie"
        self.model = model

    def zero3(self, layout: Layout) -> float:
        """ZeRO-3's factor at ``layout``: max(1.05, C) on a fabric, max(1.05, 1 + C) between
        PCIe cards (module docstring)."""
        dp = max(1, self.gpu_count // (layout.tp * layout.pp))
        if layout.zero < 3 or dp == 1:
            return 1.0  # one data-parallel rank: nothing to gather (weight offload is priced apart)
        moved = zero3_bytes(self.model, dp, layout.ep)
        tokens = self.seq_len * layout.micro_batch
        ratio = moved * self.flops_per_byte / (self.flops_per_token[layout.recompute] * tokens)
        return max(ZERO3_SLOWDOWN, 1 + ratio if self.exposed else ratio)

    def offload(self, layout: Layout) -> float | None:
        """Optimizer offload's factor between PCIe cards, to weigh it against a layout without
        (:meth:`priced`): its host step over one micro-batch's compute, the worst case (no
        gradient accumulation; the run estimate prices it at the real batch). None where
        offload stays a last resort: on a fabric, with weight offload, or without a host
        path."""
        if not layout.offload or layout.offload_weights or self.offload_seconds is None:
            return None
        tokens = self.seq_len * layout.micro_batch
        compute = (self.flops_per_token[layout.recompute] * tokens
                   / (layout.tp * layout.pp * self.achieved))
        return 1 + self.offload_seconds / compute

    def factors(self, layout: Layout) -> tuple[float, float, float, float]:
        """recompute, tensor-parallel, pipeline and ZeRO-3 factors of ``layout``."""
        t, p = layout.tp, layout.pp
        return (self.recompute[layout.recompute],
                1 + 8 * (t - 1) * self.hidden * self.flops_per_byte / (3 * self.layer_weights),
                1 + (p - 1) / (PP_MICROBATCHES_PER_STAGE * p),
                self.zero3(layout))

    def slowdown(self, layout: Layout) -> Slowdown:
        recompute, tp, pipeline, zero = self.factors(layout)
        fabric = None
        if self.exposed:
            on_nvlink = costs(self.model, self.seq_len, self.stack, self.gpu_count, FABRIC)
            fabric = prod(on_nvlink.factors(layout)[1:])
        return Slowdown(recompute=recompute, tensor_parallel=tp, pipeline=pipeline, zero=zero,
                        offload=layout.offload, offload_weights=layout.offload_weights,
                        fabric_parallel=fabric)

    def key(self, layout: Layout) -> tuple[float, ...]:
        """The search's order: no offload, no model parallelism on the hf stack, the least
        slowdown (the factors' product, as :attr:`Slowdown.total`, without building one: the
        search ranks thousands of layouts), then the fewest knobs turned."""
        model_parallel = self.stack == "hf" and (layout.tp > 1 or layout.pp > 1)
        recompute, tp, pipeline, zero = self.factors(layout)
        return (float(layout.offload) + float(layout.offload_weights), float(model_parallel),
                round(recompute * tp * pipeline * zero, 9), layout.zero, layout.tp, layout.pp,
                RECOMPUTE_ORDER.index(layout.recompute))

    def priced(self, layout: Layout) -> tuple[float, float]:
        """(hf-stack model parallelism, the factors' product with optimizer offload priced):
        how :func:`.layout.search_layout` weighs a layout with offload against one without,
        between PCIe cards."""
        recompute, tp, pipeline, zero = self.factors(layout)
        model_parallel = self.stack == "hf" and (layout.tp > 1 or layout.pp > 1)
        return (float(model_parallel),
                recompute * tp * pipeline * zero * (self.offload(layout) or 1.0))


@lru_cache(maxsize=256)
def costs(model: ResolvedModel, seq_len: int, stack: Stack, gpu_count: int,
          link: PeerLink, offload_seconds: float | None = None) -> Costs:
    """The slowdown factors of ``model`` (cached: a plan search asks for them once per device
    type and count)."""
    return Costs(model, seq_len, stack, gpu_count, link, offload_seconds)


@lru_cache(maxsize=256)
def _flop_terms(model: ResolvedModel, seq_len: int
                ) -> tuple[dict[Recompute, float], dict[Recompute, float], float]:
    """Hardware over model FLOPs and hardware FLOPs per token by recomputation mode, and the
    matmul weights of one layer (W), for ``model`` at ``seq_len``."""
    shape = model.shape
    if model.architecture is not None:
        terms = flops_per_token(model.architecture, seq_len)
    else:
        terms = rule_of_thumb(model.active, layers=shape.layers, hidden=shape.hidden,
                              seq_len=seq_len)
    share = trained_share(model.active, model.total, model.trainable, model.adapters)
    hardware = {r: hardware_flops_per_token(terms, r, share) for r in RECOMPUTE_ORDER}
    per_layer = sum(i * o for (_, i, o), _n in shape.linear_layers()
                    if _n == shape.layers) or 12 * shape.hidden**2
    moe_share = 0.0
    if shape.moe_layers:
        moe_share = shape.experts_per_token * len(shape.mlp_projections(1)) * \
            shape.hidden * shape.expert_intermediate
    return ({r: h.hardware_over_model for r, h in hardware.items()},
            {r: h.hardware_flops_per_token for r, h in hardware.items()},
            float(max(per_layer + moe_share, 1)))


@lru_cache(maxsize=1024)
def zero3_bytes(model: ResolvedModel, dp: int, ep: int = 1) -> float:
    """Bytes one micro-batch moves per model-parallel group under ZeRO-3, each collective's
    (n−1)/n share: the stored weights gathered twice, the trained weights' 16-bit gradients
    reduce-scattered once. The routed experts ÷ ``ep`` over dp / ep ranks (module
    docstring)."""
    share = (dp - 1) / dp
    expert_dp = max(1, dp // ep)
    routed = model.experts / ep * (expert_dp - 1) / expert_dp
    dense = (model.total - model.experts) * share
    stored = (WEIGHT_BYTES * (model.total - model.quantized)
              + BITS_PER_WEIGHT[model.weights_bits] / 8 * model.quantized) / model.total
    trained = dense + routed if model.trainable >= model.total else model.trainable * share
    return 2 * stored * (dense + routed) + GRADIENT_BYTES * trained
