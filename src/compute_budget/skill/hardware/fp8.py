"""FP8's whole-step speed-up over BF16, which rescales a BF16-relative MFU prior to the FP8 peak
(:func:`.mfu.prior_from_table`): the FP8 peak is twice the BF16 one on Hopper, Blackwell and
MI300, but whole training steps speed up much less (about 1.2–1.5x)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from .catalog import Accelerator

__all__ = ["FP8_SPEEDUP", "fp8_factor"]


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


def fp8_factor(accelerator: Accelerator, speedup: float) -> float:
    """Multiply a BF16-relative MFU by this to get an MFU relative to the FP8 peak."""
    bf16 = accelerator.peak_tflops.bf16 or accelerator.peak_tflops.fp16
    fp8 = accelerator.peak_tflops.fp8
    if bf16 is None or fp8 is None:
        return 1.0
    ratio = fp8 / bf16
    return min(speedup, ratio) / ratio
