"""What an estimate says about its own inputs: the warnings (inputs that look like mistakes) and
the defaults it filled in, each as a code with its numbers (the reply words them)."""

from __future__ import annotations

import math

from .estimate_result import EstimateWarning, LayoutCost, MfuUsed
from .hardware.catalog import Accelerator, Precision, PriceUsed
from .hardware.energy import load_energy_defaults
from .hardware.mfu_table import load_mfu_priors
from .model.source import differs
from .quantities import MAX_FLOPS, MIN_FLOPS
from .run_spec import RunSpec
from .scaling.batch import batch_of
from .vocabulary import COMPUTE_OPTIMAL_RATIO, FLOPS_PER_PARAM_PER_TOKEN, DefaultUsed, flops_6nd

__all__ = ["MFU_SUSPICIOUSLY_HIGH", "UNDER_TRAINED_WARNING", "batch_warnings", "estimate_warnings",
           "run_defaults"]

MFU_SUSPICIOUSLY_HIGH = 0.75
"""Above this MFU, warn: the published end-to-end runs stay below it (the warning quotes the
range those on the device's generation reached, from the calibration table)."""
UNDER_TRAINED_WARNING = 0.5
"""Warn below this share of the compute-optimal tokens per parameter (10 of 20)."""
BATCH_OVER_OPTIMAL = 2.0
"""Warn when a count's smallest global batch is more than this many times the compute-optimal
batch (Bi et al. 2024): well past the flat part of the optimum."""
SPARSE_FACTOR = 2.0
"""NVIDIA's sparse datasheet figure is twice the dense one (2:4 structured sparsity)."""


def estimate_warnings(spec: RunSpec, acc: Accelerator,
                      precision: Precision) -> list[EstimateWarning]:
    """Every warning of the estimate, in order."""
    return (_mfu_warnings(spec, acc) + _peak_warnings(spec, acc, precision)
            + _price_warnings(spec, acc) + _count_warnings(spec) + _family_warnings(spec)
            + _training_warnings(spec, spec.model.total))


def batch_warnings(spec: RunSpec, layout: LayoutCost | None) -> list[EstimateWarning]:
    """The smallest global batch the count allows (one micro-batch per data-parallel rank)
    above :data:`BATCH_OVER_OPTIMAL` times the compute-optimal batch, unless the user set the
    batch: past it extra devices buy little (a plan caps its counts there), so the time of a
    count that needs it is optimistic."""
    if layout is None or spec.batch_tokens is not None or layout.smallest_batch_tokens is None:
        return []
    optimal = batch_of(FLOPS_PER_PARAM_PER_TOKEN * spec.model.active * spec.tokens)
    if layout.smallest_batch_tokens <= BATCH_OVER_OPTIMAL * optimal:
        return []
    return [EstimateWarning(code="batch_above_optimal", numbers={
        "smallest": layout.smallest_batch_tokens, "optimal": optimal,
        "ratio": layout.smallest_batch_tokens / optimal})]


def _price_warnings(spec: RunSpec, acc: Accelerator) -> list[EstimateWarning]:
    """A reserved or spot quote above the default on-demand one (they come from different
    sellers and dates): a committed price that costs more reads like a mistake."""
    if spec.price_kind in (None, "on-demand") or spec.usd_per_gpu_hour is not None:
        return []
    chosen = acc.price(None, kind=spec.price_kind, gpu_count=spec.gpu_count)
    default = acc.price(None, gpu_count=spec.gpu_count)
    if (chosen.usd_per_gpu_hour is None or default.usd_per_gpu_hour is None
            or chosen.usd_per_gpu_hour <= default.usd_per_gpu_hour):
        return []
    return [EstimateWarning(code="price_kind_above_on_demand", numbers={
        "kind": spec.price_kind, "usd": chosen.usd_per_gpu_hour, "label": chosen.label,
        "as_of": chosen.as_of, "on_demand": default.usd_per_gpu_hour,
        "on_demand_label": default.label, "on_demand_as_of": default.as_of})]


def _peak_warnings(spec: RunSpec, acc: Accelerator,
                   precision: Precision) -> list[EstimateWarning]:
    if spec.peak_tflops is None:
        return []
    dense = acc.peak_tflops.get(precision)
    if dense is None:
        return []
    numbers: dict[str, float | str | None] = {"given": spec.peak_tflops, "dense": dense,
                                              "precision": precision, "device": acc.name}
    if math.isclose(spec.peak_tflops, SPARSE_FACTOR * dense, rel_tol=0.02):
        return [EstimateWarning(code="sparse_peak", numbers=numbers)]
    if spec.peak_tflops > dense * 1.05:
        return [EstimateWarning(code="peak_above_catalog", numbers=numbers)]
    return []


