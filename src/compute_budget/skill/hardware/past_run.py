"""A past run of the team's as the user gives it (a calibration row): the model, the tokens, the
devices and the time it took, each checked, and the list of them (:data:`Calibration`). What the
runs say of the next run's MFU is :mod:`.own_runs`."""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from ..errors import InputError
from ..quantities import DeviceCount, NotBool, ParamCount, TokenCount
from ..vocabulary import HOURS_PER_DAY, flops_6nd
from .catalog import Accelerator, Precision, get_accelerator

__all__ = ["MAX_RUNS", "PAST_RUN_COLUMNS", "Calibration", "PastRun"]

MAX_RUNS = 500
"""More past runs than this are refused: a calibration needs a handful, not a log file."""
PAST_RUN_COLUMNS = ("name", "params", "active_params", "tokens", "gpu", "gpu_count",
                    "gpu_hours", "wall_days", "precision")
"""The fields of a past run: the columns of a calibration table."""
_MAX_HOURS = 1e12
_MAX_DAYS = 36_500.0
_Hours = Annotated[float, Field(gt=0, le=_MAX_HOURS, allow_inf_nan=False), NotBool]
_Days = Annotated[float, Field(gt=0, le=_MAX_DAYS, allow_inf_nan=False), NotBool]


def _located(field: str, value: object, allowed: str) -> ValidationError:
    """A validation error on ``field`` of a past run, so that a list of runs names it
    ``calibration[i].field``."""
    error = PydanticCustomError("past_run", "{allowed}", {"allowed": allowed})
    return ValidationError.from_exception_data(
        "PastRun", [InitErrorDetails(type=error, loc=(field,), input=value)])


class PastRun(BaseModel):
    """One finished run of the team's: the model, the tokens, the devices and the time it took."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = Field(default=None, max_length=80, description="A label for the run.")
    params: ParamCount = Field(description="Parameters N of the run.")
    active_params: ParamCount | None = Field(
        default=None, description="Active parameters per token (MoE); default: params.")
    tokens: TokenCount = Field(description="Tokens the run trained on.")
    gpu: str = Field(description="Catalog accelerator it ran on, e.g. 'a100' or 'h100'.")
    gpu_count: DeviceCount | None = Field(
        default=None, description="Devices it ran on; needed with wall_days.")
    gpu_hours: _Hours | None = Field(
        default=None, description="Device-hours it took, end to end; or give wall_days.")
    wall_days: _Days | None = Field(
        default=None, description="Wall-clock days it took, end to end; or give gpu_hours.")
    precision: Precision | None = Field(
        default=None, description="bf16, fp16 or fp8; default: the device's (bf16).")

    @field_validator("gpu", mode="before")
    @classmethod
    def _catalog_key(cls, value: object) -> object:
        if not isinstance(value, str):
            return value
        try:
            return get_accelerator(value).key
        except InputError as exc:  # an unknown name: the message lists the closest ones
            raise ValueError(exc.allowed) from None

    @model_validator(mode="after")
    def _consistent(self) -> PastRun:
        if self.gpu_hours is None and self.wall_days is None:
            raise _located("gpu_hours", None, "give gpu_hours or wall_days (with gpu_count), "
                                              "one of the two")
        if self.gpu_hours is not None and self.wall_days is not None:
            raise _located("wall_days", self.wall_days,
                           "not together with gpu_hours, even when they agree: keep one, "
                           "gpu_hours alone or wall_days with gpu_count")
        if self.wall_days is not None and self.gpu_count is None:
            raise _located("gpu_count", None, "the number of devices, needed with wall_days "
                                              "(devices × wall_days × 24 is the GPU-hours)")
        if self.active_params is not None and self.active_params > self.params:
            raise _located("active_params", self.active_params,
                           f"at most params ({self.params:g})")
        peak = self._peak()
        mfu = self._mfu_at(peak)
        if not 1e-4 <= mfu <= 1.0:
            hours = "gpu_hours" if self.gpu_hours is not None else "wall_days"
            raise _located(hours, getattr(self, hours),
                           f"it implies an MFU of {mfu:.3g} of the {peak:g} TFLOP/s peak; a run "
                           "lies between 0.0001 and 1: check params, tokens and the time")
        return self

    def _peak(self) -> float:
        """The dense peak its MFU is taken against; a device without one (a past run takes no
        peak_tflops) or a precision it has none at is refused, naming the field at fault."""
        acc = self.accelerator
        if not acc.peak_precisions:
            raise _located("gpu", self.gpu, f"a device with a published dense peak, which "
                                            f"{acc.name} lacks: a run on it gives no MFU (a past "
                                            "run takes no peak_tflops); leave this run out")
        if self.resolved_precision not in acc.peak_precisions:
            raise _located("precision", self.precision,
                           f"a precision {acc.name} has a published dense peak at: "
                           + ", ".join(acc.peak_precisions))
        return acc.peak(self.resolved_precision)

    @property
    def accelerator(self) -> Accelerator:
        """The catalog entry the run ran on."""
        return get_accelerator(self.gpu)

    @property
    def resolved_precision(self) -> Precision:
        """The precision given, or the device's default training precision."""
        return self.precision or self.accelerator.default_precision

    @property
    def active(self) -> float:
        """Parameters that do work per token."""
        return self.active_params if self.active_params is not None else self.params

    @property
    def device_hours(self) -> float:
        """Device-hours: as given, or devices × wall days × 24."""
        if self.gpu_hours is not None:
            return self.gpu_hours
        return (self.gpu_count or 1) * (self.wall_days or 0.0) * HOURS_PER_DAY

    def _mfu_at(self, peak_tflops: float) -> float:
        return flops_6nd(self.active, self.tokens) / (
            self.device_hours * 3600 * peak_tflops * 1e12)

    @property
    def mfu(self) -> float:
        """End-to-end MFU: 6·N_active·T over device-hours × 3600 × the dense peak."""
        return self._mfu_at(self.accelerator.peak(self.resolved_precision))


def _count(runs: tuple[PastRun, ...]) -> tuple[PastRun, ...]:
    if not 1 <= len(runs) <= MAX_RUNS:
        raise ValueError(f"one to {MAX_RUNS} past runs, not {len(runs)}")
    return runs


def _not_text(value: object) -> object:
    """A path or a file's text refused with the function that reads it (pydantic would say only
    "a valid tuple")."""
    if isinstance(value, str | bytes):
        raise ValueError("a list of past runs, not a path or a file's text; in Python, read the "
                         "file with parse_calibration(Path('runs.csv').read_text()) and pass "
                         "what it returns")
    return value


Calibration = Annotated[tuple[PastRun, ...], BeforeValidator(_not_text), AfterValidator(_count)]
"""The team's past runs: one to :data:`MAX_RUNS` (checked once every run is valid)."""
