"""The run estimate: FLOPs, time, GPU-hours and dollars of a run spec, with the MFU band as the
range, the memory check at the cheapest layout that fits, and every assumption's source.

In named steps (:func:`estimate_run`):

1. **token FLOPs** (:func:`token_flops`): counted in the convention the MFU prior was
   calibrated on (:mod:`.model.flops`): 6·N_active (the config's exact count when there is
   one) plus only the causal attention that a context beyond the calibration context (4k) adds;
   the term-by-term count is kept in the breakdown. Frozen weights skip their weight gradients.
2. **layout cost** (:func:`layout_cost`): the layout's recomputation (the memory check's choice
   when the user left it open) executes more FLOPs than the model trains (hardware / model
   FLOPs: 4/3 for full recomputation, 1.5 with a frozen base); tensor and pipeline parallelism
   and ZeRO-3 add communication and a bubble (:mod:`.memory.layout`); CPU offload adds its host
   work per optimizer step (:mod:`.memory.offload`) over the compute of a step at the global
   batch. Computed once; the product divides a prior MFU.
3. **MFU choice** (:func:`mfu_used`): the user's (converted from its ``mfu_convention``), the
   one an achieved TFLOP/s implies, or the prior divided by the layout cost (the prior
   describes runs at their usual hardware utilisation), shrunk toward the team's past runs
   first when ``calibration`` gives them (:mod:`.hardware.own_runs`).
4. **price**: the user's, or the catalog's newest quote of the kind asked.
5. **cost band** (:func:`.hardware.cost.cost_band`): the central cost and the MFU band's
   ends.
6. **warnings** (:mod:`.estimate_checks`): inputs that look like mistakes, as codes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .errors import ComputeBudgetError
from .estimate_checks import batch_warnings, estimate_warnings, run_defaults
from .estimate_result import (
    MAX_PLAN_DAYS,
    EstimateWarning,
    Feasibility,
    FlopsMethod,
    LayoutCost,
    MfuUsed,
    RunEstimate,
    WithoutOffload,
    assumptions_of,
)
from .hardware.catalog import Accelerator, Precision, load_catalog, source_label
from .hardware.cost import band_ranges, cost_band, cost_from_flops
from .hardware.energy import TimedRun, energy_of
from .hardware.in_time import in_time as count_in_time
from .hardware.measured import measured_mfu
from .hardware.mfu import mfu_prior
from .hardware.own_runs import own_runs_mfu
from .hardware.prices import spanning
from .memory.estimate import MemoryEstimate, estimate_memory
from .memory.offload import offload_factor
from .model.flops import (
    CALIBRATION_CONTEXT,
    FlopCounts,
    FlopsBreakdown,
    convert_mfu,
    flop_counts,
    flops_per_token as flops_per_token_of,
    hardware_flops_per_token,
    mfu_from_achieved,
    rule_of_thumb,
    trained_share,
)
from .run_spec import RunSpec
from .scaling.batch import batch_of
from .vocabulary import FLOPS_PER_PARAM_PER_TOKEN, HOURS_PER_DAY, Recompute

__all__ = ["MAX_PLAN_DAYS", "EstimateWarning", "Feasibility", "RunEstimate", "assumptions_of",
           "estimate_run", "token_flops"]

REFERENCE_DEVICES = 1024
"""The scale of the MFU prior's published runs (hundreds to thousands of devices)."""
_AT_SCALE: dict[tuple[object, ...], float] = {}
"""model_parallel_at_scale's answers, by what decides them (a plan asks once per device type)."""
_AT_SCALE_SIZE = 256
FROZEN_SAVING_PER_PARAM = 2.0
"""FLOPs per frozen parameter per token not spent: its weight gradient (2 of the 6)."""
Range = tuple[float, float]


@dataclass(frozen=True)
class TokenFlops:
    """Model FLOPs per training token, how they were counted, and the terms recomputation
    scales."""

    per_token: float
    method: FlopsMethod
    terms: FlopsBreakdown
    """What recomputation executes again (the breakdown, or 6·N as one matmul term)."""
    breakdown: FlopsBreakdown | None
    counts: FlopCounts | None
    frozen: float
    """Frozen parameters whose weight gradients are skipped."""
    share: float = 1.0
    """Model FLOPs over those of training every weight (:func:`.model.flops.trained_share`)."""

    def recompute_ratio(self, recompute: Recompute) -> float:
        """Hardware / model FLOPs of ``recompute`` for what this run trains."""
        return hardware_flops_per_token(self.terms, recompute, self.share).hardware_over_model


