"""Default MFU (model FLOPs utilisation) priors, each with its basis and source.

MFU is the share of the device's dense peak that a run turns into *model* FLOPs (6·N·T style,
recomputation not counted; Chowdhery et al. 2022, "PaLM", App. B). When the user gives no MFU, the
estimate uses a prior for the model family: a central value and a low–high band that becomes the
range of the time and money estimate.

FP8: the priors are measured against the BF16 dense peak. The FP8 peak is twice the BF16 one on
Hopper, Blackwell and MI300, but whole training steps speed up much less (about 1.2–1.5x), so the
prior for an FP8 run is the BF16 prior scaled by speed-up / (FP8 peak / BF16 peak).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .catalog import Accelerator, Precision

__all__ = [
    "FAMILY_PRIORS",
    "FP8_SPEEDUP",
    "MfuPrior",
    "ModelFamily",
    "mfu_prior",
]

ModelFamily = Literal["dense", "moe", "cnn", "snn"]
"""Model families with their own MFU prior: dense transformer, mixture of experts, CNN-heavy,
spiking (SNN)."""

_SKILL_SOURCE = (
    "compute-budget skill (stage 3, pre-validate): MFU 0.3–0.5 for dense transformers, "
    "0.15–0.3 for MoE, 0.1–0.2 for CNN-heavy or spiking models"
)


class MfuPrior(BaseModel):
    """A default MFU with its band, what it is based on and where it comes from."""

    model_config = ConfigDict(frozen=True)

    family: ModelFamily = Field(description="Model family the prior is for.")
    central: float = Field(description="Default MFU used for the point estimate (fraction).")
    low: float = Field(description="Low end of the MFU band (fraction); gives the high cost.")
    high: float = Field(description="High end of the MFU band (fraction); gives the low cost.")
    basis: str = Field(description="One sentence: what the prior is and why it applies.")
    source: str = Field(description="Where the figures come from, with date.")


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
"""The skill's flat priors by family, against the BF16/FP16 dense peak."""


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


def _fp8_factor(accelerator: Accelerator, speedup: float) -> float:
    """Multiply a BF16-relative MFU by this to get an MFU relative to the FP8 peak."""
    bf16 = accelerator.peak_tflops.bf16 or accelerator.peak_tflops.fp16
    fp8 = accelerator.peak_tflops.fp8
    if bf16 is None or fp8 is None:
        return 1.0
    ratio = fp8 / bf16
    return min(speedup, ratio) / ratio


def mfu_prior(family: ModelFamily, accelerator: Accelerator, precision: Precision) -> MfuPrior:
    """The default MFU and band for ``family`` on ``accelerator`` at ``precision``.

    The band comes from the compute-budget skill (dense 0.3–0.5, MoE 0.15–0.3, CNN-heavy or
    spiking 0.1–0.2); for FP8 it is rescaled to the FP8 peak with :data:`FP8_SPEEDUP`.
    """
    band = FAMILY_PRIORS[family]
    basis = f"{band.label} prior {band.low:.2f}–{band.high:.2f} against the BF16 dense peak"
    source = _SKILL_SOURCE
    if precision != "fp8":
        return MfuPrior(family=family, central=band.central, low=band.low, high=band.high,
                        basis=basis + ".", source=source)
    return MfuPrior(
        family=family,
        central=band.central * _fp8_factor(accelerator, FP8_SPEEDUP.central),
        low=band.low * _fp8_factor(accelerator, FP8_SPEEDUP.low),
        high=band.high * _fp8_factor(accelerator, FP8_SPEEDUP.high),
        basis=(
            basis + f", rescaled to the FP8 peak assuming FP8 speeds a whole step up "
            f"{FP8_SPEEDUP.low:g}–{FP8_SPEEDUP.high:g}x (central {FP8_SPEEDUP.central:g}x), "
            "not the 2x of the peak."
        ),
        source=source + "; " + FP8_SPEEDUP.source,
    )
