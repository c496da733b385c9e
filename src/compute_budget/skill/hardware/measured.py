"""A probe's measurement: one minute of the real model on the user's own device (issue 20).

``compute-budget probe`` (the optional ``probe`` extra, :mod:`compute_budget.probe`) builds the
model at full width with one and with two decoder layers (random weights from the config, no
download), times a few forward/backward/optimizer steps on the local device and extrapolates by
layer to the full depth. :class:`ProbeResult` is the file it writes and the ``probe`` argument
the estimate, the verdict, the split and the plan accept: this module only reads and checks it
(no torch here), so a server without the device can use a result measured elsewhere.

What a probe measures is one device holding the whole model (no sharding, no communication):
its step time at the probe's micro-batch and context, hence the achieved TFLOP/s and MFU, and
its peak memory split into model states, the activations kept for the backward pass, and the
rest (the allocator's reserve and temporaries: framework overhead). What it cannot measure
(:data:`NOT_MEASURED`) is modelled by the estimate as without a probe.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..errors import InputError

__all__ = [
    "NOT_MEASURED",
    "PROBE_DESCRIPTION",
    "PROBE_FORMAT",
    "MeasuredMemory",
    "MeasuredMfu",
    "ProbeDevice",
    "ProbeModel",
    "ProbeResult",
    "ProbeSetup",
    "adopt_probe_setup",
    "check_probe_use",
    "measured_mfu",
    "probe_of",
]

PROBE_FORMAT = "compute-budget-probe/1"
"""The ``format`` a probe file declares; another value is refused."""

NOT_MEASURED = ("communication", "pipeline_bubbles", "restarts_and_evaluation", "data_loading")
"""What a one-device probe cannot see, as codes: the layout's collectives (TP, ZeRO, data
parallel), pipeline bubbles, the restarts and evaluation that end-to-end hours include, and
input pipelines (the probe feeds random token ids)."""

_MAX_BYTES = 10**16  # 10 PB: far above any device
_MAX_TIME_S = 10**7
_MAX_TFLOPS = 10**6


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ProbeDevice(_Strict):
    kind: Literal["cuda", "rocm", "mps", "cpu"] = Field(
        description="The torch backend the probe ran on.")
    name: str = Field(max_length=200, description="The device's own name (e.g. torch.cuda."
                      "get_device_name(), or the CPU's model name).")
    accelerator: str | None = Field(
        default=None, max_length=100,
        description="The catalog key matched from the name (e.g. 'h100-sxm'); None when the "
                    "catalog has no such device (every CPU).")
    memory_bytes: int | None = Field(
        default=None, gt=0, le=_MAX_BYTES,
        description="The device's total memory in bytes as its runtime reports it; None on CPU.")


class ProbeModel(_Strict):
    model_type: str = Field(max_length=100, description="The config's model_type.")
    name: str | None = Field(default=None, max_length=200,
                             description="The model as the user named it (preset, Hub id, file).")
    layers: int = Field(gt=0, le=100_000, description="Decoder layers of the full model.")
    params: int = Field(gt=0, le=10**15, description="All parameters of the full model.")
    trainable_params: int = Field(gt=0, le=10**15,
                                  description="Parameters the optimizer updates.")


class ProbeSetup(_Strict):
    seq_len: int = Field(gt=0, le=10**7, description="Tokens per sequence.")
    micro_batch: int = Field(gt=0, le=100_000, description="Sequences per step on the device.")
    precision: Literal["bf16", "fp32"] = Field(
        description="bf16: fp32 weights and optimizer with bf16 autocast (mixed precision); "
                    "fp32: no autocast.")
    recompute: Literal["none", "full"] = Field(description="Activation recomputation.")
    lora_rank: int | None = Field(default=None, gt=0, le=65_536,
                                  description="LoRA rank when only adapters train; None for a "
                                              "full fine-tune or pretraining.")
    optimizer: Literal["adamw"] = "adamw"
    attn_implementation: str = Field(max_length=50,
                                     description="The attention implementation that ran.")
    layers_measured: tuple[int, int] = Field(
        description="The two depths built and timed; the full model is extrapolated from them.")
    steps: int = Field(gt=0, le=10_000, description="Timed steps per depth (after warm-up).")


class MeasuredMemory(_Strict):
    """Peak bytes on the one device for the full model, extrapolated by layer."""

    peak_bytes: int = Field(gt=0, le=_MAX_BYTES, description="Peak during a step, bytes.")
    model_states_bytes: int = Field(ge=0, le=_MAX_BYTES,
                                    description="Weights, gradients and optimizer states, bytes.")
    activation_bytes: int = Field(ge=0, le=_MAX_BYTES,
                                  description="Tensors kept for the backward pass at the end "
                                              "of the forward pass, bytes.")
    overhead_bytes: int = Field(ge=0, le=_MAX_BYTES,
                                description="The rest of the peak: temporaries, workspaces and "
                                            "the allocator's reserve, bytes.")
    activation_bytes_per_token_per_layer: float = Field(
        ge=0, le=10**9, description="activation bytes of one decoder layer per token.")
    method: Literal["allocator", "tensor_tracking"] = Field(
        description="allocator: the device allocator's peak (CUDA, ROCm, MPS); tensor_tracking: "
                    "live tensor storages counted by the probe (CPU).")

    @model_validator(mode="after")
    def _parts_within_peak(self) -> MeasuredMemory:
        parts = self.model_states_bytes + self.activation_bytes + self.overhead_bytes
        if parts > self.peak_bytes * 1.001 + 1:
            raise ValueError("model_states_bytes + activation_bytes + overhead_bytes exceed "
                             "peak_bytes")
        return self


class ProbeResult(_Strict):
    """What ``compute-budget probe`` writes; the ``probe`` input of the estimate and its peers."""

    format: Literal["compute-budget-probe/1"] = Field(description="File format and version.")
    measured_at: datetime = Field(description="When the probe ran (ISO 8601).")
    device: ProbeDevice
    software: dict[str, str] = Field(default_factory=dict, max_length=10,
                                     description="Versions: torch, transformers, python.")
    model: ProbeModel
    setup: ProbeSetup
    step_time_s: float = Field(gt=0, le=_MAX_TIME_S,
                               description="One optimizer step of the full model, seconds.")
    layer_step_time_s: float = Field(ge=0, le=_MAX_TIME_S,
                                     description="What one decoder layer adds to a step, seconds.")
    tokens_per_second: float = Field(gt=0, le=10**12, description="Training tokens per second.")
    flops_per_step: float = Field(gt=0, le=1e24,
                                  description="Model FLOPs of one step (6·N·tokens plus "
                                              "attention; the estimate's count).")
    achieved_tflops: float = Field(gt=0, le=_MAX_TFLOPS,
                                   description="flops_per_step / step_time_s, TFLOP/s.")
    peak_tflops: float | None = Field(default=None, gt=0, le=_MAX_TFLOPS,
                                      description="The device's dense peak at the probe's "
                                                  "precision from the catalog; None if unknown.")
    mfu: float | None = Field(default=None, gt=0, le=1.0,
                              description="achieved / peak; None when the peak is unknown.")
    memory: MeasuredMemory
    fits: bool | None = Field(default=None, description="Whether the peak fits the device's "
                                                         "memory; None when it is unknown.")
    not_measured: tuple[str, ...] = Field(default=NOT_MEASURED, max_length=20)

    @model_validator(mode="after")
    def _consistent(self) -> ProbeResult:
        if self.model.trainable_params > self.model.params:
            raise ValueError("model.trainable_params exceeds model.params")
        low, high = self.setup.layers_measured
        if not 0 < low < high:
            raise ValueError("setup.layers_measured must be two increasing depths")
        if self.mfu is not None and self.peak_tflops is not None:
            implied = self.achieved_tflops / self.peak_tflops
            if abs(implied - self.mfu) > 0.01 * max(implied, 1e-9):
                raise ValueError("mfu is not achieved_tflops / peak_tflops")
        return self


PROBE_DESCRIPTION = (
    "The JSON compute-budget probe wrote: one device's measured step time and memory for this "
    "model. Replaces the MFU prior and scales the activation formula; communication stays "
    "modelled. Not with mfu, achieved_tflops or calibration.")
"""The ``probe`` field's description (run options and the budget split)."""

