"""What a run estimate returns: the cost and its range, the MFU and the price it used (each with
where it came from), the FLOP count, the memory check, and the warnings, as codes and numbers.

:class:`MfuUsed` and :class:`~.hardware.catalog.PriceUsed` are shared by every result that
prices time (the estimate, the budget table). The documented top-level keys of an estimate
(``flops``, ``mfu``, ``wall_hours``, ``wall_days``, ``gpu_hours``, ``dollar_cost``, the ranges,
``dollar_cost_with_failures``, ``memory``, ``defaults_used``) stay where they are.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .hardware.catalog import DeviceUnit, Precision, PriceUsed
from .hardware.cost import CostEstimate
from .hardware.energy import EnergyEstimate
from .hardware.measured import MeasuredMfu
from .hardware.mfu import MfuPrior, ModelFamily
from .hardware.own_runs import OwnRunsMfu
from .memory.estimate import MemoryEstimate, OffloadGap
from .model.architecture import ConfigNote, ParamBreakdown
from .model.flops import FlopCounts, FlopsBreakdown
from .vocabulary import GPUS_PER_NODE, DefaultUsed, MfuConvention, Recompute, RunKind

__all__ = [
    "MAX_PLAN_DAYS",
    "EstimateWarning",
    "Feasibility",
    "FlopsMethod",
    "LayoutCost",
    "MfuUsed",
    "RunAssumptions",
    "RunEstimate",
    "WarningCode",
    "WithoutOffload",
    "assumptions_of",
]

MAX_PLAN_DAYS = 365.0
"""A run longer than a year outlives its plan: hardware, data and the question change."""
Range = tuple[float, float]
FlopsMethod = Literal["6N", "6N+attention", "architecture", "distillation", "scaled", "given"]
Feasibility = Literal["ok", "does_not_fit", "too_long"]
WarningCode = Literal["sparse_peak", "peak_above_catalog", "mfu_near_peak", "params_differ",
                      "active_params_differ", "moe_without_active_params", "under_trained",
                      "price_kind_above_on_demand", "batch_above_optimal"]
MfuOrigin = Literal["user", "prior", "achieved", "own_runs", "measured"]


def _absent(value: object) -> bool:
    """Left out of a result's JSON when None: keys that only a calibration fills."""
    return value is None


class MfuUsed(BaseModel):
    """The MFU an estimate used, its band, and where it came from."""

    model_config = ConfigDict(frozen=True)

    origin: MfuOrigin = Field(
        description="user (given), prior (the calibrated prior), achieved (converted from a "
                    "measured TFLOP/s), own_runs (the prior shrunk toward your past runs) or "
                    "measured (a probe on the device).")
    range: Range = Field(description="MFU band [low, high] used for the ranges (fractions).")
    prior: MfuPrior = Field(description="The prior for this family, hardware and precision.")
    family: ModelFamily = Field(description="Model family of the prior.")
    family_inferred: bool = Field(description="True when the family was inferred, not given.")
    convention: MfuConvention | None = Field(
        description="FLOP convention of the given MFU or achieved TFLOP/s (6n, causal, full); "
                    "None when the prior was used.")
    given: float | None = Field(
        description="The MFU as given or as the achieved TFLOP/s imply it, in its own "
                    "convention, before conversion to the estimate's count; None for the prior.")
    achieved_tflops: float | None = Field(description="Measured hardware TFLOP/s per device.")
    recompute_divided: bool = Field(
        description="True when the prior was divided by the recomputation's hardware / model "
                    "FLOPs (the run executes more FLOPs at the prior's hardware utilisation).")
    own_runs: OwnRunsMfu | None = Field(
        default=None, exclude_if=_absent,
        description="With calibration: your runs' level, their weight against the prior and "
                    "the band they give, before the layout's cost; left out otherwise.")
    probe: MeasuredMfu | None = Field(
        default=None, exclude_if=_absent,
        description="With a probe: the measured step MFU and the modelled communication "
                    "dividing it; left out otherwise.")

    @property
    def borrowed(self) -> bool:
        """Whether the MFU is a prior borrowed from other hardware: the device is uncalibrated
        (:attr:`.hardware.mfu.MfuPrior.uncalibrated`)."""
        return self.origin == "prior" and self.prior.uncalibrated


