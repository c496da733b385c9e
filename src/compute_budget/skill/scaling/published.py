"""Published Chinchilla fits, the fallback prediction without points, and the compute-optimal
split of a budget.

The parametric loss of Hoffmann et al. 2022 ("Training Compute-Optimal Large Language Models",
eq. 2, approach 3)::

    L(N, D) = E + A / N^α + B / D^β
      N   parameters
      D   training tokens
      E   irreducible loss (nats per token on their data)
      A, α  the finite-model term
      B, β  the finite-data term

Minimising it at fixed compute C = 6·N·D gives their eq. 4::

    N_opt = G · (C/6)^(β/(α+β))      D_opt = G⁻¹ · (C/6)^(α/(α+β)) = (C/6) / N_opt
    G     = (α·A / (β·B))^(1/(α+β))

Two fits are published: Hoffmann et al. 2022 (E=1.69, A=406.4, B=410.7, α=0.34, β=0.28) and the
replication by Besiroglu et al. 2024, "Chinchilla Scaling: A replication attempt" (E=1.82,
A=482.01, B=2085.43, α=0.3478, β=0.3658). They hold for their data and setup (language models,
loss in nats per token on their data); every result carries that caveat as codes. The spread
between the two fits is not a statistical interval, and results say so.

The rule of thumb is 20 tokens per parameter (Hoffmann et al. 2022): N = sqrt(C/120), D = 20·N.
A proposed run is placed against it by its tokens per parameter r (ratio to 20 = r/20)::

    under_trained   r/20 < 0.75  (fewer than 15 tokens per parameter)
    near_optimal    0.75 ≤ r/20 ≤ 2
    over_trained    r/20 > 2     (more than 40 tokens per parameter)

The published optima lie at or above about 20 tokens per parameter for today's budgets
(Besiroglu ≈ 17-25, Hoffmann's eq. 4 with their rounded parameters higher still), so below 15 a
run is short of data for its size under every estimate (7B on 100B tokens, 14 per parameter, is
under-trained). Over-training is often deliberate, to make a smaller model that is cheaper to
serve; it comes with a separate note, not as a judgement.

A mixture of experts is placed by its active parameters N_act (its compute is 6·N_act·D), the
dense fits applied to N_act as an approximation (note ``moe_dense_law_on_active_params``): no
published MoE law gives a compute-optimal token ratio at today's sizes. Clark et al. 2022
("Unified Scaling Laws for Routed Language Models") fit parameters and expert count, not tokens;
Krajewski et al. 2024 ("Scaling Laws for Fine-Grained Mixture of Experts") and Ludziejewski et
al. 2025 ("Joint MoE Scaling Laws", up to 2.7B active, 5B total parameters) add tokens with the
granularity or expert count, on far smaller models. 30B total, 3B active on 2T tokens: 3.6e22.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError
from ..quantities import FlopCount, ParamCount, TokenCount, validated
from ..vocabulary import COMPUTE_OPTIMAL_RATIO, FLOPS_PER_PARAM_PER_TOKEN, FiniteResult, flops_6nd
from .lesson import split_budget
from .result import ScalingFit

__all__ = [
    "BESIROGLU_2024",
    "HOFFMANN_2022",
    "OVER_TRAINED_ABOVE",
    "PUBLISHED_FITS",
    "UNDER_TRAINED_BELOW",
    "FitOptimum",
    "OptimalNote",
    "OptimalSplit",
    "ProposedSplit",
    "PublishedFit",
    "PublishedFitPrediction",
    "PublishedPrediction",
    "compute_optimal",
    "optimal_split",
    "published_loss",
    "published_prediction",
    "split_of",
]

FitKey = Literal["hoffmann2022", "besiroglu2024"]
Caveat = Literal["their_data_and_setup", "language_models", "loss_nats_per_token_their_data"]
Placement = Literal["under_trained", "near_optimal", "over_trained"]
PlacementNote = Literal["over_training_can_be_deliberate"]
OptimalNote = Literal["moe_dense_law_on_active_params"]
"""moe_dense_law_on_active_params: a mixture of experts, placed and split by its active
parameters under the dense fits, an approximation (module docstring)."""
Range = tuple[float, float]

UNDER_TRAINED_BELOW = 0.75
"""Tokens per parameter below this share of 20 (15) place a run as under-trained."""
OVER_TRAINED_ABOVE = 2.0
"""Tokens per parameter above this multiple of 20 (40) place a run as over-trained."""
CONSISTENCY = 0.01
"""6·N·D and a given compute may differ by this share at most."""
_CAVEATS: tuple[Caveat, ...] = ("their_data_and_setup", "language_models",
                                "loss_nats_per_token_their_data")


class PublishedFit(BaseModel):
    """A published fit of L(N, D) = E + A/N^α + B/D^β, with its citation and caveats."""

    model_config = ConfigDict(frozen=True)

    key: FitKey = Field(description="Short name of the fit.")
    E: float = Field(description="Irreducible loss, nats per token on their data.")
    A: float = Field(description="Coefficient of the model-size term (N in parameters).")
    B: float = Field(description="Coefficient of the data term (D in tokens).")
    alpha: float = Field(description="Exponent α of N.")
    beta: float = Field(description="Exponent β of D.")
    citation: str = Field(description="Where the numbers come from.")
    label: str = Field(description="The citation in a few words (authors and year).")
    caveats: tuple[Caveat, ...] = Field(
        description="Codes: their data and setup; language models; loss in nats per token on "
                    "their data (not comparable to another tokenizer's or dataset's loss).")


HOFFMANN_2022 = PublishedFit(
    key="hoffmann2022", E=1.69, A=406.4, B=410.7, alpha=0.34, beta=0.28,
    citation="Hoffmann et al. 2022, Training Compute-Optimal Large Language Models, "
             "eq. 2 and Sec. 3.3 (approach 3)",
    label="Hoffmann et al. 2022", caveats=_CAVEATS)
BESIROGLU_2024 = PublishedFit(
    key="besiroglu2024", E=1.82, A=482.01, B=2085.43, alpha=0.3478, beta=0.3658,
    citation="Besiroglu et al. 2024, Chinchilla Scaling: A replication attempt, Sec. 4",
    label="Besiroglu et al. 2024", caveats=_CAVEATS)
PUBLISHED_FITS = (HOFFMANN_2022, BESIROGLU_2024)


def _fit(fit: PublishedFit | str) -> PublishedFit:
    if isinstance(fit, PublishedFit):
        return fit
    for known in PUBLISHED_FITS:
        if fit == known.key:
            return known
    raise InputError("fit", fit, " or ".join(f.key for f in PUBLISHED_FITS))


def optimal_split(flops: float, A: float, B: float, alpha: float,  # noqa: N803 (eq. 4's names)
                  beta: float) -> tuple[float, float]:
    """(N_opt, D_opt) minimising E + A/N^α + B/D^β at 6·N·D = flops (Hoffmann et al. 2022,
    eq. 4; module docstring), computed in logarithms so that no power overflows."""
    for name, value in (("flops", flops), ("A", A), ("B", B), ("alpha", alpha), ("beta", beta)):
        if not (math.isfinite(value) and value > 0):
            raise InputError(name, value, "a positive finite number")
    half = math.log(flops / FLOPS_PER_PARAM_PER_TOKEN)
    log_g = (math.log(alpha * A) - math.log(beta * B)) / (alpha + beta)
    log_n = log_g + beta / (alpha + beta) * half
    n, d = math.exp(log_n), math.exp(half - log_n)
    if not (math.isfinite(n) and math.isfinite(d) and n > 0 and d > 0):
        raise InputError("flops", flops, "a budget whose optimal split is a finite size")
    return n, d


@validated
def published_loss(params: ParamCount, tokens: TokenCount,
                   fit: PublishedFit | str = HOFFMANN_2022) -> float:
    """L(N, D) = E + A/N^α + B/D^β under a published fit, in nats per token on their data."""
    return _loss(params, tokens, _fit(fit))


def _loss(n: float, d: float, fit: PublishedFit) -> float:
    return fit.E + fit.A / math.pow(n, fit.alpha) + fit.B / math.pow(d, fit.beta)


class PublishedFitPrediction(BaseModel):
    """One published fit's prediction for the target run (and the baseline run)."""

    model_config = ConfigDict(frozen=True)

    fit: FitKey = Field(description="Which published fit.")
    citation: str = Field(description="Where the fit comes from.")
    label: str = Field(description="The citation in a few words (authors and year).")
    predicted_loss: float = Field(description="Loss of the target run, nats per token (theirs).")
    baseline_loss: float | None = Field(description="Loss of the baseline run; None without.")
    predicted_gain: float | None = Field(
        description="baseline_loss − predicted_loss (positive: the target is better); None "
                    "without a baseline.")


