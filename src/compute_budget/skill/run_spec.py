"""What the user plans to run, composed of field groups: the model and its layout on the
devices (:mod:`.memory.spec`), the run options (tokens, precision, MFU, price, peak, family,
failure budget, kind) and the price kind and energy overrides.

The plan spec (:mod:`.planning.plan_spec`) composes the same model, layout and run options
without the devices, which a plan chooses.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from .errors import InputError
from .hardware.catalog import GPU_DESCRIPTION, Accelerator, AcceleratorKey, Precision, PriceKind
from .hardware.energy import BoardPower, GridIntensity, Pue, load_energy_defaults
from .hardware.measured import (
    PROBE_DESCRIPTION,
    ProbeResult,
    adopt_probe_setup,
    check_probe_use,
    probe_of,
)
from .hardware.mfu import ModelFamily, family_of
from .hardware.own_runs import Calibration, check_runs_use
from .memory.spec import OnDevices
from .quantities import NotBool, Price, TflopsPerDevice, TokenCount
from .vocabulary import (
    DEFAULT_FAILURE_BUDGET,
    DEFAULT_RUN_KIND,
    FailureBudget,
    Mfu,
    MfuConvention,
    RunKind,
)

CALIBRATION_DESCRIPTION = (
    "Past runs: [{params, tokens, gpu, gpu_hours or wall_days, gpu_count}]. Optionally "
    "active_params, precision and name each. They fit your team's own MFU, shrunk toward the "
    "calibrated prior by their number; not with mfu")
"""The ``calibration`` field's description (the run options' and the budget split's), to end
with the other MFU arguments of its model: " or achieved_tflops." or "."."""

HostBandwidth = Annotated[float, Field(ge=1.0, le=10_000.0, allow_inf_nan=False), NotBool]
"""GB/s of host memory bandwidth per device: 1 to 10,000."""


__all__ = ["CALIBRATION_DESCRIPTION", "PriceAndEnergy", "RunOptions", "RunSpec"]


_ENERGY = load_energy_defaults()
"""The energy defaults the field descriptions quote, with their sources."""


class RunOptions(BaseModel):
    """The tokens, and the overrides of the estimate's defaults that apply to any device."""

    tokens: TokenCount = Field(
        description="Training tokens T (e.g. '100B', '1.5T')."
    )
    precision: Precision | None = Field(
        default=None,
        description="Training precision whose dense peak is used: bf16, fp16 or fp8. Default: "
                    "bf16, or fp16 on devices without bf16.",
    )
    mfu: Mfu | None = Field(
        default=None,
        description="Model FLOPs utilisation, 0.0001 to 1. Default: the calibrated prior for the "
                    "model family and hardware generation.",
    )
    achieved_tflops: TflopsPerDevice | None = Field(
        default=None,
        description="Measured hardware TFLOP/s per device. From a one-step benchmark or a "
                    "paper; recomputation counted, as `recompute` says. Converted to MFU; not "
                    "together with mfu.",
    )
    mfu_convention: MfuConvention | None = Field(
        default=None,
        description="FLOP convention the given mfu or achieved_tflops was counted in: 6n (6·N "
                    "per token: published end-to-end runs, this package), causal (6·N + causal "
                    "attention 6·L·H·Q·T: Megatron-LM), full (6·N + 12·L·H·Q·T: PaLM App. B, "
                    "nanoGPT, torchtitan). Converted to the estimate's count. Default: 6n. Only "
                    "with mfu or achieved_tflops.",
    )
    usd_per_gpu_hour: Price | None = Field(
        default=None,
        description="US dollars per device-hour, e.g. '$2.10'. Default: the "
                    "catalog's newest dated price, if it has one.",
    )
    peak_tflops: TflopsPerDevice | None = Field(
        default=None,
        description="Dense peak TFLOP/s per device, replacing the catalog's. Use the dense "
                    "figure, not the sparse datasheet one.",
    )
    family: ModelFamily | None = Field(
        default=None,
        description="Model family for the MFU prior: dense, moe, encoder (BERT, RoBERTa, T5: "
                    "encoder or encoder–decoder), cnn or snn. Default: moe when fewer parameters "
                    "are active than exist, else dense.",
    )
    failure_budget: FailureBudget = DEFAULT_FAILURE_BUDGET
    batch_tokens: TokenCount | None = Field(
        default=None,
        description="Tokens per optimizer step (the global batch); it amortises a CPU "
                    "offload's step. Default: the compute-optimal batch (Bi et al. 2024).",
    )
    host_memory_gbs: HostBandwidth | None = Field(
        default=None,
        description="Host memory GB/s per device, for CPU offload. Default: the device's "
                    "usual host, a server of its generation shared by 8 (a desktop shared by 2 "
                    "for GeForce and RTX workstation cards).",
    )
    kind: RunKind | None = Field(
        default=None,
        description="Kind of run: pretrain, continued-pretrain, fine-tune or ablation; it "
                    "shapes the advice and the alternatives. Default: fine-tune with LoRA or "
                    "frozen weights, else pretrain.",
    )
    calibration: Calibration | None = Field(
        default=None, description=CALIBRATION_DESCRIPTION + " or achieved_tflops.")
    probe: Annotated[ProbeResult | None, BeforeValidator(probe_of)] = Field(
        default=None, description=PROBE_DESCRIPTION)

    @model_validator(mode="after")
    def _options_consistent(self) -> RunOptions:
        if self.mfu is not None and self.achieved_tflops is not None:
            raise InputError("achieved_tflops", self.achieved_tflops,
                             "not together with mfu: give one or the other")
        check_runs_use(self.calibration, {"mfu": self.mfu,
                                          "achieved_tflops": self.achieved_tflops})
        if (self.mfu_convention is not None and self.mfu is None
                and self.achieved_tflops is None):
            raise InputError("mfu_convention", self.mfu_convention,
                             "only with mfu or achieved_tflops: it says how they were counted")
        return self

    @property
    def resolved_kind(self) -> RunKind:
        """The kind given; else fine-tune when some weights are frozen (LoRA, a frozen base: the
        run starts from a trained model), else pretrain. RunOptions is always mixed with the
        model's fields (RunSpec, PlanSpec), which give ``model``."""
        if self.kind is not None:
            return self.kind
        model = getattr(self, "model", None)
        return "fine-tune" if model is not None and model.frozen else DEFAULT_RUN_KIND


