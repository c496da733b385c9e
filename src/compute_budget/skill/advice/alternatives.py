"""Cheaper alternatives to a run, each with its own full estimate (step 5 of the procedure).

Which alternatives make sense depends on the kind of run (``spec.resolved_kind``)::

    pretrain             smaller_scale, shorter_run, distillation (only from a larger model
                         that exists), other_hardware, different_idea
    continued-pretrain   fewer_tokens, lora (unless the run is LoRA already), smaller_base
    fine-tune            (only where the family has a smaller model), other_hardware,
                         different_idea; nothing from scratch
    ablation             smaller_scale, more_seeds, other_hardware, different_idea

and every kind ``fill_machine`` (before ``other_hardware``) where it applies.

The kinds:

- ``smaller_scale``: half the parameters on half the tokens from scratch, so the same tokens per
  parameter at a quarter of the FLOPs; the gap being tested is usually visible at that scale.
- ``shorter_run``: the same model on 30% of the tokens first (30B before 100B), estimated as
  that run is (its memory check finds the original's layout and pays its cost), so the row
  equals ``estimate_run`` of the spec on those tokens; likewise ``fewer_tokens``.
- ``fewer_tokens``: a run that starts from a model trains on 30% of its tokens first, and stops
  unless the eval metric has moved by at least 30% of the predicted gain by then
  (:func:`.kill_criteria.trial_gain`, the verdict's own trial: by any movement at all for a
  predicted gain ≤ 0). Learning curves flatten (the gain is concave in the tokens), so a run
  that will reach its gain has made at least that share of it by that share of its tokens.
- ``lora``: LoRA of rank 16 on every linear layer of the decoder instead of a full fine-tune
  (the rank the layout search suggests; the rank matters little once every layer is adapted,
  Dettmers et al. 2023, "QLoRA", Sec. 4), or QLoRA (the frozen base in 4 bits) when 16-bit LoRA
  does not fit. Its own estimate carries the memory it needs.
- ``smaller_base``: the same tokens from the next smaller model of the same family
  (:mod:`.families`); only when the model is known by preset or checkpoint name.
- ``distillation``: train the same model from an existing larger teacher on a tenth of the
  tokens. Per token this costs the student's FLOPs plus the teacher's forward pass,
  2 FLOPs per active teacher parameter, all at the original's layout cost (the student's
  memory check; the teacher's weights and layout are not modelled). The teacher is
  ``teacher_params`` when given, else the next larger model of the same family; with neither
  there is no row. A tenth is conservative against Muralidharan et al. 2024 ("Compact Language
  Models via Pruning and Knowledge Distillation", Minitron), who used up to 40x fewer tokens
  than training from scratch.
- ``more_seeds``: an ablation measures a difference with run-to-run noise σ; the mean of k
  runs has σ/√k. k is the fewest runs with σ/√k < gain, the verdict's test that a gain clears
  its uncertainty: k = ⌊(σ / gain)²⌋ + 1. Without the gain and σ, k = 4 (it halves σ). Priced
  as k runs of the ablation; when σ is evaluation noise, k times the eval examples does the
  same at no training cost.
- ``other_hardware``: the same FLOPs on the catalog's cheapest device and the fastest one that
  costs no more, each priced at its on-demand quote (one kind of price: devices without one are
  left out), at its own MFU prior (or the user's MFU carried over). A device whose prior is
  borrowed from another generation is uncalibrated: its saving range reaches down to no saving.
- ``fill_machine`` (any kind of run): where the price rents more devices than the run uses
  (2 T4 in a g4dn.12xlarge of 4, 4 MI300X in a droplet of 8), the same run on all of them,
  estimated at that count (its own MFU prior, layout and memory check); offered only when it
  fits and costs less, or no more and finishes sooner: the machine-hours are paid anyway.
- ``different_idea``: the opportunity cost: what the same money buys elsewhere.

Alternatives that cannot run say so: ``feasibility`` is each row's own memory check, or the
original's for the same model on the same devices.
"""

from __future__ import annotations

from pydantic import ConfigDict

from ..errors import InputError
from ..estimate import estimate_run
from ..estimate_result import RunEstimate
from ..model.fields import ModelParamCount
from ..model.presets import PRESETS
from ..quantities import Gain, Uncertainty, validated
from ..run_spec import RunSpec
from ..vocabulary import RunKind, starts_from_a_model
from .alternative_models import (
    DISTILL_TOKEN_FRACTION,
    SHORTER_RUN_FRACTION,
    Alternative,
    AlternativesOptions,
    AlternativesReport,
    DistillationDetail,
    FewerTokensDetail,
    ShorterRunDetail,
    TokenShare,
)
from .alternative_rows import (
    different_idea_row,
    fill_machine_row,
    from_estimate,
    hardware_rows,
    lora_row,
    measured_as_mfu,
    more_seeds_row,
    same_model,
    smaller_base_row,
    teacher_of,
)
from .kill_criteria import trial_gain

__all__ = ["SMALLER_SCALE_FACTOR", "AlternativesSpec", "alternatives_for",
           "suggest_alternatives"]

SMALLER_SCALE_FACTOR = 4.0
"""FLOPs divisor of the smaller-scale run: params / 2 and tokens / 2."""
TEACHER_FORWARD_FLOPS_PER_PARAM = 2.0
"""A forward pass costs 2 FLOPs per parameter per token (Kaplan et al. 2020)."""