_PARAMS_TOLERANCE = 0.02


def probe_of(value: object) -> object:
    """A ``probe`` given as the JSON text of its file, parsed (models validate the result)."""
    if isinstance(value, str | bytes):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            raise ValueError("not JSON: give the text of the file compute-budget probe wrote "
                             "(a JSON object)") from None
    return value


def _mismatch(what: str, probed: object, run: object, advice: str) -> InputError:
    return InputError("probe", f"{what} {probed}",
                      f"the run's {what} is {run}: {advice}")


def check_probe_use(probe: ProbeResult | None, replaced_by: dict[str, object], *,
                    device: str | None, precision: str, params: float | None = None,
                    trainable: float | None = None) -> None:
    """Raise an :class:`InputError` on ``probe`` when it does not measure this run: another
    device, precision or model, or beside a value it replaces (a given MFU or throughput, past
    runs)."""
    if probe is None:
        return
    given = [name for name, value in replaced_by.items() if value is not None]
    if given:
        raise InputError("probe", probe.device.name,
                         f"not together with {' or '.join(given)}: the probe's measurement "
                         "replaces them")
    if device is None or probe.device.accelerator != device:
        raise _mismatch("device", probe.device.accelerator or probe.device.name, device,
                        "a probe prices only the device it ran on; probe that device, or give "
                        "achieved_tflops")
    if probe.setup.precision != precision:
        raise _mismatch("precision", probe.setup.precision, precision,
                        "probe at the run's precision")
    for what, probed, run in (("parameter count", probe.model.params, params),
                              ("trainable parameter count", probe.model.trainable_params,
                               trainable)):
        if run is not None and abs(probed - run) > _PARAMS_TOLERANCE * run:
            raise _mismatch(what, f"{probed:.4g}", f"{run:.4g}",
                            "probe the same model (and the same LoRA rank)")