class PublishedPrediction(FiniteResult):
    """The fallback without points: what each published fit predicts, and their spread."""

    model_config = ConfigDict(frozen=True)

    source: Literal["published_fits"] = Field(
        description="The numbers come from published fits, not from the user's runs.")
    target_params: float = Field(description="Parameters of the target run.")
    target_tokens: float = Field(description="Tokens of the target run.")
    target_compute: float = Field(description="6·N·D of the target run, FLOPs.")
    baseline_params: float | None = Field(description="Parameters of the baseline run.")
    baseline_tokens: float | None = Field(description="Tokens of the baseline run.")
    fits: list[PublishedFitPrediction] = Field(description="Each published fit's prediction.")
    predicted_loss_spread: Range = Field(
        description="[lowest, highest] predicted loss over the fits: their disagreement, NOT a "
                    "statistical interval.")
    predicted_gain_spread: Range | None = Field(
        description="[lowest, highest] predicted gain over the fits (not a statistical "
                    "interval); None without a baseline.")
    spread_kind: Literal["between_published_fits"] = Field(
        description="The spread is the range between two published fits, not a confidence or "
                    "credible interval; it understates the uncertainty for another setup.")
    caveats: tuple[Caveat, ...] = Field(description="Codes for where the fits hold.")


@validated
def published_prediction(target_params: ParamCount, target_tokens: TokenCount,
                         baseline_params: ParamCount | None = None,
                         baseline_tokens: TokenCount | None = None) -> PublishedPrediction:
    """Each published fit's loss for the target (and baseline) run, and their spread."""
    n, d = target_params, target_tokens
    if (baseline_params is None) != (baseline_tokens is None):
        missing = "baseline_tokens" if baseline_tokens is None else "baseline_params"
        raise InputError(missing, None, "baseline_params and baseline_tokens together")
    base = None
    if baseline_params is not None and baseline_tokens is not None:
        base = (baseline_params, baseline_tokens)
    rows = []
    for fit in PUBLISHED_FITS:
        loss = _loss(n, d, fit)
        base_loss = None if base is None else _loss(*base, fit)
        rows.append(PublishedFitPrediction(
            fit=fit.key, citation=fit.citation, label=fit.label, predicted_loss=loss,
            baseline_loss=base_loss,
            predicted_gain=None if base_loss is None else base_loss - loss))
    losses = [r.predicted_loss for r in rows]
    gains = [r.predicted_gain for r in rows if r.predicted_gain is not None]
    return PublishedPrediction(
        source="published_fits", target_params=n, target_tokens=d,
        target_compute=flops_6nd(n, d),
        baseline_params=None if base is None else base[0],
        baseline_tokens=None if base is None else base[1],
        fits=rows, predicted_loss_spread=(min(losses), max(losses)),
        predicted_gain_spread=(min(gains), max(gains)) if gains else None,
        spread_kind="between_published_fits", caveats=_CAVEATS)


