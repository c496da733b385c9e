"""Step 3's predicted gain, asked of data instead of a hunch: the inputs of the ``fit`` command
and the ``fit_scaling_law`` tool, and the one call both make.

The ``optimal`` command and the ``compute_optimal`` tool split a budget, and place the run the
user proposes: by its parameter count, or a mixture of experts by its active parameters (given,
or counted from a config or preset), which its compute 6·N_active·D and the fits use
(:mod:`~compute_budget.skill.scaling.published`).

With small-run points, :func:`~compute_budget.skill.scaling.fit.fit_scaling_law` fits them and
predicts the target with an interval (and, with the current model's loss, the gain and its 1σ
for the verdict). With no points, the published Chinchilla fits of
:mod:`~compute_budget.skill.scaling.published` give a clearly labelled fallback for language models:
the target run's loss under each fit and, with a baseline run's size, the gain it predicts.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..errors import InputError, shown_value
from ..model.fields import ModelParamCount
from ..model.param_count import counts_of
from ..model.source import ModelSource, differs
from ..quantities import FlopCount, Gain, NotBool, ParamCount, TokenCount
from ..vocabulary import flops_6nd, flops_agree
from .points import MAX_POINTS, ScalingPoint, check_target
from .published import OptimalSplit, PublishedPrediction, compute_optimal, published_prediction
from .result import LEVEL_RANGE, ScalingFit

__all__ = ["FitSpec", "OptimalSpec", "optimal", "predict"]

Level = Annotated[float, Field(ge=LEVEL_RANGE[0], le=LEVEL_RANGE[1], allow_inf_nan=False),
                  NotBool]
"""The probability an interval covers, from 0.5 to 0.99 (both included)."""


class FitSpec(BaseModel):
    """Small-run points and the run to predict, or the run alone (the published fallback)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    points: list[ScalingPoint] | None = Field(
        default=None, max_length=MAX_POINTS,
        description="Small runs: {compute, loss} or {params, tokens, loss} each. Compute = "
                    "6·params·tokens when absent; at least 4 (6 when params and tokens both "
                    "vary). Without points: the published Chinchilla fits, for language models.")
    target_compute: FlopCount | None = Field(
        default=None, description="FLOPs of the run to predict.")
    target_params: ParamCount | None = Field(
        default=None, description="Parameters of the run to predict.")
    target_tokens: TokenCount | None = Field(
        default=None, description="Tokens of the run to predict.")
    baseline_loss: Gain | None = Field(
        default=None,
        description="The current model's loss (or metric). The prediction's gain over it, "
                    "with its 1σ, feeds the verdict.")
    baseline_params: ParamCount | None = Field(
        default=None,
        description="Without points: the current model's size, for the published "
                    "fits' gain (with baseline_tokens).")
    baseline_tokens: TokenCount | None = Field(
        default=None, description="Without points: the current model's tokens.")
    higher_is_better: bool = Field(
        default=False,
        description="True for a metric that rises with compute (accuracy); default a loss.")
    level: Level = Field(default=0.8,
                         description="Interval probability, 0.5 to 0.99.")

    @model_validator(mode="after")
    def _a_target(self) -> FitSpec:
        has_size = self.target_params is not None or self.target_tokens is not None
        if self.target_compute is None and not has_size:
            raise InputError("target_compute", None,
                             "the run to predict: target_compute, or target_params and "
                             "target_tokens")
        if self.points is None:
            if self.target_params is None or self.target_tokens is None:
                missing = "target_tokens" if self.target_params is not None else "target_params"
                raise InputError(missing, None,
                                 "without points, the published fits need the run's "
                                 "target_params and target_tokens")
            if self.baseline_loss is not None:
                raise InputError("baseline_loss", self.baseline_loss,
                                 "only with points: a loss measured on your data cannot be "
                                 "compared with the published fits' (give baseline_params and "
                                 "baseline_tokens instead)")
        elif self.baseline_params is not None or self.baseline_tokens is not None:
            field = "baseline_params" if self.baseline_params is not None else "baseline_tokens"
            raise InputError(field, getattr(self, field),
                             "only without points (with points, give baseline_loss)")
        check_target(self.target_compute, self.target_params, self.target_tokens)
        return self


