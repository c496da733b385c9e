"""Default MFU (model FLOPs utilisation) priors, each with its basis and source.

MFU is the share of the device's dense peak that a run turns into *model* FLOPs, counted as
6·N·T (N the active parameters; recomputation not counted; Chowdhery et al. 2022, "PaLM", App.
B). When the user gives no MFU, the estimate uses a prior: a central value and a low–high band
that becomes the range of the time and money estimate.

Dense and MoE transformers use priors calibrated on published training runs (``data/
mfu_priors.json``, derived by ``benchmarks/derive_priors.py`` from the packaged calibration set
``data/calibration_runs.csv``: papers, model cards and technical reports, each row with its
source and how its GPU-hours were derived). The rule, in one sentence: log10 of the *end-to-end*
MFU (6·N·T over reported GPU-hours × the BF16 dense peak) is a per-generation level plus one
slope in log10 of the active parameters shared by all generations (bigger matrices run nearer
the peak: 0.15–0.25 for the 3–8B Hopper runs, 0.35 for Llama 3.1 405B), fitted robustly (soft-L1)
to the published dense runs of every generation with at least ``min_runs`` of them; the size term
is clamped to the parameter range of the calibration runs; MoE runs take the dense prior at their
active parameters times the median ratio of the published MoE runs to it (at most 1); the band is
the central ×/÷ the factor that covers ``coverage_target`` of the runs around the fit.

A generation without enough runs (Volta, TPU, Blackwell, MI300, Gaudi) says so and takes a
conservative prior with the wider band of the pooled fit: the level of the calibrated generation
nearest in dense peak (end-to-end MFU falls as peak FLOP/s outgrows memory and network, so a
newer, faster device never gets more than the calibrated one below it), or the pooled level
across all generations when that is lower (Volta, TPU v3/v4: their few published runs sit near
it) or the device's peak is unknown.
CNN-heavy and spiking models have no calibration data and keep the skill's flat prior
(:data:`FAMILY_PRIORS`).

FP8: the priors are measured against the BF16 dense peak. The FP8 peak is twice the BF16 one on
Hopper, Blackwell and MI300, but whole training steps speed up much less (about 1.2–1.5x), so the
prior for an FP8 run is the BF16 prior scaled by speed-up / (FP8 peak / BF16 peak).
"""

from __future__ import annotations

import json
import math
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .catalog import Accelerator, Precision, list_accelerators

__all__ = [
    "FAMILY_PRIORS",
    "FP8_SPEEDUP",
    "POOLED",
    "CalibratedFamily",
    "CalibrationRun",
    "MfuPrior",
    "MfuPriorEntry",
    "MfuPriorTable",
    "ModelFamily",
    "SkippedRun",
    "generation_label",
    "load_mfu_priors",
    "mfu_prior",
    "prior_from_table",
]

ModelFamily = Literal["dense", "moe", "cnn", "snn"]
"""Model families with their own MFU prior: dense transformer, mixture of experts, CNN-heavy,
spiking (SNN)."""

CalibratedFamily = Literal["dense", "moe"]
"""Families the published runs calibrate."""

POOLED = "pooled"
"""The ``generation`` of the priors pooled across all generations (the fallback)."""

_SKILL_SOURCE = (
    "compute-budget skill (stage 3, pre-validate): MFU 0.3–0.5 for dense transformers, "
    "0.15–0.3 for MoE, 0.1–0.2 for CNN-heavy or spiking models"
)

_GENERATION_LABELS = {
    "volta": "Volta", "ampere": "Ampere", "ada": "Ada Lovelace", "hopper": "Hopper",
    "blackwell": "Blackwell", "cdna2": "CDNA 2 (MI250X)", "cdna3": "CDNA 3 (MI300)",
    "tpu-v3": "TPU v3", "tpu-v4": "TPU v4", "tpu-v5e": "TPU v5e", "tpu-v5p": "TPU v5p",
    "gaudi2": "Gaudi 2", "gaudi3": "Gaudi 3",
}


def generation_label(generation: str) -> str:
    """A readable name for a catalog generation id: ``'hopper'`` → ``'Hopper'``."""
    return _GENERATION_LABELS.get(generation, generation)


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
    scope: Literal["generation", "nearest", "pooled", "flat"] = Field(
        default="flat",
        description="What the prior rests on: published runs on this generation; those of the "
                    "calibrated generation nearest in dense peak (too few runs on this one); "
                    "runs pooled across generations (too few runs on this one and the pooled "
                    "level is the lower, or the device peak is unknown); or the skill's flat "
                    "prior.",
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
        default=None, description="×/÷ factor of the band around the central; None if flat.")


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
"""The skill's flat priors by family, against the BF16/FP16 dense peak. CNN-heavy and spiking
models use them (no published runs calibrate those families); the dense and MoE ones are kept as
the flat baseline the calibrated priors are benchmarked against."""