def token_flops(spec: RunSpec, given: float | None = None,
                method: FlopsMethod = "given") -> TokenFlops:
    """Step 1: model FLOPs per token of ``spec`` (or ``given``, counted by ``method``)."""
    model, seq_len = spec.model, spec.resolved_seq_len
    shape, n = model.shape, model.active
    breakdown: FlopsBreakdown | None = None
    counts: FlopCounts | None = None
    if given is not None:
        per_token, terms = given, rule_of_thumb(given / FLOPS_PER_PARAM_PER_TOKEN)
    elif model.architecture is not None:
        breakdown = terms = flops_per_token_of(model.architecture, seq_len)
        counts = flop_counts(breakdown.six_n, seq_len, arch=model.architecture)
        per_token, method = counts.estimate, "architecture"
    elif spec.seq_len is not None:  # a context but no architecture: the guessed shape's
        breakdown = terms = rule_of_thumb(n, layers=shape.layers, hidden=shape.hidden,
                                          seq_len=seq_len)
        counts = flop_counts(breakdown.six_n, seq_len, layers=shape.layers, hidden=shape.hidden)
        per_token, method = counts.estimate, "6N+attention"
    else:
        terms = rule_of_thumb(n)
        per_token, method = terms.total, "6N"
        counts = flop_counts(terms.six_n, seq_len, layers=shape.layers, hidden=shape.hidden)
    frozen, share = 0.0, 1.0
    if model.trainable < model.total and given is None:
        share = trained_share(n, model.total, model.trainable, model.adapters)
        # Frozen weights still pass gradients back to their inputs (2 FLOPs) but compute none
        # for themselves (the other 2 of the backward's 4): Kaplan et al. 2020's 6 → 4. LoRA
        # adapters train beside the frozen base: 6 FLOPs per active adapter weight.
        trained_base = 0.0 if model.adapters else model.trainable
        frozen = max(0.0, n - trained_base)
        per_token -= FROZEN_SAVING_PER_PARAM * frozen
        per_token += FLOPS_PER_PARAM_PER_TOKEN * model.adapters * n / model.total
    return TokenFlops(per_token, method, terms, breakdown, counts, frozen, share)


def mfu_used(spec: RunSpec, acc: Accelerator, precision: Precision, peak: float,
             flops: TokenFlops, ratio: float, layout: float = 1.0) -> tuple[float, MfuUsed]:
    """Step 3: the MFU (in the estimate's FLOP count) and where it comes from. A given or
    measured MFU is an upper bound on end-to-end speed, so it caps the band's fast end (and
    widens its slow end when it lies below the prior). ``ratio`` is the recomputation's
    hardware / model FLOPs, ``layout`` the rest of the layout's cost (TP, PP, ZeRO-3): a prior
    is divided by both."""
    prior = mfu_prior(spec.resolved_family, acc, precision, params=spec.model.active)
    common = dict(prior=prior, family=spec.resolved_family, family_inferred=spec.family is None,
                  achieved_tflops=spec.achieved_tflops)
    if spec.probe is not None:
        probe = measured_mfu(spec.probe, peak, layout)
        mfu = probe.step_mfu / layout  # the recomputation is in the measured time
        return mfu, MfuUsed(origin="measured", range=(min(prior.low / (ratio * layout), mfu), mfu),
                            convention="6n", given=probe.step_mfu, recompute_divided=False,
                            probe=probe, **common | {"achieved_tflops": probe.achieved_tflops})
    if spec.mfu is None and spec.achieved_tflops is None:
        cost = ratio * layout
        own = None if spec.calibration is None else own_runs_mfu(spec.calibration, prior)
        level = prior if own is None else own
        return level.central / cost, MfuUsed(
            origin="own_runs" if own is not None and own.fitted else "prior", own_runs=own,
            range=(level.low / cost, level.high / cost), convention=None, given=None,
            recompute_divided=ratio > 1, **common)
    convention = spec.mfu_convention or "6n"
    if spec.mfu is not None:
        given = spec.mfu
    else:
        assert spec.achieved_tflops is not None  # one of the two is given here
        given = mfu_from_achieved(spec.achieved_tflops, peak, flops.per_token,
                                  flops.per_token * ratio)
    mfu = given if flops.counts is None else convert_mfu(given, convention, flops.counts)
    return mfu, MfuUsed(origin="user" if spec.mfu is not None else "achieved",
                        range=(min(prior.low / ratio, mfu), mfu), convention=convention,
                        given=given, recompute_divided=False, **common)


