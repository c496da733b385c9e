"""The team's own past runs as evidence for the MFU of its next run (issue 17, item 4).

**Each run's MFU**, in the published prior's convention (:mod:`.mfu_table`): end-to-end
6·N_active·T over its device-hours × 3600 × the dense peak of its precision (BF16 unless it
says otherwise; FP16 on devices without it), device-hours as reported or devices × wall days
× 24. Beside it, what the published prior expects of that run (:func:`.mfu.mfu_prior`: its
family on its own device, the new run's family where counts cannot tell it (:data:`GIVEN_ONLY`),
at its own size and precision, so the prior's generation level, size slope, MoE ratio and FP8
rescaling all apply). What a team carries from run to run is the ratio
of the two, in log10: its software stack, its cluster, its restarts and evaluation.

**Runs on another generation** count through their own generation's prior, i.e. scaled by the
published prior's generation ratio: the published levels are the evidence of what hardware does
to end-to-end MFU, and the team's ratio to them is what stays with the team when it moves
(``same_generation`` says how many ran on the target's generation, ``carried_from`` the devices
of the others, which every reply names). Three runs at 0.11 on H100 (×0.56 the Hopper prior of
0.197 at 7B) thus give an A100 run 0.327 × 0.56^w ≈ 0.19, not the A100 prior's 0.33; three at
0.45 (×2.28) would carry past the fastest run and are held at it, 0.45.

**The fit** is the normal–normal model in log10 MFU, precision-weighted (Gelman et al.,
*Bayesian Data Analysis*, 3rd ed. 2013, §2.5 and §5.4). The team's log ratio δ has the prior
N(0, τ²), τ the published prior's band over its z (a band from ÷ f₋ to × f₊ covering a share c
of the published runs: τ = log10(f₋·f₊) / 2z, its mean half-width, z = Φ⁻¹((1 + c)/2)); each
run's log ratio is δ plus a run-to-run scatter N(0, σ²). With k runs of mean r̄::

    w = (k/σ²) / (1/τ² + k/σ²)       the weight of the runs; the prior keeps 1 − w
    δ̂ = w · r̄                         Var δ̂ = 1 / (1/τ² + k/σ²)

σ² pools the runs' own scatter s² (k − 1 degrees of freedom) with that of published runs of
one organisation around the prior, σ₀ = :data:`WITHIN_TEAM_SPREAD`, counted as ν₀ =
:data:`SPREAD_PRIOR_RUNS` runs (a scaled inverse-χ² prior, BDA3 §3.2):
σ² = (ν₀σ₀² + (k − 1)s²) / (ν₀ + k − 1).

The new run's MFU is the prior's central × 10^δ̂ and its band the prior's central ×
10^(δ̂ ± z·√(Var δ̂ + σ²)): the band of one new run, which narrows as runs are added but never
below their scatter σ, widened to hold every run's own ratio, and held at the fastest run
published or fitted (the published size slope can carry a level past both); the MFU itself is
held at the team's fastest run where the slope carries it above that and the prior.

**Runs the reply doubts** are left out of the fit, as the published derivation leaves out rows
whose hours do not measure a whole run (Phi-2's 0.63, :data:`.published_runs.EXCLUDED` of the
benchmarks): once one run is over :data:`FASTER_THAN_PUBLISHED` times the fastest published
run, every run faster than that published one (``faster_than_published`` counts them and the
reply names them). So the band's fast end is held at the fastest run the fit used, as the
published prior's is (``fast_end_cap``), and a doubted run neither lifts the MFU nor widens the
scatter: one run at 0.79 beside two at 0.10 and 0.12 (7B on H100) gave 0.08–0.79 about 0.22;
the two alone give 0.09–0.21 about 0.14. With every run doubted the published prior stands.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from statistics import NormalDist, fmean, stdev
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
)

from ..errors import InputError
from .mfu import MAX_PRIOR_MFU, MfuPrior, ModelFamily, family_of, mfu_prior
from .mfu_table import load_mfu_priors
from .past_run import MAX_RUNS, PAST_RUN_COLUMNS, Calibration, PastRun

__all__ = ["MAX_RUNS", "PAST_RUN_COLUMNS", "SPREAD_PRIOR_RUNS", "WITHIN_TEAM_SPREAD",
           "Calibration", "OwnRun", "OwnRunsMfu", "PastRun", "check_runs_use", "own_runs_mfu",
           "own_runs_prior"]

WITHIN_TEAM_SPREAD = 0.113
"""σ₀, log10: the scatter of one organisation's published runs around the prior. The pooled
standard deviation of log10(end-to-end MFU / the prior's fit) within each organisation of the
calibration set (``mfu_priors.json`` of 2026-12-01, 69 rows): Meta (16 runs, 0.086), Microsoft
(8, 0.126), TII (5, 0.120), IBM (4, 0.190), Google (3, 0.008), EleutherAI (3, 0.088), BigCode
(2, 0.118), DeepSeek (2, 0.163): 0.113 over 43 runs, 35 degrees of freedom. The 81-row set of
2026-12-03 gives 0.108 over 45 runs (a test recomputes it, within 0.02). Nearly the whole
scatter of the prior's runs (0.117 over 54): a team's runs vary almost as much."""
SPREAD_PRIOR_RUNS = 4
"""ν₀: how many runs' worth of evidence σ₀ counts as, the median size of those eight groups
(3.5, rounded up)."""
GIVEN_ONLY: tuple[ModelFamily, ...] = ("encoder", "cnn", "snn")
"""Families a run's counts cannot tell (only given): the team's runs are read as the new run's
family, so three encoder runs at 0.13 give 0.13, not their ratio to the dense prior (×0.58)
applied to the encoder's."""
BEYOND_SIZES = 3.0
"""A run over this factor outside the team's runs' sizes: the published slope alone carries it."""
FASTER_THAN_PUBLISHED = 1.25
"""A past run over this factor above the fastest published run's end-to-end MFU (0.51, so over
0.64) is flagged: more likely node-hours given as device-hours (8 times too fast on 8-device
nodes) or a steady-state rate than a whole run."""


class OwnRun(BaseModel):
    """One past run as the fit read it."""

    model_config = ConfigDict(frozen=True)

    name: str | None = Field(description="Its label, if given.")
    accelerator: str = Field(description="Device it ran on (catalog name).")
    generation: str = Field(description="That device's generation.")
    mfu: float = Field(description="Its end-to-end MFU (6·N_active·T over device-hours × peak).")
    prior_mfu: float = Field(description="What the published prior expects of that run.")
    log_ratio: float = Field(description="log10(mfu / prior_mfu).")
    active_params: float = Field(default=0.0, description="Its active parameters.")
    left_out: bool = Field(default=False, description=(
        "Left out of the fit: faster than any published run, beside a run far faster (module "
        "docstring, runs the reply doubts)."))


class OwnRunsMfu(BaseModel):
    """The MFU of a new run from the team's past runs, shrunk toward the published prior
    (module docstring); every MFU before the new run's layout cost."""

    model_config = ConfigDict(frozen=True)

    n_runs: int = Field(description="Past runs given.")
    same_generation: int = Field(description="Of those, runs on the new run's generation.")
    generation_label: str | None = Field(
        default=None, description="The new run's generation (its prior's), readable.")
    carried_from: tuple[str, ...] = Field(default=(), description=(
        "Devices of the runs on another generation, each once: their ratio to their own "
        "generation's prior is carried to this one; () when none."))
    runs: tuple[OwnRun, ...] = Field(description="Each run as the fit read it.")
    ratio: float = Field(description="The fitted runs' geometric-mean MFU over the prior's "
                                     "(10^r̄); 1 when every run is left out.")
    level: float = Field(description="The runs alone, at this run: the prior's central × ratio.")
    weight: float = Field(description="Weight w of the runs; the published prior keeps 1 − w.")
    spread: float = Field(description="Run-to-run scatter σ used, log10 (pooled with σ₀).")
    runs_spread: float | None = Field(
        description="The runs' own scatter s, log10; None for one run.")
    prior_spread: float = Field(description="The prior's spread τ, log10 (its band over z).")
    published_spread: float = Field(
        default=WITHIN_TEAM_SPREAD,
        description="σ₀, log10: the scatter of one organisation's published runs, pooled in.")
    published_spread_runs: int = Field(
        default=SPREAD_PRIOR_RUNS, description="ν₀: the runs σ₀ counts as.")
    central: float = Field(description="The MFU used: the prior's central × 10^(w·r̄).")
    low: float = Field(description="Low end of its band (a new run's, module docstring).")
    high: float = Field(description="High end of its band.")
    prior_central: float = Field(description="The published prior's central for this run.")
    fast_end_cap: float | None = Field(default=None, description=(
        "When the band's fast end (or the MFU) was held down: the MFU it was held at, the "
        "fastest published run's or your fastest run's, whichever is higher; else None."))
    central_cap: float | None = Field(default=None, description=(
        "When the MFU was held at your fastest run's (the published size slope carried your "
        "level above it and above the published prior): that MFU; else None."))
    run_sizes: tuple[float, float] = Field(default=(0.0, 0.0),
                                           description="The runs' least and most active params.")
    faster_than_published: int = Field(default=0, description=(
        "When one of the runs ran over FASTER_THAN_PUBLISHED times the fastest published run's "
        "MFU (fastest_published; more likely node-hours or a steady-state rate than a run): how "
        "many ran faster than it, each left out of the fit; else 0."))
    fastest_published: float | None = Field(default=None, description=(
        "The fastest published run's end-to-end MFU, when a run is flagged; else None."))
    beyond_sizes: bool = Field(default=False, description=(
        "This run lies over BEYOND_SIZES times outside the runs' sizes: the published size "
        "slope alone carries their level to it."))

    @property
    def fitted(self) -> int:
        """Runs the fit used: those given less those left out (0: the published prior stands)."""
        return self.n_runs - self.faster_than_published


@lru_cache(maxsize=64)
def _read(runs: tuple[PastRun, ...], family: ModelFamily) -> tuple[OwnRun, ...]:
    """Each run's MFU beside the published prior's for it (cached: a plan asks per device):
    the prior of ``family``, the new run's, for a family its counts cannot tell (encoder, CNN,
    SNN: every run is of it), else of the family each run's counts imply (dense or MoE)."""
    published = _fastest_published()
    doubt = max(run.mfu for run in runs) > FASTER_THAN_PUBLISHED * published
    out = []
    for run in runs:
        acc = run.accelerator
        own = family if family in GIVEN_ONLY else family_of(run.active, run.params)
        prior = mfu_prior(own, acc, run.resolved_precision, params=run.active)
        mfu = run.mfu
        out.append(OwnRun(name=run.name, accelerator=acc.name, generation=acc.generation,
                          mfu=mfu, prior_mfu=prior.central,
                          log_ratio=math.log10(mfu / prior.central), active_params=run.active,
                          left_out=doubt and mfu > published))
    return tuple(out)


def _fastest_published() -> float:
    """The fastest published run's end-to-end MFU: the published prior's fast-end cap."""
    return load_mfu_priors().highest_mfu or MAX_PRIOR_MFU


def _z() -> float:
    """z of the published band's coverage: the band covers this share of the runs."""
    return NormalDist().inv_cdf((1 + load_mfu_priors().coverage_target) / 2)


def _prior_spread(prior: MfuPrior, z: float) -> float:
    """τ: the published band's mean half-width in log10 over z (module docstring); a band
    without its factors (FP8) by its low end."""
    if prior.band_factor is not None and prior.band_high_factor is not None:
        return math.log10(prior.band_factor * prior.band_high_factor) / (2 * z)
    return math.log10(prior.central / prior.low) / z


def own_runs_mfu(runs: Sequence[PastRun], prior: MfuPrior) -> OwnRunsMfu:
    """The MFU and band for a new run whose published prior is ``prior``, from the team's past
    ``runs`` (module docstring); the runs it doubts left out of the fit."""
    read = _read(tuple(runs), prior.family)
    fitted = [r for r in read if not r.left_out]
    flagged = len(read) - len(fitted)
    published = _fastest_published()
    z = _z()
    tau = _prior_spread(prior, z)
    common = {"n_runs": len(read), "generation_label": prior.generation_label, "runs": read,
              "prior_spread": tau, "prior_central": prior.central,
              "faster_than_published": flagged,
              "fastest_published": published if flagged else None}
    if not fitted:  # every run doubted: the published prior stands
        sizes = (min(r.active_params for r in read), max(r.active_params for r in read))
        return OwnRunsMfu(**common, same_generation=0, ratio=1.0, level=prior.central,
                          weight=0.0, spread=WITHIN_TEAM_SPREAD, runs_spread=None,
                          central=prior.central, low=prior.low, high=prior.high,
                          run_sizes=sizes)
    return OwnRunsMfu(**common, **_fit(fitted, prior, z, tau, published))


def _fit(read: Sequence[OwnRun], prior: MfuPrior, z: float, tau: float,
         published: float) -> dict[str, Any]:
    """The fields of the fit to the runs ``read`` (module docstring)."""
    ratios = [r.log_ratio for r in read]
    k = len(ratios)
    s = stdev(ratios) if k > 1 else None
    sigma2 = (SPREAD_PRIOR_RUNS * WITHIN_TEAM_SPREAD ** 2 + (k - 1) * (s or 0.0) ** 2) / (
        SPREAD_PRIOR_RUNS + k - 1)
    precision = 1 / tau ** 2 + k / sigma2
    weight = (k / sigma2) / precision
    mean = fmean(ratios)
    shift = weight * mean
    half = z * math.sqrt(1 / precision + sigma2)
    # each run's own level on this prior, in linear terms: the same run at the same size and
    # generation is its MFU exactly (a round trip through log10 could land a hair inside it)
    levels = [r.mfu * (prior.central / r.prior_mfu) for r in read]
    # no faster than the fastest run published or fitted: the slope can carry a level past both
    cap = min(MAX_PRIOR_MFU, max(published, *(r.mfu for r in read)))
    unheld = max(prior.central * 10 ** (shift + half), *levels)
    high = min(cap, unheld)
    sizes = (min(r.active_params for r in read), max(r.active_params for r in read))
    target, fastest = prior.params, max(r.mfu for r in read)
    central = min(high, prior.central * 10 ** shift)
    held = max(fastest, prior.central) if central > max(fastest, prior.central) else None
    # the slow side a whole half-width below the MFU used, held or not: below the MFU the
    # slope would have given, a held MFU's band narrowed with the distance from the runs
    # (405B from runs of 1-7B: 0.41-0.51 about a central of 0.41)
    low = min((central if held is None else held) * 10 ** -half, *levels, cap)
    return {
        "same_generation": sum(r.generation == prior.generation for r in read),
        "carried_from": tuple(dict.fromkeys(r.accelerator for r in read
                                            if r.generation != prior.generation)),
        "ratio": 10 ** mean, "level": prior.central * 10 ** mean, "weight": weight,
        "spread": math.sqrt(sigma2), "runs_spread": s,
        "central": central if held is None else held, "low": low, "high": high,
        "fast_end_cap": cap if unheld > cap else None, "central_cap": held,
        "run_sizes": sizes, "beyond_sizes": target is not None and not (
            sizes[0] / BEYOND_SIZES <= target <= sizes[1] * BEYOND_SIZES)}


def check_runs_use(runs: Sequence[PastRun] | None, replaced_by: dict[str, object],
                   device: object = True) -> None:
    """Raise an :class:`InputError` on ``calibration`` when ``runs`` are given without a
    ``device`` (None) to adjust the prior of, or beside a value of ``replaced_by`` (a given MFU
    or throughput) that replaces that prior."""
    if runs is None:
        return
    count = f"{len(runs)} run" + ("s" if len(runs) != 1 else "")
    if device is None:
        raise InputError("calibration", count, "only with gpu (your runs adjust its MFU prior)")
    given = [name for name, value in replaced_by.items() if value is not None]
    if given:
        raise InputError("calibration", count,
                         f"not together with {' or '.join(given)}: your runs adjust the "
                         "prior, which a given MFU replaces; give one or the other")


def own_runs_prior(runs: Sequence[PastRun] | None, prior: MfuPrior) -> MfuPrior:
    """``prior`` with its central and band shrunk toward the team's ``runs`` (unchanged
    without runs): for a caller that prices many sizes with one prior each."""
    if not runs:
        return prior
    own = own_runs_mfu(runs, prior)
    return prior.model_copy(update={"central": own.central, "low": own.low, "high": own.high})