class _Speedup(BaseModel):
    model_config = ConfigDict(frozen=True)
    central: float
    low: float
    high: float
    source: str


FP8_SPEEDUP = _Speedup(
    central=1.3,
    low=1.0,
    high=1.5,
    source=(
        "NVIDIA NeMo AutoModel FP8 guide (2025): 'over 1.2x training speedup on 8xH100'; NVIDIA "
        "blog 'Faster Training Throughput in FP8 Precision with NVIDIA NeMo' (2025): end-to-end "
        "gains well below the 2x of the GEMM peak"
    ),
)
"""Whole-step speed-up of FP8 over BF16 training; FP8's 2x peak applies to GEMMs only."""


class MfuPriorEntry(BaseModel):
    """One calibrated prior: a family on a generation (or pooled), against the BF16 dense peak."""

    model_config = ConfigDict(frozen=True)

    family: CalibratedFamily
    generation: str = Field(description="Catalog generation id, or 'pooled' for the fallback.")
    central: float = Field(description="Default MFU (fraction of the BF16 dense peak).")
    low: float = Field(description="Low end of the band.")
    high: float = Field(description="High end of the band.")
    n_runs: int = Field(description="Number of published runs the prior rests on.")
    runs: tuple[str, ...] = Field(description="Names of those runs.")
    basis: str = Field(description="One sentence shown to the user.")
    source: str = Field(description="The calibration set and its date.")
    as_of: str = Field(description="Date of the calibration set (YYYY-MM-DD).")
    reference_params: float = Field(
        default=1e10, description="Active parameters at which central/low/high are quoted.")


class CalibrationRun(BaseModel):
    """One published run of the calibration set as the derivation used it (for review)."""

    model_config = ConfigDict(frozen=True)

    name: str
    accelerator: str = Field(description="Catalog key the hardware text maps to.")
    generation: str
    family: CalibratedFamily
    fp8: bool = Field(description="Trained in FP8: its MFU against the BF16 peak is inflated.")
    end_to_end_mfu: float = Field(description="6·N·T / (GPU-hours · 3600 · BF16 dense peak).")
    params: float = Field(default=0.0, description="Active parameters N of the run.")
    fitted_mfu: float | None = Field(
        default=None, description="The prior's central for this run (in-sample), if used.")
    used: bool = Field(description="Whether the derivation used it.")
    note: str = Field(description="Why it was left out, or what to keep in mind; '' if nothing.")


class SkippedRun(BaseModel):
    """A row of the calibration set that could not be used at all, and why."""

    model_config = ConfigDict(frozen=True)

    name: str
    reason: str


class MfuPriorTable(BaseModel):
    """The calibrated priors and the record of how they were derived."""

    model_config = ConfigDict(frozen=True)

    calibration_set: str = Field(description="What the priors are calibrated on.")
    as_of: str = Field(description="Date of the calibration set (YYYY-MM-DD).")
    rule: str = Field(description="The derivation rule in one sentence.")
    min_runs: int = Field(description="Dense runs a generation needs for its own prior.")
    coverage_target: float = Field(description="Share of runs the band factor covers.")
    band_factor: float = Field(description="×/÷ factor of the per-generation bands.")
    pooled_band_factor: float = Field(description="×/÷ factor of the pooled bands.")
    moe_ratio: float = Field(description="MoE prior / dense prior on the same generation.")
    size_slope: float = Field(
        default=0.0, description="Fitted change of log10 MFU per tenfold more active parameters.")
    reference_params: float = Field(
        default=1e10, description="Active parameters at which the generation levels are quoted.")
    params_range: tuple[float, float] = Field(
        default=(1e9, 1e12),
        description="Active-parameter range of the runs the fit used; the size term is clamped "
                    "to it.")
    priors: tuple[MfuPriorEntry, ...]
    runs: tuple[CalibrationRun, ...]
    skipped: tuple[SkippedRun, ...]

    def entry(self, family: CalibratedFamily, generation: str) -> MfuPriorEntry:
        """The prior for ``family`` on ``generation``, or the pooled one when it has none."""
        pooled: MfuPriorEntry | None = None
        for entry in self.priors:
            if entry.family != family:
                continue
            if entry.generation == generation:
                return entry
            if entry.generation == POOLED:
                pooled = entry
        if pooled is None:
            raise LookupError(f"no pooled {family} prior in the MFU prior table")
        return pooled


