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

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "NOT_MEASURED",
    "PROBE_FORMAT",
    "MeasuredMemory",
    "ProbeDevice",
    "ProbeModel",
    "ProbeResult",
    "ProbeSetup",
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