class FitOptimum(BaseModel):
    """The compute-optimal split of the budget under one fit, and the proposed run's penalty."""

    model_config = ConfigDict(frozen=True)

    fit: FitKey | Literal["your_fit"] = Field(
        description="A published fit, or the user's own two-variable fit.")
    citation: str | None = Field(description="Where a published fit comes from; None for yours.")
    label: str | None = Field(description="That citation in a few words; None for yours.")
    params: float = Field(description="Optimal parameters N_opt (eq. 4).")
    tokens: float = Field(description="Optimal tokens D_opt = C/(6·N_opt).")
    tokens_per_param: float = Field(description="D_opt / N_opt.")
    loss: float = Field(description="The fit's loss (or, for your fit, metric) at the optimum.")
    proposed_loss: float | None = Field(
        description="The fit's loss (or metric) at the proposed split; None without one.")
    loss_penalty: float | None = Field(
        description="How much worse the proposed split is than the optimum under this fit, in "
                    "its units (≥ 0); None without a proposed run.")


class ProposedSplit(BaseModel):
    """A proposed run placed against the 20-tokens-per-parameter rule."""

    model_config = ConfigDict(frozen=True)

    params: float = Field(description="Parameters N: a mixture of experts' active parameters, "
                                      "which its FLOPs and the fits use.")
    tokens: float = Field(description="Tokens D.")
    tokens_per_param: float = Field(description="D / N.")
    ratio_to_optimal: float = Field(description="(D / N) / 20.")
    total_params: float | None = Field(
        default=None, description="A mixture of experts' total parameters; None if dense.")
    tokens_per_total_param: float | None = Field(
        default=None, description="D / total parameters, for a mixture of experts: no fit "
                                  "judges it; None if dense.")
    placement: Placement = Field(
        description=f"under_trained below {UNDER_TRAINED_BELOW} × 20 tokens per parameter, "
                    f"over_trained above {OVER_TRAINED_ABOVE} × 20, near_optimal between.")
    notes: list[PlacementNote] = Field(
        description="over_training_can_be_deliberate: a smaller model on more tokens is often "
                    "chosen on purpose, to be cheaper to serve (a note, not a judgement).")


