"""Energy and CO2 of a run: kWh from the devices' board power, the wall time and the facility's
PUE; CO2 from the kWh and the grid's carbon intensity (``../shared/reference/formulas.md``,
"Energy")::

    device_kwh = devices · board power (kW) · wall hours      the accelerators alone
    kwh        = device_kwh · PUE                              + the facility's cooling and power
                                                                 distribution (PUE = facility / IT)
    co2_kg     = kwh · grid intensity (kg CO2e / kWh)

Every input is an assumption with its source and date, and each can be overridden: the board
power comes from the catalog (:attr:`~.catalog.Accelerator.board_power_w`,
the datasheet maximum), the PUE and the grid intensity from ``data/energy.json`` (an industry-
average facility on the world-average grid). What the figure leaves out is said as codes
(:data:`EnergyScope`): the board power at its maximum for the whole run is an upper bound on what
the devices draw, and the host CPUs, the network and the storage are not counted (the PUE covers
only the facility's overhead on top of the IT load). When no source gives the board power and
none is given, the kWh and the CO2 are unknown (None), never 0.
"""

from __future__ import annotations

import json
import math
from functools import cache
from importlib import resources
from typing import Annotated, Literal, NamedTuple, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, computed_field

from ..errors import InputError
from ..quantities import bounded_quantity, validated
from .catalog import Accelerator, get_accelerator, load_catalog

__all__ = [
    "MAX_BOARD_POWER_W",
    "MAX_GRID_KG_CO2_PER_KWH",
    "PUE_RANGE",
    "BoardPower",
    "EnergyAssumption",
    "EnergyDefaults",
    "EnergyEstimate",
    "EnergyScope",
    "GridIntensity",
    "Pue",
    "Timed",
    "TimedRun",
    "energy_of",
    "load_energy_defaults",
]

PUE_RANGE = (1.0, 3.0)
"""PUE allowed: 1.0 (no overhead at all) to 3.0 (far above the worst surveyed averages)."""
MIN_BOARD_POWER_W = 1.0
"""Smallest board power per device accepted, in watts."""
MAX_BOARD_POWER_W = 10_000.0
"""Largest board power per device accepted, in watts (today's largest parts draw ~1.2 kW)."""
MIN_GRID_KG_CO2_PER_KWH = 0.001
"""Smallest grid intensity accepted, kg CO2e/kWh (1 g/kWh; the cleanest grids emit ~0.01)."""
MAX_GRID_KG_CO2_PER_KWH = 2.0
"""Largest grid intensity accepted, kg CO2e/kWh (coal plants emit about 1; 2 is a typo guard)."""
WATTS_PER_KW = 1000.0

BoardPower = Annotated[float, *bounded_quantity(MIN_BOARD_POWER_W, MAX_BOARD_POWER_W)]
"""A board power per device in watts, 1 to 10,000 (input type of ``board_power_w``)."""
Pue = Annotated[float, *bounded_quantity(*PUE_RANGE)]
"""A facility's power usage effectiveness, 1.0 to 3.0 (input type of ``pue``)."""
GridIntensity = Annotated[
    float, *bounded_quantity(MIN_GRID_KG_CO2_PER_KWH, MAX_GRID_KG_CO2_PER_KWH)]
"""A grid's carbon intensity in kg CO2e per kWh, 0.001 to 2 (input type of
``grid_kg_co2_per_kwh``)."""

Range = tuple[float, float]
AssumptionSource = Literal["user", "catalog", "default"]
EnergyScope = Literal["board_power_upper_bound", "devices_only", "nominal_run"]
"""What the figure leaves out. board_power_upper_bound: the board power at its datasheet maximum
for the whole wall time, more than the devices draw on average; devices_only: the host CPUs,
the network and the storage are not counted (the PUE adds only the facility's overhead on the IT
load); nominal_run: one run, without the failure budget's re-runs."""
SCOPE: tuple[EnergyScope, ...] = ("board_power_upper_bound", "devices_only", "nominal_run")


