"""Energy and CO2 of a run: the formula, the sourced defaults, overrides, unknowns, bad input."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from compute_budget.skill.errors import InputError
from compute_budget.skill.estimate import estimate_run
from compute_budget.skill.hardware.catalog import get_accelerator, list_accelerators
from compute_budget.skill.hardware.energy import PUE_RANGE, energy_of, load_energy_defaults
from compute_budget.skill.run_spec import RunSpec


def _run(gpu: str = "h100", count: int = 8, hours: float = 100.0,
         span: tuple[float, float] = (80.0, 130.0)) -> SimpleNamespace:
    return SimpleNamespace(accelerator_key=get_accelerator(gpu).key, gpu_count=count,
                           wall_hours=hours, wall_hours_range=span)


def test_golden_example_by_hand() -> None:
    # 8 devices × 0.7 kW × 100 h = 560 kWh at the devices; × PUE 1.2 = 672 kWh;
    # × 0.4 kg/kWh = 268.8 kg CO2e (the brief's hand-computed example).
    e = energy_of(_run(), board_power_w=700, pue=1.2, grid_kg_co2_per_kwh=0.4)
    assert e.device_kwh == pytest.approx(560.0)
    assert e.kwh == pytest.approx(672.0)
    assert e.co2_kg == pytest.approx(268.8)
    # the range follows the wall hours: 80 h and 130 h
    assert e.kwh_range == pytest.approx((537.6, 873.6))
    assert e.co2_kg_range == pytest.approx((215.04, 349.44))
    assert all(a.given_by_user for a in (e.board_power_w, e.pue, e.grid_kg_co2_per_kwh))


def test_defaults_come_from_the_catalog_and_the_energy_data() -> None:
    defaults = load_energy_defaults()
    e = energy_of(_run())
    # H100 SXM: "up to 700 W" (NVIDIA H100 page, quoted in the catalog's source).
    assert e.board_power_w.value == 700.0
    assert e.board_power_w.origin == "catalog"
    assert "700 W" in (e.board_power_w.source or "")
    assert e.pue.value == defaults.pue.value
    assert e.pue.origin == "default"
    assert e.pue.as_of == defaults.pue.as_of
    assert e.grid_kg_co2_per_kwh.value == defaults.grid_kg_co2_per_kwh.value
    assert not e.pue.given_by_user
    assert e.kwh == pytest.approx(8 * 0.7 * 100 * defaults.pue.value)
    assert e.co2_kg == pytest.approx(e.kwh * defaults.grid_kg_co2_per_kwh.value)  # type: ignore[operator]


def test_the_defaults_are_the_cited_figures() -> None:
    # Uptime Institute 2024 survey: average PUE 1.56; Ember Global Electricity Review 2024:
    # 480 gCO2/kWh in 2023.
    defaults = load_energy_defaults()
    assert defaults.pue.value == 1.56
    assert "Uptime" in defaults.pue.source and defaults.pue.as_of == "2024"
    assert defaults.grid_kg_co2_per_kwh.value == 0.48
    assert "Ember" in defaults.grid_kg_co2_per_kwh.source
    assert PUE_RANGE[0] <= defaults.pue.value <= PUE_RANGE[1]
    for default in (defaults.pue, defaults.grid_kg_co2_per_kwh):
        assert "assumption" in default.why


def test_a_run_estimate_is_accepted_and_its_ranges_are_ordered() -> None:
    estimate = estimate_run(RunSpec(params="7B", tokens="100B", gpu="a100", gpu_count=16))
    e = energy_of(estimate, pue=1.1)
    assert e.gpu_count == 16 and e.accelerator_key == "a100-80gb"
    assert e.wall_hours == estimate.wall_hours
    # A100 SXM: 400 W
    assert e.kwh == pytest.approx(16 * 0.4 * estimate.wall_hours * 1.1)
    assert e.kwh_range is not None and e.co2_kg_range is not None and e.co2_kg is not None
    assert e.kwh_range[0] <= e.kwh <= e.kwh_range[1]  # type: ignore[operator]
    assert e.co2_kg_range[0] <= e.co2_kg <= e.co2_kg_range[1]
    assert e.kwh_range[0] < e.kwh_range[1]


def test_an_accelerator_object_is_accepted() -> None:
    run = SimpleNamespace(accelerator=get_accelerator("mi300x"), gpu_count=2, wall_hours=10.0,
                          wall_hours_range=(10.0, 10.0))
    e = energy_of(run, pue=1.0, grid_kg_co2_per_kwh=0.5)
    # MI300X: 750 W → 2 × 0.75 kW × 10 h = 15 kWh, 7.5 kg
    assert e.kwh == pytest.approx(15.0)
    assert e.co2_kg == pytest.approx(7.5)


def test_unknown_board_power_is_unknown_not_zero() -> None:
    assert get_accelerator("h800").board_power_w is None
    e = energy_of(_run("h800"))
    assert e.board_power_w.value is None and e.board_power_w.origin is None
    assert e.device_kwh is None and e.kwh is None and e.co2_kg is None
    assert e.kwh_range is None and e.co2_kg_range is None
    # the user's figure fills the gap
    given = energy_of(_run("h800"), board_power_w=700)
    assert given.kwh == pytest.approx(8 * 0.7 * 100 * load_energy_defaults().pue.value)
    assert given.board_power_w.given_by_user


def test_a_clean_grid_given_by_the_user_has_little_co2() -> None:
    # the cleanest grid accepted, 1 g per kWh (the same bound the run spec holds)
    e = energy_of(_run(), grid_kg_co2_per_kwh=0.001)
    assert e.kwh is not None and e.kwh > 0
    assert e.co2_kg == pytest.approx(e.kwh * 0.001)
    assert e.grid_kg_co2_per_kwh.given_by_user


def test_scope_says_what_is_left_out() -> None:
    e = energy_of(_run())
    assert set(e.scope) == {"board_power_upper_bound", "devices_only", "nominal_run"}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"pue": 0.9}, "pue"),
        ({"pue": 3.5}, "pue"),
        ({"pue": math.nan}, "pue"),
        ({"pue": True}, "pue"),
        ({"pue": "high"}, "pue"),
        ({"grid_kg_co2_per_kwh": -0.1}, "grid_kg_co2_per_kwh"),
        ({"grid_kg_co2_per_kwh": 5.0}, "grid_kg_co2_per_kwh"),
        ({"grid_kg_co2_per_kwh": math.inf}, "grid_kg_co2_per_kwh"),
        ({"board_power_w": 0}, "board_power_w"),
        ({"board_power_w": -700}, "board_power_w"),
        ({"board_power_w": 1e6}, "board_power_w"),
        ({"board_power_w": False}, "board_power_w"),
    ],
)
def test_bad_assumptions_name_the_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as info:
        energy_of(_run(), **kwargs)  # type: ignore[arg-type]
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: ")


def test_assumptions_are_read_as_the_run_spec_reads_them() -> None:
    """Issue 15: the library takes the spec's types, so "1.2" is read as the spec reads it."""
    assert energy_of(_run(), pue="1.2") == energy_of(_run(), pue=1.2)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("run", "field"),
    [
        (SimpleNamespace(gpu_count=8, wall_hours=1.0, wall_hours_range=(1.0, 1.0)),
         "accelerator_key"),
        (SimpleNamespace(accelerator_key="nope", gpu_count=8, wall_hours=1.0,
                         wall_hours_range=(1.0, 1.0)), "accelerator_key"),
        (_run(count=0), "gpu_count"),
        (_run(hours=math.nan), "wall_hours"),
        (_run(span=(130.0, 80.0)), "wall_hours_range"),
    ],
)
def test_a_bad_run_names_the_field(run: SimpleNamespace, field: str) -> None:
    with pytest.raises(InputError) as info:
        energy_of(run)  # type: ignore[arg-type]
    assert info.value.field == field