class OptimalSplit(FiniteResult):
    """How to split a compute budget between parameters and tokens."""

    model_config = ConfigDict(frozen=True)

    flops: float = Field(description="The compute budget C, FLOPs.")
    rule_ratio: float = Field(description="Tokens per parameter of the rule (20).")
    rule_params: float = Field(description="N = sqrt(C / (6·20)).")
    rule_tokens: float = Field(description="D = 20·N.")
    params: float = Field(description="The compute-optimal parameters: the 20-tokens-per-"
                                      "parameter split's N (rule_params).")
    tokens: float = Field(description="The compute-optimal tokens: that split's D (rule_tokens).")
    fit_optima: list[FitOptimum] = Field(
        description="The eq.-4 optimum under each published fit (and your own fit, if given).")
    proposed: ProposedSplit | None = Field(description="The proposed run; None without one.")
    caveats: tuple[Caveat, ...] = Field(description="Codes for where the published fits hold.")
    notes: list[OptimalNote] = Field(
        default_factory=list,
        description="Codes: moe_dense_law_on_active_params when the run is a mixture of "
                    "experts (params are then active parameters; see OptimalNote).")


def _proposed(c: float, params: float | None,
              tokens: float | None) -> tuple[float, float] | None:
    if params is None and tokens is None:
        return None
    if params is None:
        assert tokens is not None
        return c / (FLOPS_PER_PARAM_PER_TOKEN * tokens), tokens
    if tokens is None:
        return params, c / (FLOPS_PER_PARAM_PER_TOKEN * params)
    n, d = params, tokens
    implied = flops_6nd(n, d)
    if abs(implied / c - 1) > CONSISTENCY:
        raise InputError("proposed_tokens", tokens,
                         f"6·proposed_params·proposed_tokens = flops ({c:.3g}) within 1% "
                         f"(they give {implied:.3g}), or give only one of them")
    return n, d


def _placement(ratio: float) -> Placement:
    if ratio < UNDER_TRAINED_BELOW:
        return "under_trained"
    return "over_trained" if ratio > OVER_TRAINED_ABOVE else "near_optimal"