def model_parallel_at_scale(spec: RunSpec) -> float:
    """The TP, PP and ZeRO-3 cost the same model pays at the scale of the MFU prior's published
    runs: its cheapest layout on :data:`REFERENCE_DEVICES` devices of this type joined by NVLink,
    every knob open, no recomputation, at their sequence length (the run's, up to
    :data:`.model.flops.CALIBRATION_CONTEXT`: the parallelism a longer sequence's activations
    need, those runs did not pay). Those runs paid it and their end-to-end MFU holds it, so only
    a layout's cost beyond it slows a run against the prior (a 70B model needs TP or ZeRO-3 at
    any scale; a 7B model on 8 devices needs neither)."""
    model = spec.model
    seq_len = min(spec.resolved_seq_len, CALIBRATION_CONTEXT)
    key = (model.shape, model.total, model.active, model.trainable, model.adapters,
           model.experts, model.quantized, model.weights_bits, spec.gpu, seq_len,
           spec.resolved_stack, spec.optimizer, spec.flash_attention, spec.micro_batch)
    cached = _AT_SCALE.get(key)
    if cached is None:
        update: dict[str, object] = {k: None for k in ("zero", "tp", "pp", "sp", "ep", "offload")}
        at_scale = spec.model_copy(update=update | {"gpu_count": REFERENCE_DEVICES,
                                                    "recompute": "none", "seq_len": seq_len})
        cached = estimate_memory(at_scale, fabric=True).layout.slowdown.parallel
        if len(_AT_SCALE) >= _AT_SCALE_SIZE:
            _AT_SCALE.clear()
        _AT_SCALE[key] = cached
    return cached


