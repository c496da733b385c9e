"""What a budget split takes: the budget (FLOPs or dollars), the sizes and the ratio, and the
rate it is spent at (a device with its MFU, past runs or a probe, or a FLOP/s)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from ..errors import InputError
from ..hardware.catalog import AcceleratorKey, get_accelerator
from ..hardware.measured import ProbeResult, check_probe_use, probe_of
from ..hardware.own_runs import Calibration, check_runs_use
from ..model.fields import ModelParamCount
from ..quantities import (
    FlopCount,
    FlopRate,
    OptionalCount,
    Price,
    TokensPerParam,
    UsdAmount,
)
from ..run_spec import CALIBRATION_DESCRIPTION
from ..vocabulary import COMPUTE_OPTIMAL_RATIO, DEFAULT_FAILURE_BUDGET, FailureBudget, Mfu

__all__ = ["DEFAULT_GPU_COUNT", "BudgetTableSpec"]

DEFAULT_GPU_COUNT = 8
"""Devices when a GPU type is given without a count: one 8-device server (HGX/DGX nodes and
the usual cloud instance, e.g. AWS p5.48xlarge = 8 × H100)."""


class BudgetTableSpec(BaseModel):
    """A compute budget to split, and the rate at which it is spent."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    budget_flops: FlopCount | None = Field(
        default=None, description="Compute budget C in FLOPs (e.g. 6e14 or '1e24')."
    )
    budget_usd: UsdAmount | None = Field(
        default=None,
        description="Or a budget in US dollars, e.g. '$400k'. Turned into "
                    "FLOPs with gpu, MFU and price, after setting the failure budget aside.",
    )
    failure_budget: FailureBudget = DEFAULT_FAILURE_BUDGET
    ratio: TokensPerParam = Field(
        default=COMPUTE_OPTIMAL_RATIO,
        description="Tokens per parameter of the highlighted split (20: Chinchilla).",
    )
    params: list[ModelParamCount] | None = Field(
        default=None, max_length=50,
        description="Model sizes for the rows. Default: four decades around the optimum.",
    )
    flops_per_sec: FlopRate | None = Field(
        default=None,
        description="Peak FLOP/s of the whole machine, or give gpu. For the time columns "
                    "(the lesson uses 1e12). Without either, no time is shown.",
    )
    gpu: AcceleratorKey | None = Field(
        default=None,
        description="Catalog accelerator for the FLOP/s and the price, e.g. 'h100'.",
    )
    gpu_count: OptionalCount = Field(
        default=None, ge=1, le=10_000_000,
        description=f"Number of devices, with gpu (default {DEFAULT_GPU_COUNT}, one server). "
                    "It sets the wall time and the machine priced.",
    )
    mfu: Mfu | None = Field(
        default=None,
        description="Share of the peak FLOP/s achieved, in [0.0001, 1]. With gpu, the model "
                    "FLOPs utilisation (default: the calibrated dense prior for the device, with "
                    "its low-high band); with flops_per_sec, the utilisation (default 1).",
    )
    usd_per_gpu_hour: Price | None = Field(
        default=None,
        description="Price in US dollars per device-hour, with gpu. ('2.49' or '$2.49'; "
                    "default: the catalog's dated price).",
    )
    calibration: Calibration | None = Field(default=None, description=CALIBRATION_DESCRIPTION + ".")
    probe: Annotated[ProbeResult | None, BeforeValidator(probe_of)] = Field(
        default=None, description="The JSON compute-budget probe wrote on gpu: its measured "
                                  "MFU prices every size (not with mfu or calibration).")

    utilization: Mfu | None = Field(
        default=None, description="Deprecated: the old name of `mfu`; give `mfu`.")

    @model_validator(mode="after")
    def _renamed(self) -> BudgetTableSpec:
        if self.utilization is None:
            return self
        if self.mfu is not None:
            raise InputError("utilization", self.utilization,
                             "not together with mfu (utilization is its old name)")
        # The old name stands for mfu: the (frozen) spec takes it as mfu, once, here.
        object.__setattr__(self, "mfu", self.utilization)
        self.__pydantic_fields_set__.add("mfu")
        return self

    @model_validator(mode="after")
    def _one_budget(self) -> BudgetTableSpec:
        if (self.budget_flops is None) == (self.budget_usd is None):
            raise InputError("budget_flops", self.budget_flops,
                             "exactly one of budget_flops or budget_usd")
        if self.budget_usd is not None and self.gpu is None:
            raise InputError("gpu", None, "an accelerator, to turn budget_usd into FLOPs")
        if self.gpu is not None and self.flops_per_sec is not None:
            raise InputError("flops_per_sec", self.flops_per_sec,
                             "not together with gpu (the FLOP/s then come from the device)")
        check_runs_use(self.calibration, {"mfu": self.mfu}, device=self.gpu)
        if self.probe is not None:
            acc = None if self.gpu is None else get_accelerator(self.gpu)
            check_probe_use(self.probe, {"mfu": self.mfu, "calibration": self.calibration},
                            device=None if acc is None else acc.key,
                            precision="bf16" if acc is None else acc.default_precision)
        if self.gpu is None:
            if self.mfu is not None and self.flops_per_sec is None:
                raise InputError("mfu", self.mfu,
                                 "only with gpu or flops_per_sec (it scales their peak FLOP/s)")
            if self.gpu_count is not None:
                raise InputError("gpu_count", self.gpu_count,
                                 "only with gpu (flops_per_sec is the whole machine's rate)")
            if self.usd_per_gpu_hour is not None:
                raise InputError("usd_per_gpu_hour", self.usd_per_gpu_hour,
                                 "only with gpu (a price per device-hour)")
            return self
        acc = get_accelerator(self.gpu)
        acc.peak(acc.default_precision)
        if self.budget_usd is not None and self.usd_per_gpu_hour is None \
                and acc.default_price is None:
            raise InputError("usd_per_gpu_hour", None,
                             f"a price: the catalog has none for {acc.name}")
        return self