class EnergyAssumption(BaseModel):
    """One input of the energy estimate, with where it comes from."""

    model_config = ConfigDict(frozen=True)

    value: float | None = Field(description="The value in the unit of its field; None when "
                                            "unknown.")
    source: str | None = Field(description="Where the value comes from; None when given by the "
                                           "user or unknown.")
    as_of: str | None = Field(description="When the value was published or compiled.")
    origin: AssumptionSource | None = Field(
        description="user (given), catalog (the accelerator catalog) or default "
                    "(data/energy.json); None when unknown.")
    short: str | None = Field(
        default=None, description="The source in a few words (defaults only).")

    @property
    def source_clause(self) -> str | None:
        """The source as a clause inside a reply's sentence: without its closing period."""
        return None if self.source is None else self.source.rstrip(".")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def given_by_user(self) -> bool:
        """Whether the user gave the value."""
        return self.origin == "user"


class EnergyDefault(BaseModel):
    """A default of ``data/energy.json``: value, source, date, and why it was chosen."""

    model_config = ConfigDict(frozen=True)

    value: float
    source: str
    as_of: str
    why: str = Field(description="Why this default, and that it is an assumption.")
    short: str = Field(description="The source in a few words, for a one-line reply.")
    alternatives: tuple[dict[str, float | str], ...] = Field(
        description="Other published figures (label, value, source, as_of).")


class EnergyDefaults(BaseModel):
    """The defaults of the energy estimate (``data/energy.json``)."""

    model_config = ConfigDict(frozen=True)

    compiled: str
    notes: str
    pue: EnergyDefault = Field(description="Power usage effectiveness, facility / IT energy.")
    grid_kg_co2_per_kwh: EnergyDefault = Field(
        description="Carbon intensity of the grid, kg CO2e per kWh.")


@cache
def load_energy_defaults() -> EnergyDefaults:
    """Load the packaged energy defaults (cached)."""
    text = resources.files("compute_budget.skill").joinpath("data/energy.json").read_text(
        encoding="utf-8")
    return EnergyDefaults.model_validate(json.loads(text))


class EnergyEstimate(BaseModel):
    """kWh and CO2 of a run, with the assumptions behind them."""

    model_config = ConfigDict(frozen=True)

    accelerator: str = Field(description="Full accelerator name.")
    accelerator_key: str = Field(description="Catalog key of the accelerator.")
    gpu_count: int = Field(description="Number of devices.")
    wall_hours: float = Field(description="Wall-clock hours of the run (central estimate).")
    wall_hours_range: Range = Field(description="Wall hours [low, high] of the run.")
    board_power_w: EnergyAssumption = Field(
        description="Board power per device in watts (value None when no source gives it).")
    pue: EnergyAssumption = Field(description="Power usage effectiveness of the facility.")
    grid_kg_co2_per_kwh: EnergyAssumption = Field(
        description="Carbon intensity of the grid, kg CO2e per kWh.")
    device_kwh: float | None = Field(
        description="kWh the devices draw: devices × board power × wall hours; None when the "
                    "board power is unknown.")
    kwh: float | None = Field(
        description="kWh at the facility: device_kwh × PUE; None when the board power is "
                    "unknown.")
    kwh_range: Range | None = Field(
        description="kWh [low, high] over the wall-time range; None when unknown.")
    co2_kg: float | None = Field(
        description="kg CO2e: kwh × grid intensity; None when the kWh are unknown.")
    co2_kg_range: Range | None = Field(
        description="kg CO2e [low, high] over the wall-time range; None when unknown.")
    scope: tuple[EnergyScope, ...] = Field(
        description="What the figure leaves out or overstates (see EnergyScope).")


@runtime_checkable
class Timed(Protocol):
    """Anything with a device count and a wall time: a RunEstimate, a Plan's estimate."""

    @property
    def gpu_count(self) -> int: ...

    @property
    def wall_hours(self) -> float: ...

    @property
    def wall_hours_range(self) -> Range: ...


class TimedRun(NamedTuple):
    """A run's device, count and wall hours: what the energy needs of it (:class:`Timed`)."""

    accelerator: Accelerator
    gpu_count: int
    wall_hours: float
    wall_hours_range: Range