@cache
def load_mfu_priors() -> MfuPriorTable:
    """Load the packaged calibrated priors (cached)."""
    text = resources.files("compute_budget.skill").joinpath("data/mfu_priors.json").read_text(
        encoding="utf-8"
    )
    return MfuPriorTable.model_validate(json.loads(text))


def _fp8_factor(accelerator: Accelerator, speedup: float) -> float:
    """Multiply a BF16-relative MFU by this to get an MFU relative to the FP8 peak."""
    bf16 = accelerator.peak_tflops.bf16 or accelerator.peak_tflops.fp16
    fp8 = accelerator.peak_tflops.fp8
    if bf16 is None or fp8 is None:
        return 1.0
    ratio = fp8 / bf16
    return min(speedup, ratio) / ratio


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
"""No band reaches above this MFU, however large the model."""


def _scaled(level: float, factor: float, size: dict[str, object]) -> dict[str, float]:
    scale = float(size["size_factor"])  # type: ignore[arg-type]
    central = level * scale
    return {"central": round(central, 3), "low": round(central / factor, 3),
            "high": round(min(MAX_PRIOR_MFU, central * factor), 3), "level": level,
            "band_factor": factor}


def _bf16_prior(table: MfuPriorTable, family: ModelFamily, accelerator: Accelerator,
                params: float | None) -> MfuPrior:
    generation = accelerator.generation
    label = generation_label(generation)
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
    if entry.generation == generation:
        return MfuPrior(
            family=family, **_scaled(entry.central, table.band_factor, size), **size,
            basis=entry.basis, source=entry.source, generation=generation,
            generation_label=label, scope="generation", n_runs=entry.n_runs, runs=entry.runs)
    n = sum(1 for run in table.runs
            if run.used and run.family == "dense" and run.generation == generation)
    common = {"family": family, "generation": generation, "generation_label": label,
              "runs_on_generation": n, "min_runs": table.min_runs, **size}
    nearest = _nearest_calibrated(table, calibrated, accelerator)
    if nearest is None or entry.central < nearest.central:
        # Conservative: no calibrated level higher than what all published runs support.
        return MfuPrior(**common, **_scaled(entry.central, table.pooled_band_factor, size),
                        basis=entry.basis, source=entry.source, scope="pooled",
                        n_runs=entry.n_runs, runs=entry.runs)
    trend = tuple(
        (generation_label(e.generation), e.central)
        for e in sorted((e for e in table.priors
                         if e.family == "dense" and e.generation != POOLED),
                        key=lambda e: _reference_peak(e.generation) or 0.0))
    factor = max(table.band_factor, table.pooled_band_factor)
    return MfuPrior(
        **common, **_scaled(nearest.central, factor, size),
        basis=nearest.basis, source=nearest.source, scope="nearest", n_runs=nearest.n_runs,
        runs=nearest.runs, borrowed_from=generation_label(nearest.generation),
        device_peak_tflops=accelerator.peak_tflops.bf16 or accelerator.peak_tflops.fp16,
        reference_peak_tflops=_reference_peak(nearest.generation), trend=trend,
    )


def prior_from_table(
    table: MfuPriorTable, family: ModelFamily, accelerator: Accelerator, precision: Precision,
    *, params: float | None = None,
) -> MfuPrior:
    """The prior :func:`mfu_prior` gives, from an explicit ``table`` (the benchmark re-derives
    tables for leave-one-out; users want :func:`mfu_prior`)."""
    prior = _bf16_prior(table, family, accelerator, params)
    if precision != "fp8":
        return prior
    return prior.model_copy(update={
        "central": prior.central * _fp8_factor(accelerator, FP8_SPEEDUP.central),
        "low": prior.low * _fp8_factor(accelerator, FP8_SPEEDUP.low),
        "high": prior.high * _fp8_factor(accelerator, FP8_SPEEDUP.high),
        "band_factor": None,
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
    docstring; CNN-heavy or spiking: the skill's flat 0.1–0.2. For FP8 the band is rescaled to
    the FP8 peak with :data:`FP8_SPEEDUP`. The prior applies to 6·N_active·T model FLOPs.
    """
    return prior_from_table(load_mfu_priors(), family, accelerator, precision, params=params)
