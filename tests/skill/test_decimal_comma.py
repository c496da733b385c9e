"""A comma is a thousands separator only (review: over MCP '2,10' was read as $210/GPU-h, '1,5T'
as 15T, '7,5B' as 75B and a budget of '200,5' as $2,005). Every string a number is read from, in
a spec, an argument or a data file, refuses any other comma, naming the field and the value and
asking for a decimal point."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from compute_budget.skill import RunSpec
from compute_budget.skill.advice.candidates import parse_candidates, validate_candidates
from compute_budget.skill.errors import InputError, describe_error
from compute_budget.skill.hardware.calibration_text import parse_calibration
from compute_budget.skill.quantities import DeviceCount, Gain, parse_quantity
from compute_budget.skill.scaling.points import parse_points

RUN = {"params": "7B", "tokens": "1T", "gpu": "h100", "gpu_count": 8}


@pytest.mark.parametrize(("text", "value"), [
    ("7,000,000,000", 7e9), ("$1,500", 1500.0), ("1,000B", 1e12), ("1,000.5", 1000.5),
    ("-2,500", -2500.0), (" 12,345,678 ", 12345678.0)])
def test_thousands_separators_stay_valid(text: str, value: float) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize(("text", "point"), [
    ("2,10", "2.10"), ("1,5T", "1.5T"), ("7,5B", "7.5B"), ("200,5", "200.5"), ("$2,1", "$2.1"),
    ("1,0000", "1.0000"), ("1234,567", "1234.567"), (",5", ".5"), ("1,000,00", "2.10"),
    ("1,000,0000", "2.10"), ("1,5,000", "2.10"), ("1.5,000", "1.5.000")])
def test_any_other_comma_is_refused_asking_for_a_point(text: str, point: str) -> None:
    with pytest.raises(InputError) as info:
        parse_quantity(text, "tokens")
    assert str(info.value).startswith(f"tokens: {text!r} is not allowed; use a point for "
                                      f"decimals: {point} ")


def test_a_spec_names_each_field_with_a_decimal_comma() -> None:
    with pytest.raises(ValidationError) as info:
        RunSpec(**{**RUN, "params": "7,5B", "tokens": "1,5T", "usd_per_gpu_hour": "2,10"})
    lines = describe_error(info.value).splitlines()
    assert sorted(lines) == [
        "params: '7,5B' is not allowed; use a point for decimals: 7.5B (a comma only between "
        "groups of three digits, as in 7,000,000)",
        "tokens: '1,5T' is not allowed; use a point for decimals: 1.5T (a comma only between "
        "groups of three digits, as in 7,000,000)",
        "usd_per_gpu_hour: '2,10' is not allowed; use a point for decimals: 2.10 (a comma only "
        "between groups of three digits, as in 7,000,000)"]


def test_a_spec_reads_thousands_separators() -> None:
    spec = RunSpec(**{**RUN, "params": "7,000,000,000", "tokens": "1,000B"})
    assert (spec.params, spec.tokens) == (7e9, 1e12)


@pytest.mark.parametrize("kind", [Gain, DeviceCount])
def test_plain_numbers_say_why_a_decimal_comma_is_refused(kind: object) -> None:
    # pydantic alone would say only that the text is not a number
    with pytest.raises(ValidationError, match=r"use a point for decimals: 0\.5 "):
        TypeAdapter(kind).validate_python("0,5")


def test_a_calibration_file_refuses_decimal_commas() -> None:
    with pytest.raises(InputError) as info:  # a CSV's rows are named by the file's line
        parse_calibration('params,tokens,gpu,gpu_hours,wall_days,gpu_count\n'
                          '"7,5B",1T,h100,"30000,5",,\n'
                          '7B,1T,h100,,"3,5",8\n')
    lines = describe_error(info.value).splitlines()
    assert lines[0].startswith("line 2, column params: '7,5B' is not allowed; use a point")
    assert lines[1].startswith("line 2, column gpu_hours: '30000,5' is not allowed; use a point "
                               "for decimals: 30000.5 ")
    assert lines[2].startswith("line 3, column wall_days: '3,5' is not allowed; use a point")


def test_a_candidates_file_refuses_decimal_commas() -> None:
    rows = parse_candidates("name,params,tokens,gpu,gpus,gain,uncertainty,price\n"
                            'a,7B,1T,h100,8,"0,5",0.1,"2,10"\n'
                            "b,7B,1T,h100,8,0.5,0.1,2.10\n")
    with pytest.raises(InputError) as info:
        validate_candidates(rows)
    message = str(info.value)
    assert "line 2, column predicted_gain: '0,5' is not allowed; use a point for decimals: 0.5" \
        in message
    assert "line 2, column usd_per_gpu_hour: '2,10' is not allowed; use a point for decimals: " \
        "2.10" in message


@pytest.mark.parametrize(("cells", "field", "point"), [
    ('"1,5e18",3.1', "compute", "1.5e18"), ('1e18,"3,1"', "loss", "3.1")])
def test_scaling_points_refuse_decimal_commas(cells: str, field: str, point: str) -> None:
    with pytest.raises(InputError) as info:
        parse_points(f"compute,loss\n1e17,3.5\n{cells}\n")
    assert str(info.value).startswith(f"points[1].{field}: ")
    assert f"use a point for decimals: {point} " in str(info.value)