def _mfu_warnings(spec: RunSpec, acc: Accelerator) -> list[EstimateWarning]:
    """An MFU near the peak, with what the published runs on this generation reached."""
    mfu = spec.mfu
    if mfu is None or mfu < MFU_SUSPICIOUSLY_HIGH:
        return []
    seen = load_mfu_priors().observed(acc.generation,
                                      "moe" if spec.resolved_family == "moe" else "dense")
    numbers: dict[str, float | str | None] = {"mfu": mfu}
    if seen is not None:
        numbers |= {"n_runs": seen.n_runs, "spread": seen.spread, "label": seen.label,
                    "family": seen.family, "low": seen.low, "high": seen.high,
                    "highest": seen.highest, "optimism_low": mfu / seen.high,
                    "optimism_high": mfu / seen.low}
    return [EstimateWarning(code="mfu_near_peak", numbers=numbers)]


def _count_warnings(spec: RunSpec) -> list[EstimateWarning]:
    counts = spec.model.counts
    if counts is None:
        return []
    notes = []
    if differs(spec.params, counts.total):
        notes.append(EstimateWarning(code="params_differ",
                                     numbers={"given": spec.params, "exact": counts.total}))
    if differs(spec.active_params, counts.active):
        notes.append(EstimateWarning(code="active_params_differ",
                                     numbers={"given": spec.active_params,
                                              "exact": counts.active}))
    return notes


def _training_warnings(spec: RunSpec, params: float) -> list[EstimateWarning]:
    """A dense model pre-trained from scratch on less than half the tokens per parameter of
    the compute-optimal split: at the same compute a smaller model on more tokens reaches a
    clearly lower loss (closer to 20, the loss cost is a few thousandths of a nat, not worth
    a warning)."""
    if (spec.resolved_kind != "pretrain" or spec.resolved_family != "dense"
            or spec.model.trainable < spec.model.total
            or spec.tokens / params >= UNDER_TRAINED_WARNING * COMPUTE_OPTIMAL_RATIO):
        return []
    flops = flops_6nd(params, spec.tokens)
    if not MIN_FLOPS <= flops <= MAX_FLOPS:  # no budget the published fits speak of
        return []
    from .scaling.published import split_of  # only here: it brings the published fits

    split = split_of(flops, (params, spec.tokens))
    if split.proposed is None or split.proposed.placement != "under_trained":
        return []
    return [EstimateWarning(code="under_trained", numbers={
        "tokens_per_param": split.proposed.tokens_per_param, "optimal": split.rule_ratio,
        "optimal_params": split.params, "optimal_tokens": split.tokens,
        "kind": "given" if spec.kind is not None else "default"})]


def _family_warnings(spec: RunSpec) -> list[EstimateWarning]:
    if spec.family == "moe" and spec.architecture is None and spec.active_params is None:
        return [EstimateWarning(code="moe_without_active_params")]
    return []


def run_defaults(spec: RunSpec, mfu: MfuUsed, price: PriceUsed) -> list[DefaultUsed]:
    """Every input the estimate filled in itself, with its basis as a code: prior, convention
    (the 6n default), catalog, unknown (no price), device_default, default (a documented
    default), run_default (the stack for this run), searched (the layout knobs left open) or
    not_searched (expert parallelism of a mixture of experts on the hf stack: 1)."""
    energy = load_energy_defaults()
    candidates: list[tuple[bool, str, float | str | None, str]] = [
        (mfu.origin == "prior", "mfu", mfu.prior.central, "prior"),
        (mfu.origin in ("user", "achieved") and spec.mfu_convention is None, "mfu_convention",
         "6n", "default"),
        (spec.usd_per_gpu_hour is None, "usd_per_gpu_hour", price.usd_per_gpu_hour,
         "catalog" if price.origin == "catalog" else "unknown"),
        (spec.precision is None, "precision", spec.resolved_precision, "device_default"),
        (spec.seq_len is None, "seq_len", spec.resolved_seq_len, "default"),
        ("failure_budget" not in spec.model_fields_set, "failure_budget", spec.failure_budget,
         "default"),
        (spec.kind is None, "kind", spec.resolved_kind, "default"),
        (spec.stack is None, "stack", spec.resolved_stack, "run_default"),
        (spec.pue is None, "pue", energy.pue.value, "default"),
        (spec.grid_kg_co2_per_kwh is None, "grid_kg_co2_per_kwh",
         energy.grid_kg_co2_per_kwh.value, "default"),
    ]
    out = [DefaultUsed(field=field, value=value, basis=basis)
           for applies, field, value, basis in candidates if applies]
    moe = spec.model.shape.experts > 0 and spec.ep is None
    searched_ep = moe and spec.resolved_stack != "hf"
    open_knobs = [k for k in ("zero", "tp", "pp", "ep", "recompute", "offload")
                  if getattr(spec, k) is None and (k != "ep" or searched_ep)]
    if open_knobs:
        out.append(DefaultUsed(field="/".join(open_knobs), value=None, basis="searched"))
    if moe and not searched_ep:
        out.append(DefaultUsed(field="ep", value=1, basis="not_searched"))
    return out
