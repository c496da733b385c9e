"""The input of :func:`~.plan.plan_run`: the run to plan (a run spec without
the devices) and the constraints on the plan, with their validation.

A price (``usd_per_gpu_hour``), a peak (``peak_tflops``) or a measured throughput
(``achieved_tflops``) is a figure for one device type: the spec accepts them only with a single
type in ``gpus``; a given MFU applies to every type. The layout the user pins is checked as a
run spec would check it, at the first count searched, so that an error names the field.

The batch cap. The time model scales linearly in the devices, but the global batch grows with
them: at least one sequence per data-parallel rank. Past the critical batch size more devices
buy little progress per token (McCandlish et al. 2018, "An Empirical Model of Large-Batch
Training"), so a plan's smallest global batch must not exceed ``max_batch_tokens``. By default
that is the batch a compute-optimal run of this compute would use, the DeepSeek LLM fit
(:mod:`..scaling.batch`); for a fine-tune or far outside DeepSeek's compute it is a rough guide:
give ``max_batch_tokens`` to override it.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from ..errors import InputError, describe_validation_error
from ..estimate import MAX_PLAN_DAYS
from ..hardware.catalog import Accelerator, get_accelerator, list_accelerators
from ..hardware.measured import adopt_probe_setup
from ..memory.spec import ModelAndLayout
from ..quantities import (
    Count,
    NotBool,
    Number,
    TokenCount,
    UsdAmount,
    name_count_pairs,
)
from ..run_spec import RunOptions, RunSpec
from ..scaling.batch import (
    BATCH_FIT_COEFFICIENT,
    BATCH_FIT_EXPONENT,
    BATCH_FIT_SOURCE,
    optimal_batch_tokens,
)
from ..scaling.lesson import train_flops
from .grid import CountGrid

__all__ = [
    "BATCH_FIT_COEFFICIENT",
    "BATCH_FIT_EXPONENT",
    "BATCH_FIT_SOURCE",
    "DEFAULT_MAX_GPU_COUNT",
    "MAX_GPU_COUNT",
    "BatchCapBasis",
    "PlanConstraints",
    "PlanSpec",
    "optimal_batch_tokens",
]

DEFAULT_MAX_GPU_COUNT = 4096
"""Devices searched at most per type unless the user says otherwise."""
MAX_GPU_COUNT = 1_000_000
"""The largest max_gpu_count accepted (today's largest clusters have ~10⁵ devices)."""
BatchCapBasis = Literal["default_formula", "user"]
"""default_formula: max_batch_tokens is B_opt of the run's compute (BATCH_FIT_SOURCE); user:
the spec's max_batch_tokens."""


AvailableCount = Annotated[int, Field(ge=1, le=10_000_000), NotBool]


class PlanConstraints(BaseModel):
    """What a plan must meet and where it may look: the deadline, the budget, the device types
    and counts."""

    deadline_days: Number = Field(
        gt=0, le=MAX_PLAN_DAYS,
        description=f"Deadline in wall-clock days, at most {MAX_PLAN_DAYS:g}. A plan's central "
                    "wall-time estimate must be within it.")
    budget_usd: UsdAmount | None = Field(
        default=None,
        description="Optional budget cap in US dollars (e.g. '$400k'): a plan's cost with the "
                    "failure budget must be at most this, as a go verdict asks.")
    gpus: list[str] | None = Field(
        default=None, min_length=1, max_length=100,
        description="Device types to choose from, e.g. ['h100', 'a100']. "
                    "Default: every type in the catalog with a dense peak for the precision.")
    available: dict[str, AvailableCount] | None = Field(
        default=None, max_length=100,
        description="Most devices of a type you can get, e.g. {'h100': 64}. Types "
                    "not named are limited by max_gpu_count only.")
    max_gpu_count: Count = Field(
        default=DEFAULT_MAX_GPU_COUNT, ge=1, le=MAX_GPU_COUNT,
        description=f"Most devices of any type searched (default {DEFAULT_MAX_GPU_COUNT}). "
                    "Counts tried: 1, 2, 4, nodes of 8, and this.")
    must_fit: bool = Field(
        default=True,
        description="Only plans that fit in device memory at some layout (default true).")
    top: Count = Field(default=5, ge=1, le=50,
                       description="How many plans to list in plans and in fastest (1–50).")
    max_batch_tokens: TokenCount | None = Field(
        default=None,
        description="Cap on tokens per optimizer step, e.g. '4M'. A count whose "
                    "smallest global batch (one sequence per data-parallel rank, times the "
                    "micro-batch) exceeds it is not feasible. Default: the compute-optimal "
                    "batch 0.2920·C^0.3271 tokens of DeepSeek LLM's fit (Bi et al. 2024), "
                    "C = 6·N·D FLOPs of this run.")



class PlanSpec(ModelAndLayout, RunOptions, PlanConstraints):
    """The run to plan (a run spec without the devices) and the constraints on the plan."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    _probe: RunSpec | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _no_devices(cls, data: Any) -> Any:
        data = adopt_probe_setup(data)
        if isinstance(data, dict):
            for name, instead in (("gpu", "gpus, the types to choose from"),
                                  ("gpu_count", "max_gpu_count or available, the most devices")):
                if name in data:
                    raise InputError(name, data[name],
                                     f"not in a plan (the plan chooses the devices); give "
                                     f"{instead}")
        return data

    @field_validator("gpus", mode="before")
    @classmethod
    def _gpus_text(cls, value: object) -> object:
        """The command line's form, ``h100,a100``, as a list (one name is a list of one)."""
        if not isinstance(value, str):
            return value
        names = [name.strip() for name in value.split(",") if name.strip()]
        if not names:
            raise InputError("gpus", value, "one or more device types, e.g. ['h100', 'a100'] "
                                            "or 'h100,a100'")
        return names

    @field_validator("gpus")
    @classmethod
    def _known_gpus(cls, names: list[str] | None) -> list[str] | None:
        if names is None:
            return None
        keys: list[str] = []
        for i, name in enumerate(names):
            key = get_accelerator(name, field=f"gpus[{i}]").key
            if key not in keys:
                keys.append(key)
        return keys

    @field_validator("available", mode="before")
    @classmethod
    def _available_text(cls, value: object) -> object:
        """The command line's form, ``h100=64,a100=128``, and the list form,
        ``[{'gpu': 'h100', 'count': 64}]`` (the MCP schema's), as an object."""
        if isinstance(value, list):
            return _available_list(value)
        return name_count_pairs(value, "available") if isinstance(value, str) else value

    @field_validator("available")
    @classmethod
    def _known_available(cls, counts: dict[str, int] | None) -> dict[str, int] | None:
        if counts is None:
            return None
        out: dict[str, int] = {}
        for name, count in counts.items():
            key = get_accelerator(name, field=f"available.{name}").key
            if key in out:
                raise InputError(f"available.{name}", count,
                                 f"each type once ({key} is named twice)")
            out[key] = count
        return out

    def _available_usable(self) -> None:
        """Every type in ``available`` is one the plan searches: a dense peak for the
        precision (or peak_tflops given) and a count within the cap that the pinned
        tp·pp·ep divides. A device the user has is refused by name, never left out."""
        searched = {acc.key for acc in self.accelerators}
        for key, count in (self.available or {}).items():
            acc = get_accelerator(key)
            if key not in searched:
                raise InputError(f"available.{key}", count, _no_peak(acc, self.precision))
            if not len(CountGrid(self.count_step, self.cap(key))):
                raise InputError(f"available.{key}", count,
                                 f"at least {self.count_step} devices: the pinned tp·pp·ep = "
                                 f"{self.count_step} must divide the count")

    @model_validator(mode="after")
    def _plan_consistent(self) -> PlanSpec:
        for name in ("usd_per_gpu_hour", "peak_tflops", "achieved_tflops", "probe"):
            value = getattr(self, name)
            if name == "probe" and value is not None:
                value = value.device.accelerator or value.device.name
            if value is not None and (self.gpus is None or len(self.gpus) != 1):
                raise InputError(name, value,
                                 "only with a single accelerator type in gpus (it is a figure "
                                 "for one device type)")
        if self.available is not None and self.gpus is not None:
            for key, count in self.available.items():
                if key not in self.gpus:
                    raise InputError(f"available.{key}", count,
                                     "a type in gpus (gpus limits the search to "
                                     f"{', '.join(self.gpus)})")
        accelerators = self.accelerators
        if not accelerators:
            what = self.precision or "bf16/fp16"
            raise InputError("precision" if self.precision else "gpus",
                             self.precision or self.gpus,
                             f"accelerators with a known dense {what} peak (or give "
                             "peak_tflops with a single type)")
        first = CountGrid(self.count_step, self.max_gpu_count)
        if not len(first):
            raise InputError("max_gpu_count", self.max_gpu_count,
                             f"at least {first.node_step} devices: the pinned tp·pp·ep = "
                             f"{self.count_step} must divide the count")
        self._available_usable()
        fields = {name: getattr(self, name) for name in self.model_fields_set
                  if name in RunSpec.model_fields}  # a subclass may carry more (a door's)
        fields.update(gpu=accelerators[0].key, gpu_count=first.count(0))
        try:  # the layout checks the run spec makes at a count, at the first count searched
            self._probe = RunSpec.model_validate(fields, context=self.resolved())
        except ValidationError as exc:
            raise _cause(exc) from None
        return self

    @property
    def requested(self) -> tuple[Accelerator, ...]:
        """The types asked for: ``gpus``, or the whole catalog."""
        if self.gpus is None:
            return list_accelerators()
        return tuple(get_accelerator(key) for key in self.gpus)

    @property
    def accelerators(self) -> tuple[Accelerator, ...]:
        """The types searched: ``gpus`` (or the catalog) with a dense peak for the precision
        (any, when peak_tflops is given)."""
        return tuple(acc for acc in self.requested if self.peak_tflops is not None
                     or acc.peak_tflops.get(self.precision or acc.default_precision) is not None)

    def cap(self, key: str) -> int:
        """Most devices of type ``key`` searched: max_gpu_count, or fewer when available says."""
        limit = (self.available or {}).get(key)
        return self.max_gpu_count if limit is None else min(limit, self.max_gpu_count)

    @property
    def compute_flops(self) -> float:
        """C = 6·N·D of the run in FLOPs: N active parameters, D training tokens (the default
        batch cap's input)."""
        return train_flops(self.model.active, self.tokens)

    @property
    def batch_cap(self) -> tuple[float, BatchCapBasis]:
        """The most tokens per optimizer step a plan may need, and where the number comes from:
        ``max_batch_tokens``, else B_opt of :attr:`compute_flops`."""
        if self.max_batch_tokens is not None:
            return self.max_batch_tokens, "user"
        return optimal_batch_tokens(self.compute_flops), "default_formula"

    @property
    def tokens_per_rank(self) -> int:
        """Tokens one data-parallel rank adds to the global batch: the sequence length times the
        pinned micro-batch (1 when left to the layout search, which keeps it at 1)."""
        return self.resolved_seq_len * (self.micro_batch or 1)

    def run_spec(self, key: str, gpu_count: int) -> RunSpec:
        """The run spec of a plan: this spec on ``gpu_count`` devices of type ``key`` (the
        count a multiple of count_step)."""
        assert self._probe is not None  # set by the validator
        return self._probe.model_copy(update={"gpu": key, "gpu_count": gpu_count})


def _available_list(entries: list[Any]) -> dict[str, Any]:
    """``[{'gpu': 'h100', 'count': 64}, …]`` as ``{'h100': 64, …}``: each entry an object of a
    device type and a count, each type once (checked here, where the entry's index names it;
    the counts are checked as the object form's are)."""
    out: dict[str, Any] = {}
    seen: dict[str, int] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or set(entry) != {"gpu", "count"}:
            raise InputError(f"available[{i}]", entry, "device counts as [{'gpu': 'h100', "
                                                       "'count': 64}], as {'h100': 64} or as "
                                                       "'h100=64'")
        name = entry["gpu"]
        if not isinstance(name, str):
            raise InputError(f"available[{i}].gpu", name, "a device type's name, e.g. 'h100'")
        key = get_accelerator(name, field=f"available[{i}].gpu").key
        if key in seen:
            raise InputError(f"available[{i}].gpu", name,
                             f"each type once ({key} is available[{seen[key]}] too)")
        seen[key] = i
        out[name] = entry["count"]
    return out


def _no_peak(acc: Accelerator, precision: str | None) -> str:
    """What a type in ``available`` needs when the plan cannot estimate it (no dense peak)."""
    known = acc.peak_precisions
    give = f"give peak_tflops (its dense TFLOP/s) with gpus {acc.key}"
    if known:
        return (f"a type the plan can estimate: the {precision} peak of {acc.name} is unknown "
                f"or unsupported; known: {', '.join(known)} (plan at one of them, or {give})")
    return (f"a type the plan can estimate: no published dense tensor peak is known for "
            f"{acc.name}; {give}, or leave it out")


def _cause(exc: ValidationError) -> InputError:
    """The input error behind a run spec's validation error (it names the field)."""
    for err in exc.errors(include_url=False):
        cause = (err.get("ctx") or {}).get("error")
        if isinstance(cause, InputError):
            return cause
    return InputError("input", None, describe_validation_error(exc))

