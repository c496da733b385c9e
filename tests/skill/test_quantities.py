"""Quantities as users type them: suffixes, separators, dollars."""

import math

import pytest
from pydantic import BaseModel, ValidationError

from compute_budget.skill.errors import InputError, describe_error
from compute_budget.skill.quantities import PositiveQuantity, Price, parse_quantity


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


@pytest.mark.parametrize("text", ["seven", "7X", "", "B", "7BB", "1e400", "nan", "inf", None, True])
def test_parse_quantity_rejects_and_names_the_field(text: object) -> None:
    with pytest.raises(InputError) as info:
        parse_quantity(text, "tokens")
    assert info.value.field == "tokens"
    assert str(info.value).startswith("tokens: ")


class _Model(BaseModel):
    params: PositiveQuantity
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