class LayoutCost(BaseModel):
    """What the run's layout costs in time, computed once: each factor ≥ 1 (1 = no slowdown)."""

    model_config = ConfigDict(frozen=True)

    recompute: float = Field(description="Hardware / model FLOPs of the recomputation.")
    tensor_parallel: float = Field(description="Tensor-parallel communication, 1 + overhead.")
    pipeline: float = Field(description="Pipeline bubble, 1 + (p−1)/m.")
    zero: float = Field(description="ZeRO-3's extra communication.")
    in_prior: float = Field(
        description="The TP, PP and ZeRO-3 cost the same model pays at the scale of the MFU "
                    "prior's published runs (1,024 devices on NVLink, their sequence length): "
                    "inside their end-to-end MFU, so only the excess of this layout's is "
                    "charged.")
    parallel_charged: float = Field(
        description="The TP, PP and ZeRO-3 factor charged: their product at NVLink's speed "
                    "beyond in_prior (at least 1), times in full what a PCIe link adds to it.")
    offload: float | None = Field(
        description="Optimizer offload: step time with the host work over step time without, "
                    "at batch_tokens; None without offload or when it cannot be priced.")
    offload_range: Range | None = Field(
        description="[fast, slow] of the offload factor at batch_tokens: full overlap at the "
                    "fast end, no overlap and the low ends of the bandwidths at the slow end.")
    offload_without_accumulation: float | None = Field(
        default=None,
        description="The offload factor at the smallest batch (no gradient accumulation): what "
                    "a small batch would cost; None without offload.")
    total: float = Field(description="What is charged: recompute × parallel_charged × "
                                     "offload.")
    total_range: Range = Field(description="[fast, slow] of the product (offload's range).")
    applied: bool = Field(
        description="True when the MFU prior was divided by the product; False when the MFU "
                    "was given or measured (its own layout is in the measurement).")
    batch_tokens: float = Field(description="Global batch, tokens per optimizer step.")
    batch_origin: Literal["user", "default"] = Field(
        description="user: batch_tokens given; default: the compute-optimal batch of the run's "
                    "compute (DeepSeek LLM, Bi et al. 2024; see scaling.batch).")
    smallest_batch_tokens: float = Field(
        description="The smallest batch the layout can run: one micro-batch per data-parallel "
                    "rank, no gradient accumulation.")


class WithoutOffload(BaseModel):
    """The cheapest way to run without CPU offload: more devices of the same type."""

    model_config = ConfigDict(frozen=True)

    gpu_count: int = Field(description="Fewest devices of this type that fit without offload.")
    wall_days: float = Field(description="Wall days on them, at the central MFU.")
    gpu_hours: float = Field(description="Device-hours on them.")
    dollar_cost: float | None = Field(description="Nominal dollars; None without a price.")
    dollar_cost_with_failures: float | None = Field(
        description="Dollars with the failure budget; None without a price.")


class RunAssumptions(BaseModel):
    """The assumptions that change the answer, for the short reply of every tool that prices a
    run: the sequence, the micro-batch, the precision and the layout, with CPU offload's needs."""

    model_config = ConfigDict(frozen=True)

    seq_len: int = Field(description="Training sequence length in tokens.")
    seq_len_inferred: bool = Field(description="True when it is the default (4096).")
    native_context: int | None = Field(description="The model's context in its config.")
    precision: Precision = Field(description="Precision whose dense peak is used.")
    micro_batch: int | None = Field(description="Micro-batch in sequences (memory check).")
    zero: int | None = Field(description="ZeRO stage of the layout (memory check).")
    tp: int | None = Field(description="Tensor-parallel degree (memory check).")
    pp: int | None = Field(description="Pipeline-parallel degree (memory check).")
    recompute: Recompute = Field(description="Activation recomputation.")
    offload_only: bool = Field(
        description="True when the run fits these devices only with CPU offload (the search "
                    "chose it).")
    offload_weights: bool = Field(
        default=False, description="With offload: the weights offloaded too (a frozen base).")
    host_bytes_per_node: float | None = Field(
        description="With offload: CPU memory the offloaded state needs per node, bytes.")
    without_offload: WithoutOffload | None = Field(
        description="The fewest devices that fit without offload, and the run on them.")
    offload_gaps: list[OffloadGap] = Field(
        default_factory=list, exclude_if=lambda v: not v,
        description="With offload: what it leaves unchecked on these devices "
                    "(host_ram_unknown, host_step_not_estimated); left out when nothing.")
    host_ram_default: str | None = Field(
        default=None, exclude_if=_absent,
        description="When the host's CPU RAM binds and is the default (host_ram_gib not "
                    "given): the system it is taken from; left out otherwise.")
    own_runs: OwnRunsMfu | None = Field(
        default=None, exclude_if=_absent,
        description="With calibration: the fit of your past runs; left out otherwise.")
    own_runs_mfu: float | None = Field(
        default=None, exclude_if=_absent,
        description="With calibration: the MFU used, from your runs after the layout's cost.")
    probe: MeasuredMfu | None = Field(
        default=None, exclude_if=_absent,
        description="With a probe: the measured MFU and where; left out otherwise.")
    probe_mfu: float | None = Field(
        default=None, exclude_if=_absent,
        description="With a probe: the MFU used, measured, after the layout's communication.")