def _number(value: object, field: str, low: float, high: float, allowed: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(field, value, allowed)
    if not (math.isfinite(value) and low <= value <= high):
        raise InputError(field, value, allowed)
    return float(value)


def _accelerator_of(run: object) -> Accelerator:
    acc = getattr(run, "accelerator", None)
    if isinstance(acc, Accelerator):
        return acc
    key = getattr(run, "accelerator_key", None)
    if key is None:
        raise InputError("accelerator_key", None,
                         "an estimate with accelerator_key (a RunEstimate) or an Accelerator "
                         "as its accelerator")
    return get_accelerator(key, field="accelerator_key")


def _hours(run: Timed) -> tuple[int, float, Range]:
    count = getattr(run, "gpu_count", None)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise InputError("gpu_count", count, "a whole number of devices, at least 1")
    hours = _number(getattr(run, "wall_hours", None), "wall_hours", 0.0, math.inf,
                    "a finite number of hours, at least 0")
    span = getattr(run, "wall_hours_range", None)
    if not isinstance(span, tuple | list) or len(span) != 2:
        raise InputError("wall_hours_range", span, "a pair of hours [low, high]")
    low = _number(span[0], "wall_hours_range", 0.0, math.inf, "finite hours, at least 0")
    high = _number(span[1], "wall_hours_range", 0.0, math.inf, "finite hours, at least 0")
    if low > high:
        raise InputError("wall_hours_range", span, "[low, high] with low ≤ high")
    return count, hours, (low, high)


def _power(acc: Accelerator, given: float | None) -> EnergyAssumption:
    if given is not None:
        return EnergyAssumption(value=given, source=None, as_of=None, origin="user")
    if acc.board_power_w is None:
        return EnergyAssumption(value=None, source=None, as_of=None, origin=None)
    return EnergyAssumption(value=acc.board_power_w, source=acc.board_power_source,
                            as_of=load_catalog().compiled, origin="catalog")


def _default(given: float | None, default: EnergyDefault) -> tuple[EnergyAssumption, float]:
    if given is None:
        return EnergyAssumption(value=default.value, source=default.source,
                                as_of=default.as_of, origin="default",
                                short=default.short), default.value
    return EnergyAssumption(value=given, source=None, as_of=None, origin="user"), given


@validated
def energy_of(
    estimate: Timed,
    *,
    board_power_w: BoardPower | None = None,
    pue: Pue | None = None,
    grid_kg_co2_per_kwh: GridIntensity | None = None,
) -> EnergyEstimate:
    """kWh and CO2 of the run ``estimate`` describes (module docstring).

    ``estimate`` is anything with ``gpu_count``, ``wall_hours`` and ``wall_hours_range`` and the
    device as ``accelerator_key`` (a :class:`~compute_budget.skill.estimate.RunEstimate`) or as
    an :class:`~compute_budget.skill.hardware.catalog.Accelerator` in ``accelerator``. Each keyword
    overrides a default: the board power per device in watts (default: the catalog's), the PUE
    (1.0–3.0; default: data/energy.json) and the grid intensity in kg CO2e per kWh (0–2;
    default: data/energy.json). Bad input raises :class:`InputError` naming the field.
    """
    acc = _accelerator_of(estimate)
    count, hours, (low, high) = _hours(estimate)
    defaults = load_energy_defaults()
    power = _power(acc, board_power_w)
    facility, pue_value = _default(pue, defaults.pue)
    grid, intensity = _default(grid_kg_co2_per_kwh, defaults.grid_kg_co2_per_kwh)

    def device_kwh(wall_hours: float) -> float | None:
        return (None if power.value is None
                else count * power.value / WATTS_PER_KW * wall_hours)

    def at_facility(wall_hours: float) -> float | None:
        kwh = device_kwh(wall_hours)
        return None if kwh is None else kwh * pue_value

    kwh, kwh_low, kwh_high = at_facility(hours), at_facility(low), at_facility(high)
    kwh_range = None if kwh_low is None or kwh_high is None else (kwh_low, kwh_high)
    return EnergyEstimate(
        accelerator=acc.name,
        accelerator_key=acc.key,
        gpu_count=count,
        wall_hours=hours,
        wall_hours_range=(low, high),
        board_power_w=power,
        pue=facility,
        grid_kg_co2_per_kwh=grid,
        device_kwh=device_kwh(hours),
        kwh=kwh,
        kwh_range=kwh_range,
        co2_kg=None if kwh is None else kwh * intensity,
        co2_kg_range=(None if kwh_range is None
                      else (kwh_range[0] * intensity, kwh_range[1] * intensity)),
        scope=SCOPE,
    )
