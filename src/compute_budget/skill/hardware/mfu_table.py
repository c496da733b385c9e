"""The calibrated MFU prior table: the priors published training runs give, and their record.

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

:class:`MfuPriorTable` holds the fitted levels (:class:`MfuPriorEntry`, one per family and
generation, plus the pooled fallback), the slope and the bands, with the record of every run
used or left out (:class:`CalibrationRun`, :class:`SkippedRun`); :func:`load_mfu_priors` reads
the packaged table. The prior for a device is computed from it in :mod:`.mfu`.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "POOLED",
    "CalibratedFamily",
    "CalibrationRun",
    "MfuPriorEntry",
    "MfuPriorTable",
    "SkippedRun",
    "generation_label",
    "load_mfu_priors",
]

CalibratedFamily = Literal["dense", "moe"]
"""Families the published runs calibrate."""

POOLED = "pooled"
"""The ``generation`` of the priors pooled across all generations (the fallback)."""

_GENERATION_LABELS = {
    "volta": "Volta", "ampere": "Ampere", "ada": "Ada Lovelace", "hopper": "Hopper",
    "blackwell": "Blackwell", "cdna2": "CDNA 2 (MI250X)", "cdna3": "CDNA 3 (MI300)",
    "tpu-v3": "TPU v3", "tpu-v4": "TPU v4", "tpu-v5e": "TPU v5e", "tpu-v5p": "TPU v5p",
    "gaudi2": "Gaudi 2", "gaudi3": "Gaudi 3",
}


def generation_label(generation: str) -> str:
    """A readable name for a catalog generation id: ``'hopper'`` → ``'Hopper'``."""
    return _GENERATION_LABELS.get(generation, generation)


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