class EstimateWarning(BaseModel):
    """Something in the inputs that looks like a mistake, as a code with its numbers."""

    model_config = ConfigDict(frozen=True)

    code: WarningCode
    numbers: dict[str, float | str | None] = Field(default_factory=dict)


class RunEstimate(CostEstimate):
    """A full estimate for a run spec: the cost, the range, the assumptions and their sources."""

    params: float = Field(description="Total parameters N.")
    active_params: float | None = Field(description="Active parameters per token (MoE).")
    tokens: float = Field(description="Training tokens T.")
    trainable_params: float | None = Field(
        description="Trainable parameters, when the rest are frozen (LoRA, adapters).")
    kind: RunKind = Field(description="Kind of run: pretrain, continued-pretrain, fine-tune, "
                                      "ablation.")
    accelerator: str = Field(description="Full accelerator name.")
    accelerator_key: str = Field(description="Catalog key of the accelerator.")
    device_unit: DeviceUnit = Field(
        default="GPU", description="What gpu_hours count: GPU-hours, or chip-hours (TPU, "
                                   "Trainium, Gaudi).")
    precision: Precision = Field(description="Precision whose dense peak is used.")
    precision_inferred: bool = Field(description="True when the precision is the default.")
    peak_origin: Literal["user", "catalog"] = Field(description="Who gave the dense peak.")
    peak_source: str | None = Field(description="The catalog's source of the peak; None when "
                                                "given by the user.")
    peak_label: str | None = Field(description="That source in a few words, with its date.")
    catalog_compiled: str = Field(description="Date the catalog was compiled.")
    mfu_used: MfuUsed = Field(description="Where the MFU comes from, and its band.")
    price: PriceUsed = Field(description="The price per device-hour and where it comes from.")
    seq_len: int = Field(description="Training sequence length in tokens.")
    seq_len_inferred: bool = Field(description="True when the sequence length is the default.")
    native_context: int | None = Field(
        default=None,
        description="The model's context in its config (max_position_embeddings), when known.")
    flops_per_token: float = Field(
        description="Model FLOPs per training token in the estimate's convention (the one the "
                    "MFU prior is calibrated on): 6·N_active + attention beyond the calibration "
                    "context.")
    flops_method: FlopsMethod = Field(
        description="How FLOPs were counted: 6N (6·N_active), 6N+attention (plus the causal "
                    "attention beyond the calibration context, from a shape guessed from N), "
                    "architecture (the config's exact count; the term-by-term count is in "
                    "flops_breakdown), distillation (student + teacher forward 2·N_t), scaled "
                    "(the original's per-token FLOPs scaled with the model), given (passed in "
                    "as flops_per_token).")
    flop_counts: FlopCounts | None = Field(
        description="6·N, the attention terms at the context and at the calibration context, "
                    "and the estimate's count per token; None when FLOPs per token were given.")
    flops_breakdown: FlopsBreakdown | None = Field(
        description="Per-token FLOPs by term, when the architecture or the context is known.")
    param_breakdown: ParamBreakdown | None = Field(
        description="Exact parameter counts by component, when the architecture is known.")
    frozen_flops_saved_per_token: float = Field(
        description="FLOPs per token not spent on the weight gradients of frozen parameters.")
    recompute: Recompute = Field(
        description="Activation recomputation the FLOPs count: the layout's (the memory "
                    "check's choice when the user left it open).")
    recompute_slowdown: float = Field(
        description="Hardware / model FLOPs of that recomputation. A prior MFU is divided by it: "
                    "at the same hardware utilisation the recomputed run takes that much longer.")
    layout_cost: LayoutCost | None = Field(
        default=None,
        description="What the layout costs in time (recomputation, TP, PP, ZeRO-3, offload), "
                    "computed once; None without the memory check.")
    without_offload: WithoutOffload | None = Field(
        default=None,
        description="When the run fits only with CPU offload: the fewest devices that fit "
                    "without it, and the run's time and cost on them.")
    hardware_flops: float = Field(
        description="FLOPs the hardware executes for the run, recomputation included.")
    hardware_flops_per_token: float = Field(description="Hardware FLOPs per training token.")
    hfu: float = Field(description="Hardware FLOPs utilisation: MFU × hardware / model FLOPs.")
    architecture_name: str | None = Field(description="Model name from the config or preset.")
    architecture_source: str | None = Field(description="Where the architecture comes from.")
    defaults_used: list[DefaultUsed] = Field(
        description="Every input the estimate filled in itself: the field, the value taken and "
                    "its basis (a code).")
    config_notes: tuple[ConfigNote, ...] = Field(
        description="Fields absent from the config that took a documented default, and the "
                    "assumptions of the count, as codes (see ConfigNote).")
    tokens_per_second_per_gpu: float = Field(description="Training tokens per second per device.")
    wall_hours_range: Range = Field(description="Wall hours [low, high] over the MFU band.")
    wall_days_range: Range = Field(description="Wall days [low, high] over the MFU band.")
    gpu_hours_range: Range = Field(description="Device-hours [low, high] over the MFU band.")
    dollar_cost_range: Range | None = Field(
        description="US dollars [low, high] over the MFU band; None when the price is unknown.")
    dollar_cost_with_failures_range: Range | None = Field(
        description="US dollars with the failure budget [low, high]; None when price unknown.")
    memory: MemoryEstimate | None = Field(
        description="The memory check: memory per device at the cheapest layout that fits (its "
                    "layout says how it was chosen); None for a FLOPs-only estimate.")
    feasibility: Feasibility = Field(
        description="ok; does_not_fit (no layout fits these devices: see memory.min_gpu_count); "
                    "too_long (the central estimate exceeds max_plan_days).")
    max_plan_days: float = Field(description="Longest wall time a plan is taken to survive.")
    wall_days_at_min_gpu_count: float | None = Field(
        description="When it does not fit: the wall days on memory.min_gpu_count devices at "
                    "the same MFU; None otherwise.")
    warnings: list[EstimateWarning] = Field(
        description="Things in the inputs that look like mistakes (codes with numbers).")
    energy: EnergyEstimate = Field(
        description="kWh and CO2 of the run from board power, PUE and grid intensity, each an "
                    "assumption with its source; kWh None when the board power is unknown.")
    gpu_count_in_time: int | None = Field(
        default=None,
        description="too_long: the fewest devices (whole machines; whole nodes of 8 beyond "
                    "one) whose own estimate, layout and MFU re-chosen, finishes within "
                    "max_plan_days; None otherwise.")
    mfu_in_time: float | None = Field(
        default=None, description="The MFU of that estimate at gpu_count_in_time devices.")

    @property
    def pcie_cluster(self) -> bool:
        """PCIe-only cards (no NVLink-class link) on more than one machine: their network, which
        the MFU prior's InfiniBand-class clusters do not measure, is not modelled."""
        return (self.memory is not None and self.memory.peer_link is not None
                and self.gpu_count > (self.price.instance_gpus or GPUS_PER_NODE))