class AlternativesSpec(RunSpec, AlternativesOptions):
    """A run and the knobs of its alternatives: what ``alternatives`` and
    ``suggest_alternatives`` take."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def alternatives_for(spec: AlternativesSpec) -> AlternativesReport:
    """:func:`suggest_alternatives` of a spec that carries its options."""
    options = {name: getattr(spec, name) for name in AlternativesOptions.model_fields}
    return suggest_alternatives(spec, **options)


@validated
def suggest_alternatives(
    spec: RunSpec,
    *,
    teacher_params: ModelParamCount | None = None,
    distill_token_fraction: TokenShare = DISTILL_TOKEN_FRACTION,
    shorter_run_fraction: TokenShare = SHORTER_RUN_FRACTION,
    predicted_gain: Gain | None = None,
    gain_uncertainty: Uncertainty | None = None,
) -> AlternativesReport:
    """The original estimate and the alternatives that fit its kind, each fully estimated.

    ``teacher_params`` is the size of an existing model to distil from (pre-training every
    weight only: refused for another kind, which gets no distillation row; default: the next
    larger model of the same family, else no distillation). The fractions are
    the shares of the original tokens the runs train on. ``predicted_gain`` and
    ``gain_uncertainty`` (the user's metric, 1σ) set the fewer-tokens stop rule and the seeds an
    ablation needs.
    """
    kind = spec.resolved_kind
    _check_teacher(spec, teacher_params)
    original = estimate_run(spec)
    # The smaller-scale run keeps the original's recomputation (and so its hardware FLOPs per
    # model FLOP), so that its saving compares like with like.
    derived = spec.model_copy(update={"recompute": original.recompute})
    # The same model on the same devices, on fewer tokens: its own memory-checked estimate, so
    # the same layout and its cost (recomputation, TP, PP, ZeRO-3, offload) as the original, and
    # the numbers ``estimate_run`` gives for those tokens.
    shorter = estimate_run(spec.model_copy(update={"tokens": spec.tokens * shorter_run_fraction}))
    if starts_from_a_model(kind):
        reference = from_estimate(
            "fewer_tokens", kind, shorter, original, feasibility=same_model(shorter, original),
            detail=FewerTokensDetail(
                token_fraction=shorter_run_fraction, predicted_gain=predicted_gain,
                gain_uncertainty=gain_uncertainty,
                stop_if_gain_below=(None if predicted_gain is None
                                    else trial_gain(predicted_gain, shorter_run_fraction))))
        rows = [reference, *(row for row in (lora_row(spec, original),
                                             smaller_base_row(spec, original))
                             if row is not None)]
    else:
        reference = _smaller_scale(spec, derived, original, kind)
        rows = [reference]
        if kind == "ablation":
            rows.append(more_seeds_row(original, predicted_gain, gain_uncertainty))
        else:
            rows.append(from_estimate(
                "shorter_run", kind, shorter, original, feasibility=same_model(shorter, original),
                detail=ShorterRunDetail(token_fraction=shorter_run_fraction)))
            distilled = _distillation(spec, original, teacher_params, distill_token_fraction)
            if distilled is not None:
                rows.append(distilled)
    filled = fill_machine_row(spec, original)
    rows.extend([] if filled is None else [filled])
    rows.extend(hardware_rows(spec, original))
    rows.append(different_idea_row(original, reference))
    return AlternativesReport(kind=kind, original=original, alternatives=rows)


def _check_teacher(spec: RunSpec, teacher_params: float | None) -> None:
    """A teacher only where a distillation row can be: pre-training every weight."""
    if teacher_params is None:
        return
    if spec.resolved_kind != "pretrain":
        raise InputError("teacher_params", teacher_params,
                         f"only with kind pretrain (distillation trains a model anew), not "
                         f"{spec.resolved_kind}; leave it out")
    if spec.trainable_params is not None:
        raise InputError("teacher_params", teacher_params,
                         "only for a run that trains every weight, not with trainable_params "
                         "(distilling into a model trains all of it); leave one out")


def _smaller_scale(spec: RunSpec, derived: RunSpec, original: RunEstimate,
                   kind: RunKind) -> Alternative:
    """Half the model on half the tokens. With an architecture, its per-token FLOPs are scaled
    with the parameters (the attention term only approximately)."""
    half = SMALLER_SCALE_FACTOR ** 0.5
    smaller = estimate_run(derived.model_copy(update={
        "config": None, "model_id": None, "preset": None,
        "params": original.params / half,
        "active_params": (None if original.active_params is None
                          else original.active_params / half),
        "trainable_params": (None if spec.trainable_params is None
                             else spec.trainable_params / half),
        "tokens": spec.tokens / half, **measured_as_mfu(spec, original),
    }), flops_per_token=original.flops_per_token / half, flops_method="scaled", in_time=False)
    return from_estimate("smaller_scale", kind, smaller, original)


def _distillation(spec: RunSpec, original: RunEstimate, teacher_params: float | None,
                  fraction: float) -> Alternative | None:
    """The same model from a larger teacher on a share of the tokens, when a teacher is known;
    distilling into a model means training all of it, so never instead of an adapter.

    The student's memory check sets the layout, so the run pays the original's layout cost
    (its recomputation, TP, PP, ZeRO-3 and offload divide the MFU of every FLOP, the teacher's
    forward included). Not modelled: the teacher's weights in memory and its own layout."""
    found = teacher_of(spec, teacher_params)
    if found is None or spec.trainable_params is not None:
        return None
    total, active, preset = found
    distilled = estimate_run(
        spec.model_copy(update={"tokens": spec.tokens * fraction}),
        flops_per_token=original.flops_per_token + TEACHER_FORWARD_FLOPS_PER_PARAM * active,
        flops_method="distillation")
    return from_estimate(
        "distillation", spec.resolved_kind, distilled, original,
        feasibility=same_model(distilled, original),
        detail=DistillationDetail(
            token_fraction=fraction, teacher_params=total, teacher_active_params=active,
            teacher_preset=preset, teacher_name=None if preset is None else PRESETS[preset].name))