def test_every_board_power_in_the_catalog_has_a_source() -> None:
    powered = [acc for acc in list_accelerators() if acc.board_power_w is not None]
    assert len(powered) >= 15
    for acc in list_accelerators():
        assert (acc.board_power_w is None) == (acc.board_power_source is None), acc.key
        if acc.board_power_w is not None:
            assert 50 <= acc.board_power_w <= 1500, acc.key
    # the figures the catalog's own spec sources quote
    quoted = {"a100-40gb": 400, "l40s": 350, "h100-sxm": 700, "h200": 700, "mi300x": 750,
              "mi325x": 1000, "tpu-v4": 192, "gaudi2": 600, "gaudi3": 900, "l4": 72}
    for key, watts in quoted.items():
        assert get_accelerator(key).board_power_w == watts, key


@pytest.mark.parametrize(("field", "value"), [("board_power_w", 0.5), ("grid_kg_co2_per_kwh", 0),
                                              ("pue", 0.9)])
def test_energy_of_holds_the_bounds_the_run_spec_holds(field: str, value: float) -> None:
    with pytest.raises(InputError, match=rf"^{field}: "):
        energy_of(_run(), **{field: value})
    with pytest.raises(ValueError, match=field):
        RunSpec(params="7B", tokens="1T", gpu="h100", gpu_count=8, **{field: value})