@validated
def compute_optimal(flops: FlopCount, *, proposed_params: ParamCount | None = None,
                    proposed_tokens: TokenCount | None = None,
                    fit: ScalingFit | None = None,
                    total_params: ParamCount | None = None) -> OptimalSplit:
    """The 20-tokens-per-parameter split of ``flops``, each published fit's eq.-4 optimum (and
    that of ``fit``, a two-variable :class:`~.scaling_fit.ScalingFit`), and, with a proposed
    run (either size, either data or both), its placement and loss penalty under each fit.

    For a mixture of experts, ``proposed_params`` are its active parameters and
    ``total_params`` all of them: the run is placed by the active ones (module docstring)."""
    if total_params is not None and (proposed_params is None or total_params < proposed_params):
        raise InputError("total_params", total_params,
                         "with proposed_params (the active parameters), at least as many")
    return split_of(flops, _proposed(flops, proposed_params, proposed_tokens), fit,
                    total=total_params)


def split_of(c: float, proposed: tuple[float, float] | None,
             fit: ScalingFit | None = None, *, total: float | None = None) -> OptimalSplit:
    """:func:`compute_optimal` of numbers already checked (a derived run's): the budget ``c``
    in FLOPs, the proposed (params, tokens), if any, and a mixture of experts' ``total``
    parameters (the proposed params are then its active ones)."""
    rule_n, rule_d = split_budget(c, COMPUTE_OPTIMAL_RATIO)
    optima = []
    for published in PUBLISHED_FITS:
        n, d = optimal_split(c, published.A, published.B, published.alpha, published.beta)
        at = None if proposed is None else _loss(*proposed, published)
        best = _loss(n, d, published)
        optima.append(FitOptimum(
            fit=published.key, citation=published.citation, label=published.label,
            params=n, tokens=d,
            tokens_per_param=d / n, loss=best, proposed_loss=at,
            loss_penalty=None if at is None else at - best))
    if fit is not None:
        optima.append(_own_optimum(c, fit, proposed))
    placed = None
    moe = total is not None and proposed is not None and total > proposed[0]
    if proposed is not None:
        ratio = proposed[1] / proposed[0] / COMPUTE_OPTIMAL_RATIO
        placement = _placement(ratio)
        placed = ProposedSplit(
            params=proposed[0], tokens=proposed[1], tokens_per_param=proposed[1] / proposed[0],
            ratio_to_optimal=ratio, placement=placement,
            notes=["over_training_can_be_deliberate"] if placement == "over_trained" else [],
            total_params=total if moe else None,
            tokens_per_total_param=proposed[1] / total if moe and total else None)
    return OptimalSplit(flops=c, rule_ratio=COMPUTE_OPTIMAL_RATIO, rule_params=rule_n,
                        rule_tokens=rule_d, params=rule_n, tokens=rule_d, fit_optima=optima,
                        proposed=placed, caveats=_CAVEATS,
                        notes=["moe_dense_law_on_active_params"] if moe else [])


def _own_optimum(c: float, fit: ScalingFit,
                 proposed: tuple[float, float] | None) -> FitOptimum:
    if fit.form != "params_tokens":
        raise InputError("fit", fit.form, "a two-variable fit (form params_tokens), from points "
                                          "with params and tokens that both vary")
    p = fit.parameters
    n, d = optimal_split(c, p["A"], p["B"], p["alpha"], p["beta"])
    # For a metric (higher is better) the fit is metric = E − A/N^α − B/D^β.
    sign = -1.0 if fit.higher_is_better else 1.0

    def value(size: float, data: float) -> float:
        return p["E"] + sign * (p["A"] / math.pow(size, p["alpha"])
                                + p["B"] / math.pow(data, p["beta"]))

    best = value(n, d)
    at = None if proposed is None else value(*proposed)
    return FitOptimum(fit="your_fit", citation=None, label=None, params=n, tokens=d,
                      tokens_per_param=d / n, loss=best, proposed_loss=at,
                      loss_penalty=None if at is None else sign * (at - best))
