"""Quantities as users type them: suffixes, separators, dollars."""

import math
import re

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from compute_budget.skill.errors import InputError, describe_error
from compute_budget.skill.quantities import (
    Count,
    FlopCount,
    FlopRate,
    Gain,
    Number,
    ParamCount,
    Price,
    TflopsPerDevice,
    TokenCount,
    TokensPerParam,
    Uncertainty,
    UsdAmount,
    parse_quantity,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("7B", 7e9),
        ("7b", 7e9),
        ("100B", 1e11),
        ("1.5T", 1.5e12),
        ("350M", 3.5e8),
        ("7e9", 7e9),
        ("7E9", 7e9),
        ("125K", 1.25e5),
        ("7,000,000", 7e6),
        ("7_000_000", 7e6),
        (" 13B ", 1.3e10),
        ("$2.10", 2.10),
        ("2G", 2e9),
        (".5B", 5e8),
        (7, 7.0),
        (2.5, 2.5),
    ],
)
def test_parse_quantity(text: object, value: float) -> None:
    assert parse_quantity(text) == pytest.approx(value)


@pytest.mark.parametrize(("text", "value"), [
    ("8.37B", 8.37e9),  # 8.37 × 1e9 in floats is 8369999999.999999
    ("7.69B", 7.69e9), ("153B", 153e9), ("0.1K", 100.0), ("2.2T", 2.2e12), ("1.53e2B", 153e9),
    ("$400k", 4e5), ("-8.37B", -8.37e9)])
def test_a_suffix_gives_the_number_its_exponent_form_does(text: str, value: float) -> None:
    # exactly: a count read back from a reply ('8.37B') is the number the reply was made from
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["1e400K", "1e999999999999B"])
def test_a_suffixed_number_past_the_float_range_is_refused(text: str) -> None:
    with pytest.raises(InputError) as info:
        parse_quantity(text, "tokens")
    assert str(info.value).startswith("tokens: ") and "finite" in str(info.value)


@pytest.mark.parametrize("text", ["seven", "7X", "", "B", "7BB", "1e400", "nan", "inf", None, True])
def test_parse_quantity_rejects_and_names_the_field(text: object) -> None:
    with pytest.raises(InputError) as info:
        parse_quantity(text, "tokens")
    assert info.value.field == "tokens"
    assert str(info.value).startswith("tokens: ")


class _Model(BaseModel):
    params: ParamCount
    price: Price = 1.0


def test_model_field_parses_suffixes() -> None:
    assert _Model(params="1.5T", price="$2.10").params == 1.5e12


@pytest.mark.parametrize("bad", [0, -1, "-7B", "nan", math.inf, "abc"])
def test_model_field_error_names_field_and_value(bad: object) -> None:
    with pytest.raises(ValidationError) as info:
        _Model(params=bad)
    message = describe_error(info.value)
    assert message.startswith("params: ")
    assert repr(bad) in message or str(bad) in message


def test_schema_accepts_strings_and_numbers() -> None:
    schema = _Model.model_json_schema()["properties"]["params"]
    types = {option.get("type") for option in schema["anyOf"]}
    assert types == {"number", "string"}


# --- bounds that keep every derived number finite (issue 9, item 5) ---------------------------

BOUNDED = [
    pytest.param(ParamCount, 1, 1e18, id="ParamCount"),
    pytest.param(TokenCount, 1, 1e17, id="TokenCount"),
    pytest.param(Price, 1e-4, 1000, id="Price"),
    pytest.param(FlopCount, 1e7, 1e35, id="FlopCount"),
    pytest.param(FlopRate, 1e6, 1e25, id="FlopRate"),
    pytest.param(UsdAmount, 0.01, 1e12, id="UsdAmount"),
    pytest.param(TflopsPerDevice, 1e-3, 1e6, id="TflopsPerDevice"),
    pytest.param(TokensPerParam, 0.1, 1e6, id="TokensPerParam"),
]


@pytest.mark.parametrize(("kind", "low", "high"), BOUNDED)
def test_quantities_accept_their_bounds_and_refuse_beyond(
    kind: object, low: float, high: float
) -> None:
    adapter: TypeAdapter[float] = TypeAdapter(kind)
    assert adapter.validate_python(low) == low
    assert adapter.validate_python(high) == high
    assert adapter.validate_python(str(high)) == high
    for beyond in (low * 0.999, high * 1.001, 5e-324, 1e308, -low):
        with pytest.raises(ValidationError,
                           match=re.escape(f"must be a number from {low:g} to {high:g}")):
            adapter.validate_python(beyond)


@pytest.mark.parametrize(("kind", "low", "high"), BOUNDED)
def test_quantity_schemas_state_their_bounds(kind: object, low: float, high: float) -> None:
    schema = TypeAdapter(kind).json_schema()
    (number,) = [option for option in schema["anyOf"] if option["type"] == "number"]
    assert (number["minimum"], number["maximum"]) == (low, high)


@pytest.mark.parametrize("kind", [*(p.values[0] for p in BOUNDED), Count, Number, Gain,
                                  Uncertainty])
@pytest.mark.parametrize("value", [True, False])
def test_booleans_are_not_numbers(kind: object, value: bool) -> None:
    with pytest.raises(ValidationError, match="must be a number, not true or false"):
        TypeAdapter(kind).validate_python(value)


def test_counts_take_whole_numbers_and_their_text() -> None:
    adapter: TypeAdapter[int] = TypeAdapter(Count)
    assert adapter.validate_python("8") == 8
    assert adapter.validate_python(8.0) == 8
    with pytest.raises(ValidationError):
        adapter.validate_python(8.5)


@pytest.mark.parametrize("value", [0.0, 1e-12, -1e-12, 0.5, -3, 1e12, -1e12, "2.5"])
def test_gains_between_a_resolution_and_a_limit(value: object) -> None:
    assert TypeAdapter(Gain).validate_python(value) == float(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(("kind", "value", "message"), [
    (Gain, 5e-13, "must be 0 or at least 1e-12 in magnitude"),
    (Gain, -1e-300, "must be 0 or at least 1e-12 in magnitude"),
    (Gain, 1.001e12, "must be a number from -1e+12 to 1e+12"),
    (Gain, -1e308, "must be a number from -1e+12 to 1e+12"),
    (Gain, math.nan, "must be a number from -1e+12 to 1e+12"),
    (Uncertainty, -1.0, "must be a number from 0 to 1e+12"),
    (Uncertainty, 5e-324, "must be 0 or at least 1e-12 in magnitude"),
    (Uncertainty, math.inf, "must be a number from 0 to 1e+12"),
])
def test_gains_refused_say_what_is_allowed(kind: object, value: float, message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        TypeAdapter(kind).validate_python(value)


def test_gain_schemas_state_their_bounds() -> None:
    assert TypeAdapter(Gain).json_schema() == {
        "type": "number", "minimum": -1e12, "maximum": 1e12}
    assert TypeAdapter(Uncertainty).json_schema() == {
        "type": "number", "minimum": 0.0, "maximum": 1e12}


def test_a_nested_field_keeps_its_name_when_errors_use_flag_names() -> None:
    # issue 17's calibration: "calibration[0].gpu_count" must not become "…[0].--gpus"
    from compute_budget.skill.errors import rename_fields

    aliases = {"gpu_count": "--gpus", "max_gpu_count": "--max-gpus"}
    assert rename_fields("calibration[0].gpu_count: bad; see max_gpu_count", aliases) == \
        "calibration[0].gpu_count: bad; see --max-gpus"
    assert rename_fields("gpu_count: bad", aliases) == "--gpus: bad"
