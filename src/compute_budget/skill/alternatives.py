"""Cheaper alternatives to a run, each with its own full estimate (step 5 of the procedure).

The kinds, after the stage-3 compute-budget skill:

- ``smaller_scale``: half the parameters on half the tokens, so the same tokens per parameter at
  a quarter of the FLOPs; the gap being tested is usually visible at that scale.
- ``shorter_run``: the same model on 30% of the tokens first (30B before 100B).
- ``distillation``: train the same model from an existing larger teacher on a tenth of the
  tokens. Per token this costs the student's 6·N plus the teacher's forward pass 2·N_teacher.
  A tenth is conservative against Muralidharan et al. 2024 ("Compact Language Models via Pruning
  and Knowledge Distillation", Minitron), who used up to 40x fewer tokens than training from
  scratch.
- ``other_hardware``: the same FLOPs on the catalog's cheapest and fastest devices that have a
  price, at the same MFU source.
- ``different_idea``: the opportunity cost: what the same money buys elsewhere.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .catalog import list_accelerators
from .errors import InputError
from .estimate import RunEstimate, estimate_run
from .quantities import ParamCount, check_positive
from .run_spec import RunSpec

__all__ = [
    "DISTILL_TOKEN_FRACTION",
    "SHORTER_RUN_FRACTION",
    "SMALLER_SCALE_FACTOR",
    "TEACHER_SIZE_FACTOR",
    "Alternative",
    "AlternativeKind",
    "AlternativesOptions",
    "AlternativesReport",
    "suggest_alternatives",
]

AlternativeKind = Literal[
    "smaller_scale", "shorter_run", "distillation", "other_hardware", "different_idea"
]
SMALLER_SCALE_FACTOR = 4.0
"""FLOPs divisor of the smaller-scale run: params / 2 and tokens / 2."""
SHORTER_RUN_FRACTION = 0.3
"""Share of the tokens the shorter run trains on."""
DISTILL_TOKEN_FRACTION = 0.1
"""Share of the tokens a distillation run needs (conservative against Minitron's 40x)."""
TEACHER_SIZE_FACTOR = 4.0
"""Teacher size as a multiple of the student when the user names no teacher."""
TEACHER_FORWARD_FLOPS_PER_PARAM = 2.0
"""A forward pass costs 2 FLOPs per parameter per token (Kaplan et al. 2020)."""


class Alternative(BaseModel):
    """One cheaper way to get the answer, with its own estimate and its saving."""

    model_config = ConfigDict(frozen=True)

    kind: AlternativeKind
    estimate: RunEstimate | None = Field(description="Full estimate; None for different_idea.")
    params: float | None = Field(description="Parameters of the alternative run.")
    tokens: float | None = Field(description="Training tokens of the alternative run.")
    accelerator: str | None = Field(description="Device of the alternative run.")
    teacher_params: float | None = Field(
        default=None, description="Teacher parameters (distillation only)."
    )
    flops: float | None = Field(description="Model FLOPs of the alternative.")
    wall_days: float | None = Field(description="Wall-clock days.")
    gpu_hours: float | None = Field(description="Device-hours.")
    dollar_cost: float | None = Field(description="US dollars; None when the price is unknown.")
    dollar_cost_with_failures: float | None = Field(description="US dollars × failure budget.")
    saving_usd: float | None = Field(
        description="Original minus alternative cost in US dollars; None when either is unknown."
    )
    cost_ratio: float | None = Field(
        description="Alternative cost / original cost (dollars, or device-hours on the same "
                    "device when prices are unknown); None when not comparable."
    )
    runs_affordable: float | None = Field(
        default=None,
        description="different_idea: how many smaller-scale runs the original budget buys.",
    )


class AlternativesOptions(BaseModel):
    """Optional knobs of the alternatives (defaults documented in the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    teacher_params: ParamCount | None = Field(
        default=None,
        description="Parameters of the existing model to distil from (default: 4x the model).",
    )
    distill_token_fraction: float = Field(
        default=DISTILL_TOKEN_FRACTION, gt=0, le=1,
        description="Share of the original tokens a distillation run trains on, in (0, 1].",
    )
    shorter_run_fraction: float = Field(
        default=SHORTER_RUN_FRACTION, gt=0, le=1,
        description="Share of the original tokens the shorter run trains on, in (0, 1].",
    )


class AlternativesReport(BaseModel):
    """The original estimate and its cheaper alternatives."""

    model_config = ConfigDict(frozen=True)

    original: RunEstimate
    alternatives: list[Alternative]


def _from_estimate(
    kind: AlternativeKind,
    alt: RunEstimate,
    original: RunEstimate,
    teacher_params: float | None = None,
) -> Alternative:
    saving = None
    ratio = None
    if alt.dollar_cost is not None and original.dollar_cost is not None:
        saving = original.dollar_cost - alt.dollar_cost
        ratio = alt.dollar_cost / original.dollar_cost
    elif alt.accelerator_key == original.accelerator_key:
        ratio = alt.gpu_hours / original.gpu_hours
    return Alternative(
        kind=kind,
        estimate=alt,
        params=alt.params,
        tokens=alt.tokens,
        accelerator=alt.accelerator,
        teacher_params=teacher_params,
        flops=alt.flops,
        wall_days=alt.wall_days,
        gpu_hours=alt.gpu_hours,
        dollar_cost=alt.dollar_cost,
        dollar_cost_with_failures=alt.dollar_cost_with_failures,
        saving_usd=saving,
        cost_ratio=ratio,
    )


def _hardware_alternatives(spec: RunSpec, original: RunEstimate) -> list[Alternative]:
    precision = original.precision
    candidates: list[RunEstimate] = []
    for acc in list_accelerators():
        if acc.key == original.accelerator_key or acc.default_price is None:
            continue
        if acc.peak_tflops.get(precision) is None:
            continue
        moved = spec.model_copy(update={
            "gpu": acc.key,
            "usd_per_gpu_hour": None,
            "peak_tflops": None,
            "precision": precision,
            # A throughput measured on one device says nothing absolute about another: carry
            # its MFU over instead, like a user's MFU.
            "achieved_tflops": None,
            "mfu": None if original.mfu_source == "prior" else original.mfu,
        })
        candidate = estimate_run(moved)
        if candidate.feasibility != "does_not_fit":  # it must fit the device at some layout
            candidates.append(candidate)
    if not candidates:
        return []

    def dollars(e: RunEstimate) -> float:
        return e.dollar_cost if e.dollar_cost is not None else float("inf")

    cheapest = min(candidates, key=dollars)
    picked = [cheapest]
    affordable = [e for e in candidates
                  if original.dollar_cost is None or dollars(e) <= original.dollar_cost]
    if affordable:
        fastest = min(affordable, key=lambda e: e.wall_hours)
        if fastest.accelerator_key != cheapest.accelerator_key:
            picked.append(fastest)
    return [_from_estimate("other_hardware", e, original) for e in picked]


def suggest_alternatives(
    spec: RunSpec,
    *,
    teacher_params: float | None = None,
    distill_token_fraction: float = DISTILL_TOKEN_FRACTION,
    shorter_run_fraction: float = SHORTER_RUN_FRACTION,
) -> AlternativesReport:
    """The original estimate and the cheaper alternatives, each fully estimated.

    ``teacher_params`` is the size of the existing model to distil from (default: 4x the
    student). The fractions are the shares of the original tokens each alternative trains on.
    """
    for name, value in (("distill_token_fraction", distill_token_fraction),
                        ("shorter_run_fraction", shorter_run_fraction)):
        if not (isinstance(value, int | float) and 0 < value <= 1):
            raise InputError(name, value, "a fraction in (0, 1]")
    original = estimate_run(spec)
    # The derived runs keep the original's recomputation (and so its hardware FLOPs per model
    # FLOP), so that their savings compare like with like.
    derived = spec.model_copy(update={"recompute": original.recompute})
    half = SMALLER_SCALE_FACTOR ** 0.5
    n_student = spec.compute_params

    # Half the model on half the tokens. With an architecture, its per-token FLOPs are scaled
    # with the parameters (the attention term only approximately).
    smaller = estimate_run(derived.model_copy(update={
        "config": None,
        "preset": None,
        "params": original.params / half,
        "active_params": (None if original.active_params is None
                          else original.active_params / half),
        "trainable_params": (None if spec.trainable_params is None
                             else spec.trainable_params / half),
        "tokens": spec.tokens / half,
    }), flops_per_token=original.flops_per_token / half, flops_method="scaled",
        check_memory=False)
    shorter = estimate_run(
        derived.model_copy(update={"tokens": spec.tokens * shorter_run_fraction}),
        check_memory=False)
    teacher = (check_positive(teacher_params, "teacher_params") if teacher_params is not None
               else TEACHER_SIZE_FACTOR * n_student)
    distilled = estimate_run(
        derived.model_copy(update={"tokens": spec.tokens * distill_token_fraction}),
        flops_per_token=original.flops_per_token + TEACHER_FORWARD_FLOPS_PER_PARAM * teacher,
        flops_method="distillation",
        check_memory=False,
    )
    alternatives = [
        _from_estimate("smaller_scale", smaller, original),
        _from_estimate("shorter_run", shorter, original),
        # Distilling into a model means training all of it: no alternative to an adapter.
        *([] if spec.trainable_params is not None else
          [_from_estimate("distillation", distilled, original, teacher_params=teacher)]),
        *_hardware_alternatives(spec, original),
    ]
    budget = original.dollar_cost_with_failures
    smaller_budget = smaller.dollar_cost_with_failures
    alternatives.append(Alternative(
        kind="different_idea",
        estimate=None,
        params=None,
        tokens=None,
        accelerator=None,
        flops=None,
        wall_days=None,
        gpu_hours=None,
        dollar_cost=None,
        dollar_cost_with_failures=None,
        saving_usd=None,
        cost_ratio=None,
        runs_affordable=(original.gpu_hours_with_failures / smaller.gpu_hours_with_failures
                         if budget is None or not smaller_budget else budget / smaller_budget),
    ))
    return AlternativesReport(original=original, alternatives=alternatives)