def layout_cost(spec: RunSpec, memory: MemoryEstimate | None, ratio: float,
                seconds_per_token: float, in_prior: float = 1.0) -> LayoutCost | None:
    """Step 2: what the layout costs in time. ``seconds_per_token`` is one device's compute time
    per training token at the MFU before offload; the offload factor compares the host work of
    an optimizer step with the compute of one step at the global batch (module docstring);
    ``in_prior`` is the model-parallel cost the prior already holds
    (:func:`model_parallel_at_scale`)."""
    if memory is None:
        return None
    slow = memory.layout.slowdown
    other = slow.charged(in_prior)
    dp = max(1, spec.gpu_count // (memory.tp * memory.pp))
    smallest = float(memory.micro_batch * memory.seq_len * dp)
    batch = spec.batch_tokens or max(smallest, batch_of(
        FLOPS_PER_PARAM_PER_TOKEN * spec.model.active * spec.tokens))
    factor = unaccumulated = None
    span: Range | None = None
    if memory.offload_cost is not None:
        def step(tokens: float) -> float:
            return tokens * seconds_per_token / spec.gpu_count

        factor, span = offload_factor(memory.offload_cost, step(batch), batch / smallest)
        unaccumulated = offload_factor(memory.offload_cost, step(smallest))[0]
    total = ratio * other * (factor or 1.0)
    ends = (total, total) if span is None else (ratio * other * span[0], ratio * other * span[1])
    return LayoutCost(
        recompute=ratio, tensor_parallel=slow.tensor_parallel, pipeline=slow.pipeline,
        zero=slow.zero, in_prior=in_prior, parallel_charged=other, offload=factor,
        offload_range=span,
        offload_without_accumulation=unaccumulated, total=total, total_range=ends,
        applied=spec.mfu is None and spec.achieved_tflops is None, batch_tokens=batch,
        batch_origin="user" if spec.batch_tokens is not None else "default",
        smallest_batch_tokens=smallest)


def _without_offload(spec: RunSpec, memory: MemoryEstimate | None, flops: float, peak: float,
                     mfu: float, cost: LayoutCost | None) -> WithoutOffload | None:
    """When the run fits only with offload: the same run on the fewest devices that fit
    without it, or all those their machines pay for (2 TPU v5p pay for a v5p-8's 4), at the MFU
    without the offload factor and their price (:mod:`.hardware.prices`)."""
    if memory is None or not memory.offload or cost is None:
        return None
    count = memory.layout.min_gpu_count_without_offload
    if count is None or count <= spec.gpu_count:
        return None
    plain = mfu * (cost.offload or 1.0) if cost.applied else mfu
    price = spec.accelerator.price(spec.usd_per_gpu_hour, kind=spec.price_kind, gpu_count=count)
    if (paid := price.paid_gpus) and paid % spec.count_step == 0:
        count, price = paid, spec.accelerator.price(spec.usd_per_gpu_hour,
                                                    kind=spec.price_kind, gpu_count=paid)
    run = cost_from_flops(flops, count, peak, plain, price.usd_per_gpu_hour, spec.failure_budget)
    return WithoutOffload(gpu_count=count, wall_days=run.wall_days, gpu_hours=run.gpu_hours,
                          dollar_cost=run.dollar_cost,
                          dollar_cost_with_failures=run.dollar_cost_with_failures)


def _feasibility(memory: MemoryEstimate | None, wall_days: float) -> Feasibility:
    if memory is not None and memory.fits is False:
        return "does_not_fit"
    return "too_long" if wall_days > MAX_PLAN_DAYS else "ok"


def estimate_run(spec: RunSpec, *, flops_per_token: float | None = None,
                 flops_method: FlopsMethod = "given",
                 check_memory: bool = True, in_time: bool = True) -> RunEstimate:
    """Estimate FLOPs, time, GPU-hours and dollars for ``spec``, with the MFU band as the range
    (the steps of the module docstring). ``flops_per_token`` replaces the count of step 1
    (``flops_method`` says how it was obtained: given, or distillation's teacher forward pass
    2·N_teacher per token added); without ``check_memory`` the memory check is skipped. Other
    counts it names are estimated there (:func:`_followed`), unless ``in_time`` is False (a
    search that tries counts itself)."""
    def at(count: int) -> RunEstimate | None:
        try:
            return _estimate(spec.model_copy(update={"gpu_count": count}), flops_per_token,
                             flops_method, check_memory)
        except (ComputeBudgetError, ValueError):  # a count the user's settings do not allow
            return None

    estimate = _estimate(spec, flops_per_token, flops_method, check_memory)
    return _followed(estimate, spec, at) if in_time else estimate


def _followed(estimate: RunEstimate, spec: RunSpec,
              at: Callable[[int], RunEstimate | None]) -> RunEstimate:
    """``estimate`` with what it says about other counts estimated there (``at``), not scaled:
    the count without offload, the wall time on the fewest devices it fits on, and the
    devices that would finish it in time (:mod:`.hardware.in_time`), rounded up to those their
    machines pay for (sooner at the same hourly price)."""
    update: dict[str, object] = {}
    w = estimate.without_offload
    if w is not None and (there := at(w.gpu_count)) is not None:
        update["without_offload"] = w.model_copy(update={
            k: getattr(there, k) for k in ("wall_days", "gpu_hours", "dollar_cost",
                                           "dollar_cost_with_failures")})
    fewest = estimate.memory.min_gpu_count if estimate.memory is not None else None
    base = estimate
    if estimate.feasibility == "does_not_fit" and fewest and (there := at(fewest)) is not None:
        update["wall_days_at_min_gpu_count"] = there.wall_days
        base = there if there.feasibility == "too_long" else estimate
    pinned = spec.count_step
    layout = base.layout_cost.total if base.layout_cost is not None else 1.0
    found = count_in_time(base, base.gpu_count, pinned, None if base.memory is None else layout,
                          at)
    if found is not None:
        count, mfu = found.gpu_count, found.mfu
        paid = found.estimate.price.paid_gpus if isinstance(found.estimate, RunEstimate) else None
        if paid and paid % pinned == 0 and (whole := at(paid)) is not None \
                and whole.feasibility == "ok":  # the devices paid for anyway
            count, mfu = paid, whole.mfu
        update |= {"gpu_count_in_time": count, "mfu_in_time": mfu}
    return estimate.model_copy(update=update) if update else estimate


def _estimate(spec: RunSpec, flops_per_token: float | None, flops_method: FlopsMethod,
              check_memory: bool) -> RunEstimate:
    """One estimate of ``spec`` at its own count (:func:`estimate_run`)."""
    acc, precision = spec.accelerator, spec.resolved_precision
    peak = spec.peak_tflops if spec.peak_tflops is not None else acc.peak(precision)
    flops = token_flops(spec, flops_per_token, flops_method)
    memory = estimate_memory(spec) if check_memory else None
    recompute = memory.recompute if memory is not None else spec.recompute or "none"
    ratio = flops.recompute_ratio(recompute)
    mfu, used, layout = _mfu_and_layout(spec, acc, precision, peak, flops, memory, ratio)
    price = spanning(acc.price(spec.usd_per_gpu_hour, kind=spec.price_kind,
                               gpu_count=spec.gpu_count),
                     spec.gpu_count, memory.tp if memory is not None else spec.tp or 1)
    band = cost_band(flops.per_token * spec.tokens, spec.gpu_count, peak, mfu, used.range,
                     price.usd_per_gpu_hour, spec.failure_budget)
    point, fast, slow = band
    model, arch = spec.model, spec.model.architecture
    return RunEstimate(
        **point.model_dump(), **band_ranges(band),
        params=model.total, active_params=_active(spec), tokens=spec.tokens,
        trainable_params=model.trainable if model.trainable < model.total else None,
        kind=spec.resolved_kind, accelerator=acc.name, accelerator_key=acc.key,
        device_unit=acc.device_unit, precision=precision, precision_inferred=spec.precision is None,
        peak_origin="user" if spec.peak_tflops is not None else "catalog",
        peak_source=None if spec.peak_tflops is not None else acc.spec_source,
        peak_label=(None if spec.peak_tflops is not None
                    else f"{source_label(acc.spec_source)}, {acc.spec_as_of}"),
        catalog_compiled=load_catalog().compiled, mfu_used=used, price=price,
        seq_len=spec.resolved_seq_len, seq_len_inferred=spec.seq_len is None,
        native_context=arch.max_positions if arch is not None else None,
        flops_per_token=flops.per_token, flops_method=flops.method, flop_counts=flops.counts,
        flops_breakdown=flops.breakdown, param_breakdown=model.counts,
        frozen_flops_saved_per_token=FROZEN_SAVING_PER_PARAM * flops.frozen,
        recompute=recompute, recompute_slowdown=ratio, layout_cost=layout,
        without_offload=_without_offload(spec, memory, flops.per_token * spec.tokens, peak, mfu,
                                         layout),
        hardware_flops=flops.per_token * ratio * spec.tokens,
        hardware_flops_per_token=flops.per_token * ratio, hfu=mfu * ratio,
        tokens_per_second_per_gpu=spec.tokens / point.wall_seconds / spec.gpu_count,
        architecture_name=arch.name if arch is not None else None,
        architecture_source=arch.source if arch is not None else None,
        defaults_used=run_defaults(spec, used, price),
        config_notes=arch.defaults_used if arch is not None else (),
        memory=memory, feasibility=_feasibility(memory, point.wall_days),
        max_plan_days=MAX_PLAN_DAYS,
        wall_days_at_min_gpu_count=(
            point.gpu_hours / memory.min_gpu_count / HOURS_PER_DAY
            if memory is not None and memory.fits is False and memory.min_gpu_count else None),
        warnings=estimate_warnings(spec, acc, precision) + batch_warnings(spec, layout),
        energy=energy_of(TimedRun(acc, spec.gpu_count, point.wall_hours,
                                (fast.wall_hours, slow.wall_hours)),
                         board_power_w=spec.board_power_w, pue=spec.pue,
                         grid_kg_co2_per_kwh=spec.grid_kg_co2_per_kwh),
    )


def _mfu_and_layout(spec: RunSpec, acc: Accelerator, precision: Precision, peak: float,
                    flops: TokenFlops, memory: MemoryEstimate | None, ratio: float
                    ) -> tuple[float, MfuUsed, LayoutCost | None]:
    """Steps 2 and 3: the layout's cost and the MFU it leaves. A probe measured one device
    with its recomputation: every model-parallel cost is charged, the recomputation is not."""
    probed = spec.probe is not None
    in_prior = 1.0 if memory is None or probed else model_parallel_at_scale(spec)
    other = 1.0 if memory is None else memory.layout.slowdown.charged(in_prior)
    mfu, used = mfu_used(spec, acc, precision, peak, flops, ratio, other)
    layout = layout_cost(spec, memory, 1.0 if probed else ratio,
                         flops.per_token / (peak * 1e12 * mfu), in_prior)
    return (*_with_offload(mfu, used, layout), layout)


def _with_offload(mfu: float, used: MfuUsed, layout: LayoutCost | None) -> tuple[float, MfuUsed]:
    """A prior MFU divided by the offload factor, its band by the factor's range."""
    if layout is None or layout.offload is None or layout.offload_range is None \
            or not layout.applied:
        return mfu, used
    fast, slow = layout.offload_range
    low, high = used.range
    return mfu / layout.offload, used.model_copy(update={"range": (low / slow, high / fast)})


def _active(spec: RunSpec) -> float | None:
    """Active parameters: the config's when fewer than the total, else the user's."""
    counts = spec.model.counts
    if counts is None:
        return spec.active_params
    return float(counts.active) if counts.active < counts.total else None