def _same(given: object, value: object) -> bool:
    try:
        return float(given) == float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(given) == str(value)


def adopt_probe_setup(data: object) -> object:
    """Raw run arguments with the probe's context and recomputation filled in where the run
    leaves them out (a probe measures one context and one recomputation mode); a run that gives
    other values is refused, since the measured time and activations hold only for the probe's.
    The stack defaults to ``hf``, the code the probe ran (transformers). Arguments without a
    valid probe pass unchanged (its validation reports it)."""
    if not isinstance(data, dict) or data.get("probe") is None:
        return data
    try:
        probe = ProbeResult.model_validate(probe_of(data["probe"]))
    except ValueError:
        return data
    out = dict(data, probe=probe)
    for name, value in (("seq_len", probe.setup.seq_len), ("recompute", probe.setup.recompute)):
        given = out.get(name)
        if given is None:
            out[name] = value
        elif not _same(given, value):
            raise _mismatch(name, value, given, f"probe again at {name} {given}, or leave "
                                                f"{name} out to use the probe's")
    if out.get("stack") is None:
        out["stack"] = "hf"
    return out


class MeasuredMfu(BaseModel):
    """What a probe gave the estimate's MFU: its step's MFU on the run's peak, and the modelled
    cost of the layout's communication that divides it."""

    model_config = ConfigDict(frozen=True)

    device: str = Field(description="The device the probe ran on.")
    measured_at: str = Field(description="The probe's date, YYYY-MM-DD.")
    step_mfu: float = Field(description="The probe's achieved TFLOP/s over the run's peak.")
    achieved_tflops: float = Field(description="Measured TFLOP/s on the one device.")
    step_time_s: float = Field(description="Measured seconds per step of the full model.")
    micro_batch: int = Field(description="Sequences per step in the probe.")
    communication: float = Field(
        description="The layout's modelled TP, PP and ZeRO-3 cost (≥ 1) dividing "
                    "step_mfu; 1 on one device.")
    not_measured: tuple[str, ...] = Field(description="Codes of what the probe cannot see.")


def measured_mfu(probe: ProbeResult, peak_tflops: float, communication: float) -> MeasuredMfu:
    """The probe's MFU on ``peak_tflops`` (the run's peak), before ``communication``."""
    return MeasuredMfu(
        device=probe.device.name, measured_at=probe.measured_at.date().isoformat(),
        step_mfu=min(1.0, probe.achieved_tflops / peak_tflops),
        achieved_tflops=probe.achieved_tflops, step_time_s=probe.step_time_s,
        micro_batch=probe.setup.micro_batch, communication=communication,
        not_measured=probe.not_measured)
