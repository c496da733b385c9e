"""Grouped cross-validation of the MFU prior: its form and its bands, chosen on held-out groups.

Leave-one-out keeps a run's siblings in the fit (Llama 2 7B is predicted from Llama 2 13B and
70B, trained by the same team on the same cluster in the same year), so it is optimistic for a
team whose runs are not in the set. Here a whole group is held out at a time, under each
grouping of :mod:`.calibration_groups` (one organisation, then one model family): every prior
is refitted without the group, and each held-out run is predicted the way the package would
predict it at run time (:func:`compute_budget.skill.hardware.mfu.prior_from_table`: a generation
left with too few runs borrows the nearest calibrated one's level or the pooled one).

- **Form** (:func:`choose_form`): forward selection from one pooled level; a term (generation,
  size, MoE ratio) is added when it lowers the mean |log10 error| of the held-out runs under
  *both* groupings, the one that lowers it most first; the data support no other term.
- **Bands** (:func:`choose_bands`): equal-tailed split-conformal: the ÷ factor to the slow end
  and the × factor to the fast end each leave out at most (1 − :data:`COVERAGE`)/2 of the
  held-out runs (the ⌈(n + 1)·0.925⌉-th smallest of n on each side), the wider of the two
  groupings'. The held-out errors are skewed: a run loses time to restarts, queues and
  evaluation without limit but cannot beat its kernels, so the slow tail is the longer one; a
  symmetric ×/÷ band of the same width missed only slow runs (the over-budget surprise).
  MoE runs get their own when there are enough of them, and a class with too few runs (fewer
  than :data:`MIN_CLASS_RUNS`) gets a band wide enough for every one of its held-out runs, never
  a narrower one; a generation without its own level gets the band of one level for all
  generations, or wider. The encoder runs (one level, their median: no fit to hold out) are such
  a class: a band holding every one of them about their median, never narrower than the dense
  one.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence

from compute_budget.skill.hardware.mfu import prior_from_table
from compute_budget.skill.hardware.mfu_table import FormScore, MfuPriorTable

from .calibration_groups import GROUPINGS, Grouping
from .prior_table import (
    COVERAGE,
    FORMS,
    Band,
    Bands,
    Form,
    build_table,
    encoder_level,
    encoder_runs,
    fit,
)
from .published_runs import PublishedRun

__all__ = [
    "MIN_CLASS_RUNS",
    "Residuals",
    "band_factors",
    "choose_bands",
    "choose_form",
    "held_out",
    "predicted_central",
    "score_forms",
]

Residuals = list[tuple[PublishedRun, float]]
"""Each held-out run with log10(its end-to-end MFU / the prior's central)."""

TAIL = (1 - COVERAGE) / 2
"""Share of held-out runs each end of the band may leave out (7.5% at 85%)."""

MIN_CLASS_RUNS = math.ceil((1 - TAIL) / TAIL)
"""Held-out runs a class needs for a conformal band at COVERAGE (13 at 85%: the
⌈(n + 1)·0.925⌉-th smallest error on each side exists only when n ≥ 13); a class with fewer gets
a band covering all of them."""


def predicted_central(table: MfuPriorTable, run: PublishedRun) -> float:
    """The BF16 prior's central for ``run`` as the package computes it from ``table``."""
    assert run.accelerator is not None
    return prior_from_table(table, run.family, run.accelerator, "bf16",
                            params=run.compute_params).central


def held_out(runs: Sequence[PublishedRun], form: Form, grouping: Grouping,
             targets: Iterable[PublishedRun] | None = None) -> Residuals:
    """Each target (by default the runs the derivation uses) predicted by ``form`` fitted
    without the target's group."""
    wanted = [r for r in runs if r.used] if targets is None else list(targets)
    out: Residuals = []
    for group in sorted({r.group(grouping) for r in wanted}):
        rest = [r for r in runs if r.group(grouping) != group]
        table = build_table(rest, form, record=False)
        out += [(r, math.log10(r.end_to_end_mfu / predicted_central(table, r)))
                for r in wanted if r.group(grouping) == group]
    return out


def _up_factor(residuals: Sequence[float]) -> float:
    """The × factor that leaves out at most TAIL of ``residuals`` above it (all of them when
    there are too few), at least 1, rounded up to 2 decimals."""
    ordered = sorted(residuals)
    rank = min(math.ceil((len(ordered) + 1) * (1 - TAIL)), len(ordered))
    return math.ceil(10 ** max(ordered[rank - 1], 0.0) * 100 - 1e-9) / 100


def band_factors(residuals: Iterable[float]) -> Band:
    """The equal-tailed split-conformal band at COVERAGE (module docstring): the ÷ factor to the
    slow end and the × factor to the fast end."""
    values = list(residuals)
    return Band(down=_up_factor([-r for r in values]), up=_up_factor(values))


def score_forms(runs: Sequence[PublishedRun]) -> dict[Form, dict[Grouping, Residuals]]:
    """Every candidate form's held-out residuals under both groupings."""
    return {form: {g: held_out(runs, form, g) for g in GROUPINGS} for form in FORMS}


def _mean_error(residuals: Residuals) -> float:
    return statistics.fmean(abs(r) for _, r in residuals)


def choose_form(scores: dict[Form, dict[Grouping, Residuals]]) -> Form:
    """Forward selection: add the term that lowers the held-out error under both groupings the
    most (by the mean of the two), until no term lowers it under both."""
    current = Form(generation=False, size=False, moe_ratio=False)

    def error(form: Form, grouping: Grouping) -> float:
        return _mean_error(scores[form][grouping])

    while True:
        better = [form for form in scores
                  if set(form.terms) > set(current.terms)
                  and len(form.terms) == len(current.terms) + 1
                  and all(error(form, g) < error(current, g) for g in GROUPINGS)]
        if not better:
            return current
        current = min(better, key=lambda f: sum(error(f, g) for g in GROUPINGS))


def _class_band(residuals: dict[Grouping, Residuals], family: str) -> Band:
    """The band a class's held-out runs need: conformal with enough runs, else all of them."""
    bands = [band_factors(errors) for grouping in GROUPINGS
             if (errors := [r for run, r in residuals[grouping] if run.family == family])]
    return Band(1.0, 1.0).widest(*bands)


def choose_bands(runs: Sequence[PublishedRun], form: Form,
                 scores: dict[Form, dict[Grouping, Residuals]]) -> Bands:
    """The band factors of ``form`` from its held-out residuals (module docstring)."""
    chosen = scores[form]
    dense = _class_band(chosen, "dense")
    moe = dense.widest(_class_band(chosen, "moe"))
    one_level = Form(generation=False, size=form.size, moe_ratio=form.moe_ratio)
    calibrated = fit(runs, form).calibrated
    borrowed = [r for g in GROUPINGS for run, r in chosen[g]
                if run.accelerator is not None and calibrated
                and run.accelerator.generation not in calibrated]
    pooled = dense.widest(*(band_factors(r for _, r in scores[one_level][g]) for g in GROUPINGS),
                          *(band_factors([r]) for r in borrowed))  # one run: a band holding it
    level = encoder_level(runs) if encoder_runs(runs) else None  # one level: all runs in its band
    encoder = dense if level is None else dense.widest(band_factors(
        math.log10(r.end_to_end_mfu / level) for r in encoder_runs(runs)))
    return Bands(dense=dense, moe=moe, pooled=pooled, encoder=encoder)


def form_scores(scores: dict[Form, dict[Grouping, Residuals]], chosen: Form) -> list[FormScore]:
    """The record of every candidate form's held-out error, for the table."""
    return [FormScore(terms=form.terms,
                      organisation_error=round(_mean_error(by["organisation"]), 4),
                      family_error=round(_mean_error(by["family"]), 4), kept=form == chosen)
            for form, by in scores.items()]
