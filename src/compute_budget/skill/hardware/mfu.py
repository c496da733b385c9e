"""Default MFU (model FLOPs utilisation) priors, each with its basis and source.

MFU is the share of the device's dense peak that a run turns into *model* FLOPs, counted as
6·N·T (N the active parameters; recomputation not counted; Chowdhery et al. 2022, "PaLM", App.
B). When the user gives no MFU, the estimate uses a prior: a central value and a low–high band
that becomes the range of the time and money estimate.

Dense and MoE transformers use priors calibrated on published training runs (the table of
:mod:`.mfu_table`, which states the rule and the form grouped cross-validation chose): the
generation's level at the reference size times the size term 10^(slope × log10(N /
reference)), N clamped to the parameter range of the calibration runs, with a band from the
central ÷ the entry's low factor to × its high factor (at most :data:`MAX_PRIOR_MFU`; the slow
side is the longer, as it is for held-out runs). The prior is end to end: the
runs' reported GPU-hours include restarts, evaluation and downtime. Each prior carries the MFU
range the published runs on its generation reached (:class:`.mfu_table.ObservedMfu`), so that
every range a user reads is one computed from the data, with its count of runs.

A generation without enough runs (Volta, TPU, Blackwell, MI300, Gaudi) says so and takes a
conservative prior with the wider band of the pooled fit: the level of the calibrated generation
nearest in dense peak (end-to-end MFU falls as peak FLOP/s outgrows memory and network, so a
newer, faster device never gets more than the calibrated one below it), or the pooled level
across all generations when that is lower (Volta, TPU v3/v4: their few published runs sit near
it) or the device's peak is unknown.
Encoder and encoder–decoder transformers (BERT, RoBERTa, T5 style; family ``encoder``, given,
never inferred) take the encoder prior: one level for every device and size, the median
end-to-end MFU of the calibration set's encoder runs, with a band holding every one of them
(scope ``family``). Their FLOPs keep the decoders' count, 6·N per token for every token, as those
runs' MFU was measured with it (an encoder–decoder's token passes one stack, not both: the MFU
absorbs it). CNN-heavy and spiking models have no calibration data and keep the skill's flat
prior (:data:`FAMILY_PRIORS`).

FP8: the priors are measured against the BF16 dense peak. The FP8 peak is twice the BF16 one on
Hopper, Blackwell and MI300, but whole training steps speed up much less (about 1.2–1.5x), so the
prior for an FP8 run is the BF16 prior scaled by speed-up / (FP8 peak / BF16 peak).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .catalog import Accelerator, Precision, list_accelerators
from .fp8 import FP8_SPEEDUP, fp8_factor
from .mfu_table import (
    POOLED,
    CalibratedFamily,
    MfuPriorEntry,
    MfuPriorTable,
    ObservedMfu,
    generation_label,
    load_mfu_priors,
)

__all__ = [
    "FAMILY_PRIORS",
    "FP8_SPEEDUP",
    "MAX_PRIOR_MFU",
    "UNCALIBRATED_SCOPES",
    "MfuPrior",
    "ModelFamily",
    "family_of",
    "mfu_prior",
    "prior_from_table",
]

ModelFamily = Literal["dense", "moe", "encoder", "cnn", "snn"]
"""Model families with their own MFU prior: dense transformer, mixture of experts, encoder or
encoder–decoder transformer, CNN-heavy, spiking (SNN)."""


def family_of(active: float, total: float) -> ModelFamily:
    """The family a transformer's counts imply: a mixture of experts when fewer parameters are
    active per token than exist, else dense."""
    return "moe" if active < total else "dense"

_SKILL_SOURCE = (
    "compute-budget skill (stage 3, pre-validate): MFU 0.1–0.2 for CNN-heavy or spiking "
    "models, a rule of thumb that no published run of the calibration set checks"
)


UNCALIBRATED_SCOPES = ("nearest", "pooled")
"""The scopes of a prior borrowed from other hardware: the device's generation has no published
runs, or too few for a level of its own (:attr:`MfuPrior.uncalibrated`)."""


class MfuPrior(BaseModel):
    """A default MFU with its band, what it is based on and where it comes from."""

    model_config = ConfigDict(frozen=True)

    family: ModelFamily = Field(description="Model family the prior is for.")
    central: float = Field(description="Default MFU used for the point estimate (fraction).")
    low: float = Field(description="Low end of the MFU band (fraction); gives the high cost.")
    high: float = Field(description="High end of the MFU band (fraction); gives the low cost.")
    basis: str | None = Field(
        description="The calibration table's sentence for the prior it rests on (data: how it "
                    "was derived); None for the flat prior. The reply composes the rest from "
                    "the fields below.")
    source: str = Field(description="Where the figures come from, with date.")
    as_of: str | None = Field(
        default=None, description="Date of the calibration set it rests on (YYYY-MM-DD); None "
                                  "for the flat prior.")
    generation: str | None = Field(
        default=None, description="Hardware generation of the accelerator the prior is for."
    )
    generation_label: str | None = Field(default=None, description="Its readable name.")
    family_label: str | None = Field(
        default=None, description="For the flat prior: the family's name (CNN-heavy model …).")
    runs_on_generation: int = Field(
        default=0, description="Published dense runs on this generation (nearest/pooled scope).")
    min_runs: int = Field(default=0, description="Runs a generation needs for its own prior.")
    borrowed_from: str | None = Field(
        default=None, description="nearest scope: the generation whose prior is used (label).")
    device_peak_tflops: float | None = Field(
        default=None, description="nearest scope: this device's dense peak, TFLOP/s.")
    reference_peak_tflops: float | None = Field(
        default=None, description="nearest scope: the borrowed generation's dense peak, TFLOP/s.")
    trend: tuple[tuple[str, float], ...] = Field(
        default=(), description="nearest scope: (generation, dense prior) by rising peak.")
    fp8_speedup: tuple[float, float, float] | None = Field(
        default=None, description="FP8: the whole-step speed-up assumed (low, central, high).")
    scope: Literal["generation", "nearest", "pooled", "family", "flat"] = Field(
        default="flat",
        description="What the prior rests on: published runs on this generation; those of the "
                    "calibrated generation nearest in dense peak (too few runs on this one); "
                    "runs pooled across generations (too few runs on this one and the pooled "
                    "level is the lower, or the device peak is unknown); the family's own runs "
                    "on every generation, one level (encoder); or the skill's flat prior.",
    )
    n_runs: int = Field(default=0, description="Number of published runs the prior rests on.")
    runs: tuple[str, ...] = Field(default=(), description="The published runs it rests on.")
    params: float | None = Field(
        default=None,
        description="Active parameters the size term used (after clamping to the calibration "
                    "range); None: no size given, the prior is the one at reference_params.")
    params_clamped: bool = Field(
        default=False,
        description="True when the given parameters lay outside the calibration runs' range and "
                    "the size term used the nearest end of it.")
    reference_params: float | None = Field(
        default=None, description="Active parameters at which the generation's level is quoted.")
    size_slope: float = Field(
        default=0.0,
        description="Change of log10 MFU per tenfold more active parameters (0: no size term).")
    size_factor: float = Field(
        default=1.0,
        description="Multiplier the size term applied to the generation's level: "
                    "10^(size_slope × log10(params / reference_params)).")
    level: float | None = Field(
        default=None,
        description="The generation's (or borrowed generation's) MFU at reference_params, before "
                    "the size term (fraction); None for the flat prior.")
    band_factor: float | None = Field(
        default=None,
        description="÷ factor from the central to the band's low end; None if flat.")
    band_high_factor: float | None = Field(
        default=None,
        description="× factor from the central to the band's high end (before the cap "
                    "fast_end_cap names); None if flat.")
    fast_end_cap: float | None = Field(
        default=None,
        description="When the band's high end was held down: the end-to-end MFU it was held "
                    "at, the fastest published run of the calibration set (no band claims a "
                    "run faster than any published one; the central is held there too when "
                    "the size term reaches it); None when it was not.")
    observed: ObservedMfu | None = Field(
        default=None,
        description="End-to-end MFU the published runs of this family on this generation "
                    "reached (the middle 80%, or all of them when there are few); of every "
                    "family on it when this one has none; when none ran on this one, of the "
                    "generation a nearest-scope prior is borrowed from, else of every "
                    "generation (scope 'all'); None for the flat prior.")

    @property
    def uncalibrated(self) -> bool:
        """Whether the device is uncalibrated: its generation has no published runs, or fewer
        than ``min_runs``, so its level is borrowed (nearest) or pooled. The one test every
        reply and every door uses (the estimate, the alternatives, the plan, the relay)."""
        return self.scope in UNCALIBRATED_SCOPES

    @property
    def basis_clause(self) -> str | None:
        """The basis without its closing period, for a sentence that goes on after it (an FP8
        rescaling); None for the flat prior."""
        return None if self.basis is None else self.basis.rstrip(".")

    @property
    def basis_continuing(self) -> str | None:
        """The basis as the rest of a sentence (after a colon or semicolon): first letter in
        lower case, no closing period; None for the flat prior."""
        clause = self.basis_clause
        return None if clause is None else clause[:1].lower() + clause[1:]


class _Band(BaseModel):
    model_config = ConfigDict(frozen=True)
    central: float
    low: float
    high: float
    label: str


FAMILY_PRIORS: dict[ModelFamily, _Band] = {
    "dense": _Band(central=0.40, low=0.30, high=0.50, label="dense transformer"),
    "moe": _Band(central=0.22, low=0.15, high=0.30, label="mixture-of-experts transformer"),
    "cnn": _Band(central=0.15, low=0.10, high=0.20, label="CNN-heavy model"),
    "snn": _Band(central=0.15, low=0.10, high=0.20, label="spiking (SNN) model"),
}
"""The skill's flat priors by family, against the BF16/FP16 dense peak (the compute-budget skill,
stage 3, pre-validate: 0.3–0.5 dense, 0.15–0.3 MoE, 0.1–0.2 CNN-heavy or spiking). CNN-heavy and
spiking models use them (no published runs calibrate those families); the dense and MoE ones are
only the flat baseline the calibrated priors are benchmarked against, never shown to a user."""


def _reference_peak(generation: str) -> float | None:
    """Median dense BF16 (or FP16) peak of the catalog's devices of ``generation``, TFLOP/s."""
    peaks = sorted(p for a in list_accelerators() if a.generation == generation
                   for p in [a.peak_tflops.bf16 or a.peak_tflops.fp16] if p is not None)
    return peaks[len(peaks) // 2] if peaks else None


def _nearest_calibrated(
    table: MfuPriorTable, family: CalibratedFamily, accelerator: Accelerator
) -> MfuPriorEntry | None:
    """The calibrated generation whose dense peak is nearest (in ratio) to the device's."""
    peak = accelerator.peak_tflops.bf16 or accelerator.peak_tflops.fp16
    if peak is None:
        return None
    best: tuple[float, MfuPriorEntry] | None = None
    for entry in table.priors:
        if entry.family != family or entry.generation == POOLED:
            continue
        reference = _reference_peak(entry.generation)
        if reference is None:
            continue
        distance = abs(math.log(peak / reference))
        if best is None or distance < best[0]:
            best = (distance, entry)
    return None if best is None else best[1]


def _size_term(table: MfuPriorTable, params: float | None) -> dict[str, object]:
    """The size term's fields for ``params`` active parameters (None: at the reference)."""
    if params is None or table.size_slope == 0.0:
        return {"params": params, "params_clamped": False, "size_factor": 1.0,
                "size_slope": table.size_slope, "reference_params": table.reference_params}
    low, high = table.params_range
    used = min(max(params, low), high)
    factor = 10 ** (table.size_slope * math.log10(used / table.reference_params))
    return {"params": used, "params_clamped": used != params, "size_factor": factor,
            "size_slope": table.size_slope, "reference_params": table.reference_params}


MAX_PRIOR_MFU = 0.9
"""No band reaches above this MFU, however large the model (a table without its fastest run's
MFU; a team's own runs)."""


def _factors(table: MfuPriorTable, entry: MfuPriorEntry) -> tuple[float, float]:
    """The ÷ and × factors of an entry's band (older tables: the table's, by scope; a table
    without high factors: symmetric)."""
    if entry.band_factor is not None:
        return entry.band_factor, entry.band_high_factor or entry.band_factor
    if entry.generation == POOLED:
        return (table.pooled_band_factor,
                table.pooled_band_high_factor or table.pooled_band_factor)
    return table.band_factor, table.band_high_factor or table.band_factor


def _scaled(table: MfuPriorTable, level: float, factors: tuple[float, float],
            size: dict[str, object]) -> dict[str, float | None]:
    """Central and band at the size term's scale, neither above the fastest published run's
    MFU (the table's ``highest_mfu``): the size slope can carry the largest models to it, so
    the central is held there too, and ``fast_end_cap`` says the band's fast end was."""
    cap = table.highest_mfu or MAX_PRIOR_MFU
    unheld = level * float(size["size_factor"])  # type: ignore[arg-type]
    central = min(unheld, cap)
    down, up = factors
    return {"central": round(central, 3), "low": round(central / down, 3),
            "high": round(min(cap, central * up), 3), "level": level, "band_factor": down,
            "band_high_factor": up,
            "fast_end_cap": cap if unheld * up > cap and table.highest_mfu else None}


def _encoder_prior(table: MfuPriorTable, accelerator: Accelerator) -> MfuPrior:
    """The encoder prior: one level for every device and size (module docstring)."""
    entry = table.entry("encoder", POOLED)
    size: dict[str, object] = {"params": None, "params_clamped": False, "size_factor": 1.0,
                               "size_slope": 0.0, "reference_params": None}
    return MfuPrior(
        family="encoder", **_scaled(table, entry.central, _factors(table, entry), size),
        **size,
        basis=entry.basis, source=entry.source, as_of=entry.as_of,
        generation=accelerator.generation, generation_label=generation_label(
            accelerator.generation), scope="family", n_runs=entry.n_runs, runs=entry.runs,
        observed=table.encoder_observed())


def _bf16_prior(table: MfuPriorTable, family: ModelFamily, accelerator: Accelerator,
                params: float | None) -> MfuPrior:
    generation = accelerator.generation
    label = generation_label(generation)
    if family == "encoder":
        return _encoder_prior(table, accelerator)
    if family in ("cnn", "snn"):
        band = FAMILY_PRIORS[family]
        return MfuPrior(
            family=family, central=band.central, low=band.low, high=band.high, basis=None,
            source=_SKILL_SOURCE, generation=generation, generation_label=label,
            family_label=band.label, scope="flat",
        )
    calibrated: CalibratedFamily = "moe" if family == "moe" else "dense"
    size = _size_term(table, params)
    entry = table.entry(calibrated, generation)
    observed = table.observed(generation, calibrated)
    if entry.generation == generation:
        return MfuPrior(
            family=family, **_scaled(table, entry.central, _factors(table, entry), size), **size,
            basis=entry.basis, source=entry.source, as_of=entry.as_of, generation=generation,
            generation_label=label, scope="generation", n_runs=entry.n_runs, runs=entry.runs,
            observed=observed)
    n = sum(1 for run in table.runs
            if run.used and run.family == "dense" and run.generation == generation)
    common = {"family": family, "generation": generation, "generation_label": label,
              "runs_on_generation": n, "min_runs": table.min_runs, "observed": observed, **size}
    nearest = _nearest_calibrated(table, calibrated, accelerator)
    if nearest is None or entry.central < nearest.central:
        # Conservative: no calibrated level higher than what all published runs support.
        return MfuPrior(**common, **_scaled(table, entry.central, _factors(table, entry), size),
                        basis=entry.basis, source=entry.source, as_of=entry.as_of,
                        scope="pooled",
                        n_runs=entry.n_runs, runs=entry.runs)
    trend = tuple(
        (generation_label(e.generation), e.central)
        for e in sorted((e for e in table.priors
                         if e.family == "dense" and e.generation != POOLED),
                        key=lambda e: _reference_peak(e.generation) or 0.0))
    own, pooled = _factors(table, nearest), _factors(table, entry)
    factors = (max(own[0], pooled[0]), max(own[1], pooled[1]))
    if observed is None or observed.scope != generation:
        # No run on this generation: the runs of the one borrowed from, not of every generation.
        common["observed"] = table.observed(nearest.generation, calibrated) or observed
    return MfuPrior(
        **common, **_scaled(table, nearest.central, factors, size),
        basis=nearest.basis, source=nearest.source, as_of=nearest.as_of, scope="nearest",
        n_runs=nearest.n_runs,
        runs=nearest.runs, borrowed_from=generation_label(nearest.generation),
        device_peak_tflops=accelerator.peak_tflops.bf16 or accelerator.peak_tflops.fp16,
        reference_peak_tflops=_reference_peak(nearest.generation), trend=trend,
    )


def prior_from_table(
    table: MfuPriorTable, family: ModelFamily, accelerator: Accelerator, precision: Precision,
    *, params: float | None = None,
) -> MfuPrior:
    """The prior :func:`mfu_prior` gives, from an explicit ``table`` (the benchmark re-derives
    tables for grouped cross-validation; users want :func:`mfu_prior`)."""
    prior = _bf16_prior(table, family, accelerator, params)
    if precision != "fp8":
        return prior
    return prior.model_copy(update={
        "central": prior.central * fp8_factor(accelerator, FP8_SPEEDUP.central),
        "low": prior.low * fp8_factor(accelerator, FP8_SPEEDUP.low),
        "high": prior.high * fp8_factor(accelerator, FP8_SPEEDUP.high),
        "band_factor": None,
        "band_high_factor": None,
        "fp8_speedup": (FP8_SPEEDUP.low, FP8_SPEEDUP.central, FP8_SPEEDUP.high),
        "source": prior.source + "; " + FP8_SPEEDUP.source,
    })


def mfu_prior(
    family: ModelFamily, accelerator: Accelerator, precision: Precision,
    *, params: float | None = None,
) -> MfuPrior:
    """The default MFU and band for ``family`` on ``accelerator`` at ``precision``, for a model
    of ``params`` active parameters (None: the generation's level at the reference size).

    Dense and MoE: calibrated on published runs (the generation's level and the size slope; the
    nearest calibrated generation in dense peak when this one has too few runs), see the module
    docstring; encoder: the median of the published encoder runs, one level for all; CNN-heavy
    or spiking: the skill's flat 0.1–0.2. For FP8 the band is rescaled to
    the FP8 peak with :data:`FP8_SPEEDUP`. The prior applies to 6·N_active·T model FLOPs.
    """
    return prior_from_table(load_mfu_priors(), family, accelerator, precision, params=params)