def predict(spec: FitSpec, *, seed: int = 0) -> ScalingFit | PublishedPrediction:
    """The fit of ``spec.points`` at the target, or without points the published fits'
    prediction (module docstring)."""
    if spec.points is None:
        assert spec.target_params is not None and spec.target_tokens is not None
        return published_prediction(spec.target_params, spec.target_tokens,
                                    baseline_params=spec.baseline_params,
                                    baseline_tokens=spec.baseline_tokens)
    from .fit import fit_scaling_law

    return fit_scaling_law(spec.points, target_compute=spec.target_compute,
                           target_params=spec.target_params, target_tokens=spec.target_tokens,
                           baseline_loss=spec.baseline_loss,
                           higher_is_better=spec.higher_is_better, level=spec.level, seed=seed)


class OptimalSpec(ModelSource):
    """A compute budget to split, and optionally the run the user proposes for it (alone, the
    proposed run's 6·N·D, with N its active parameters for a mixture of experts, is the
    budget). The run's model: its params (and active_params), or a config or preset."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    flops: FlopCount | None = Field(
        default=None,
        description="Compute budget in FLOPs, e.g. '1e23'. Default: 6·params·tokens.")
    params: ModelParamCount | None = Field(
        default=None, description="The proposed run's parameters. With tokens; for a mixture of "
                                  "experts all of them.")
    active_params: ModelParamCount | None = Field(
        default=None,
        description="For a mixture of experts: its parameters active per token, at most "
                    "params. The run's FLOPs are 6 × active parameters × tokens and it is "
                    "placed by them.")
    tokens: TokenCount | None = Field(
        default=None, description="The proposed run's tokens.")

    @model_validator(mode="after")
    def _consistent(self) -> OptimalSpec:
        self._check_model()
        has_model = self.params is not None or self.architecture is not None
        if has_model != (self.tokens is not None):
            missing = "tokens" if has_model else "params"
            raise InputError(missing, None, "the proposed run: its model (params, or a config "
                                            "or preset) and tokens together")
        if self.tokens is None:
            if self.flops is None:
                raise InputError("flops", None, "a compute budget, or params and tokens")
            return self
        implied = flops_6nd(self.active, self.tokens)
        if self.flops is not None and not flops_agree(self.flops, self.active, self.tokens):
            n = "active_params" if self.active < self.total else "params"
            raise InputError("tokens", self.tokens,
                             f"with {n}, a run of 6 × {n.replace('_', ' ')} × tokens = flops "
                             f"({implied:.3g} is not {self.flops:.3g}); give flops alone, or "
                             "the model and tokens alone")
        return self

    def _check_model(self) -> None:
        arch = self.architecture
        if arch is not None:  # strict, unlike a run's 25%: the split is placed by this count
            counts = counts_of(arch)
            for name, given, counted in (("params", self.params, counts.total),
                                         ("active_params", self.active_params, counts.active)):
                if differs(given, counted):
                    raise InputError(name, given, f"{shown_value(float(f'{counted:.4g}'))}, "
                                                  "as the config or preset counts (or leave it "
                                                  "out)")
            return
        if self.active_params is None:
            return
        if self.params is None:
            raise InputError("params", None, "the total parameters, with active_params")
        if self.active_params > self.params:
            raise InputError("active_params", self.active_params,
                             f"at most params ({self.params:.4g})")

    @property
    def total(self) -> float:
        """All parameters of the proposed run's model (0 without one)."""
        arch = self.architecture
        return float(counts_of(arch).total) if arch is not None else float(self.params or 0)

    @property
    def active(self) -> float:
        """Its parameters active per token: the total for a dense model."""
        arch = self.architecture
        if arch is not None:
            return float(counts_of(arch).active)
        return float(self.active_params) if self.active_params is not None else self.total


def optimal(spec: OptimalSpec) -> OptimalSplit:
    """The compute-optimal split of the budget and where the proposed run sits (a mixture of
    experts by its active parameters)."""
    if spec.tokens is None:
        assert spec.flops is not None
        return compute_optimal(spec.flops)
    active, total = spec.active, spec.total
    flops = spec.flops if spec.flops is not None else flops_6nd(active, spec.tokens)
    return compute_optimal(flops, proposed_params=active, proposed_tokens=spec.tokens,
                           total_params=total if total > active else None)