def assumptions_of(estimate: RunEstimate) -> RunAssumptions:
    """What a short reply must say about ``estimate``'s run beside its answer (issue 16)."""
    m = estimate.memory
    offload = m is not None and m.offload
    return RunAssumptions(
        seq_len=estimate.seq_len, seq_len_inferred=estimate.seq_len_inferred,
        native_context=estimate.native_context, precision=estimate.precision,
        micro_batch=None if m is None else m.micro_batch,
        zero=None if m is None else m.zero, tp=None if m is None else m.tp,
        pp=None if m is None else m.pp, recompute=estimate.recompute,
        offload_only=m is not None and m.offload_needed,
        offload_weights=m is not None and m.offload_weights,
        host_bytes_per_node=m.host_bytes_per_node if m is not None and offload else None,
        without_offload=estimate.without_offload, own_runs=estimate.mfu_used.own_runs,
        offload_gaps=m.offload_gaps if m is not None else [],
        host_ram_default=(m.host_ram.source if m is not None and m.host_ram is not None
                          and m.layout.binding == "host_memory" else None),
        own_runs_mfu=estimate.mfu if estimate.mfu_used.own_runs is not None else None,
        probe=estimate.mfu_used.probe,
        probe_mfu=estimate.mfu if estimate.mfu_used.probe is not None else None)
