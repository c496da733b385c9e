"""The probe as the estimate sees it (issue 20): what to probe, and what the measurement changes.

:class:`ProbeSpec` is what ``compute-budget probe`` takes (the model as the estimate takes it,
and the one step to measure); :func:`probe_report` sets the measurement (a
:class:`~..hardware.measured.ProbeResult`, made by :mod:`compute_budget.probe`, which needs
torch) beside the numbers the estimate would use without it: the calibrated MFU prior on that
device and the activation formula at the same context and recomputation. The measurement is
taken on one device, so what it cannot see (communication, pipeline bubbles, restarts) stays
modelled by the estimate that reads it.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..errors import InputError
from ..hardware.catalog import get_accelerator
from ..hardware.measured import ProbeResult
from ..hardware.mfu import MfuPrior, family_of, mfu_prior
from ..hardware.mfu_table import load_mfu_priors
from ..model.param_count import count_params
from ..model.shape import shape_from_architecture
from ..model.source import ModelSource, check_seq_len, default_seq_len
from ..quantities import OptionalCount
from .activations import probe_scale

__all__ = ["ProbeReport", "ProbeSpec", "probe_report"]

_DEVICE = re.compile(r"[a-z]{1,20}(:\d{1,3})?")


class ProbeSpec(ModelSource):
    """A model (preset, config or Hub id) and the training step to measure on this device."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_by_name=True,
                              validate_by_alias=True)

    seq_len: OptionalCount = Field(
        default=None, ge=1, le=1_048_576,
        description="Tokens per sequence (default 4096, or the model's learned positions).")
    micro_batch: OptionalCount = Field(default=None, ge=1, le=4096,
                                       description="Sequences per step (default 1).")
    precision: Literal["bf16", "fp32"] = Field(
        default="bf16", description="bf16: mixed precision (fp32 weights and optimizer, bf16 "
                                    "compute); fp32: no autocast.")
    recompute: Literal["none", "full"] = Field(default="none",
                                               description="Activation recomputation.")
    lora_rank: OptionalCount = Field(default=None, ge=1, le=4096,
                                     description="LoRA rank: only adapters train.")
    steps: int = Field(default=3, ge=1, le=100, description="Timed steps per depth (default 3).")
    device: str | None = Field(default=None,
                               description="torch device, e.g. cuda, cuda:1, mps or cpu "
                                           "(default: the first accelerator, else cpu).")
    attn_implementation: Literal["eager", "sdpa", "flash_attention_2"] | None = Field(
        default=None, description="Attention implementation (default: transformers' for the "
                                  "family).")

    @field_validator("device")
    @classmethod
    def _device_name(cls, value: str | None) -> str | None:
        if value is not None and not _DEVICE.fullmatch(value):
            raise InputError("device", value, "a torch device name: cuda, cuda:1, mps or cpu")
        return value

    @property
    def resolved_seq_len(self) -> int:
        """The context given, or the estimate's default for this model."""
        return self.seq_len if self.seq_len is not None else default_seq_len(self.architecture)

    def checked(self) -> ProbeSpec:
        """This spec, once a model is named and its context allowed."""
        if self.architecture is None:
            raise InputError("model", None, "a preset, a config or a Hugging Face model id")
        check_seq_len(self.resolved_seq_len, self.architecture)
        return self


class ProbeReport(BaseModel):
    """A probe's measurement beside what the estimate would assume without it."""

    model_config = ConfigDict(frozen=True)

    probe: ProbeResult
    file: str | None = Field(default=None, description="Where the CLI wrote the probe.")
    prior: MfuPrior | None = Field(
        description="The calibrated end-to-end MFU prior on the probe's device; None when the "
                    "catalog has no such device (every CPU).")
    prior_as_of: str | None = Field(
        default=None, description="Date of the calibration set the prior rests on.")
    formula_bytes_per_token_per_layer: float = Field(
        description="Activation bytes per token per layer by the estimate's formula, at the "
                    "probe's context and recomputation.")
    activation_scale: float = Field(description="measured / formula activations per layer.")


def probe_report(spec: ProbeSpec, probe: ProbeResult, file: str | None = None) -> ProbeReport:
    """``probe`` (measured for ``spec``) beside the prior and the formula it replaces."""
    arch = spec.checked().architecture
    assert arch is not None  # checked
    shape, counts = shape_from_architecture(arch), count_params(arch)
    formula, scale = probe_scale(shape, probe)
    key = probe.device.accelerator
    prior = None
    if key is not None and probe.setup.precision == "bf16":
        acc = get_accelerator(key)
        if acc.peak_tflops.get("bf16") is not None:
            prior = mfu_prior(family_of(counts.active, counts.total), acc, "bf16",
                              params=float(counts.active))
    as_of = None if prior is None else load_mfu_priors().as_of
    return ProbeReport(probe=probe, file=file, prior=prior, prior_as_of=as_of,
                       formula_bytes_per_token_per_layer=formula, activation_scale=scale)