class PriceAndEnergy(BaseModel):
    """Which catalog price a single device type is priced at, and the energy overrides."""

    price_kind: PriceKind | None = Field(
        default=None,
        description="Which catalog price: on-demand (default), reserved or spot; the newest "
                    "quote of that kind for the device.")
    board_power_w: BoardPower | None = Field(
        default=None,
        description="Board power per device in watts, for the energy. Default: the catalog's "
                    "datasheet maximum.",
    )
    pue: Pue | None = Field(
        default=None,
        description=f"Facility PUE for the energy, 1.0 to 3.0. Default: "
                    f"{_ENERGY.pue.value:g}, the {_ENERGY.pue.short}.",
    )
    grid_kg_co2_per_kwh: GridIntensity | None = Field(
        default=None,
        description=f"Grid carbon intensity in kg CO2e per kWh, for the CO2. Default: "
                    f"{_ENERGY.grid_kg_co2_per_kwh.value:g}, the "
                    f"{_ENERGY.grid_kg_co2_per_kwh.short}.",
    )


class RunSpec(OnDevices, RunOptions, PriceAndEnergy):
    """The four inputs of step 1 (N, T, the device and its count) and the optional overrides.

    The model is given by ``params`` (and ``active_params`` for MoE), or exactly by a ``config``
    or ``preset``, which also gives the attention and LM-head FLOPs and the shape for memory.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    gpu: AcceleratorKey = Field(description=GPU_DESCRIPTION)  # required here

    _adopt_probe = model_validator(mode="before")(adopt_probe_setup)

    @model_validator(mode="after")
    def _device_consistent(self) -> RunSpec:
        if self.peak_tflops is None:
            self.accelerator.peak(self.resolved_precision)  # raises when the peak is unknown
        if self.price_kind is not None and self.usd_per_gpu_hour is None:
            self.accelerator.price(None, kind=self.price_kind)  # raises when it has no such quote
        check_probe_use(self.probe, {"mfu": self.mfu, "achieved_tflops": self.achieved_tflops,
                                     "calibration": self.calibration},
                        device=self.accelerator.key, precision=self.resolved_precision,
                        params=self.total_params, trainable=self.model.trainable)
        return self

    @property
    def accelerator(self) -> Accelerator:
        """The catalog entry for ``gpu``."""
        accelerator = super().accelerator
        assert accelerator is not None  # gpu is required
        return accelerator

    @property
    def compute_params(self) -> float:
        """Parameters that do work per token: the config's active count, or active_params for
        MoE, else all."""
        return self.model.active

    @property
    def resolved_family(self) -> ModelFamily:
        """The family given, or MoE when fewer parameters are active than exist, else dense."""
        if self.family is not None:
            return self.family
        return family_of(self.compute_params, self.total_params)

    @property
    def resolved_precision(self) -> Precision:
        """The precision given, or the device's default training precision."""
        return self.precision or self.accelerator.default_precision
