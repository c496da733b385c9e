"""Parsing and checking of the quantities users type: ``7B``, ``1.5T``, ``7e9``, ``$2.10``.

Suffixes are decimal, as parameter and token counts are always quoted: K = 10³, M = 10⁶,
B (or G) = 10⁹, T = 10¹², P = 10¹⁵. Thousands separators (``7,000,000`` or ``7_000_000``) and a
leading ``$`` (for prices) are accepted.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field

from .errors import InputError

__all__ = [
    "SUFFIXES",
    "FlopCount",
    "ParamCount",
    "PositiveQuantity",
    "Price",
    "TflopsPerDevice",
    "TokenCount",
    "UsdAmount",
    "bounded_quantity",
    "check_positive",
    "parse_quantity",
]

SUFFIXES: dict[str, float] = {
    "K": 1e3,
    "M": 1e6,
    "B": 1e9,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
}

_PATTERN = re.compile(
    r"""^\s*\$?\s*
    (?P<number>[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?)
    \s*(?P<suffix>[KkMmBbGgTtPp])?\s*$""",
    re.VERBOSE,
)

ALLOWED_FORMS = "a positive number such as 7e9, or with a suffix K, M, B, T (7B, 1.5T, 350M)"


def parse_quantity(value: object, field: str = "value") -> float:
    """Parse a number or a string such as ``"7B"`` into a float.

    Raises :class:`InputError` naming ``field`` when the value is not a finite number. Sign is
    not checked here (see :func:`check_positive`).
    """
    if isinstance(value, bool):
        raise InputError(field, value, ALLOWED_FORMS)
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        text = value.replace(",", "").replace("_", "")
        match = _PATTERN.match(text)
        if match is None:
            raise InputError(field, value, ALLOWED_FORMS)
        number = float(match["number"])
        suffix = match["suffix"]
        if suffix:
            number *= SUFFIXES[suffix.upper()]
    else:
        raise InputError(field, value, ALLOWED_FORMS)
    if not math.isfinite(number):
        raise InputError(field, value, "a finite number (not NaN or infinity)")
    return number


def check_positive(value: float, field: str) -> float:
    """Return ``value`` if it is a finite number above zero, else raise naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(field, value, "a positive finite number")
    if not math.isfinite(value) or value <= 0:
        raise InputError(field, value, "a positive finite number (> 0, not NaN or infinity)")
    return float(value)


MONEY_FORMS = "an amount in US dollars such as 400000, 4e5, '$400k' or '400,000'"


def _parser(allowed: str | None) -> Callable[[object], object]:
    def parse(value: object) -> object:
        # Inside a pydantic model the field name is added by pydantic itself (the error's
        # location), so only the string forms are translated here; numbers pass through to the
        # range check.
        if isinstance(value, str):
            try:
                return parse_quantity(value)
            except InputError as exc:
                raise ValueError(allowed or exc.allowed) from None
        return value

    return parse


_STRING_FORM = r"^\s*\$?\s*[+-]?(\d[\d,_]*(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*[KkMmBbGgTtPp]?\s*$"


def _accepts(maximum: float) -> Any:
    """What the JSON schema advertises: a number in (0, maximum], or a string like '7B'."""
    return Annotated[float, Field(gt=0, le=maximum)] | Annotated[str, Field(pattern=_STRING_FORM)]


def _in_range(maximum: float) -> Callable[[float], float]:
    def check(value: float) -> float:
        if not math.isfinite(value) or value <= 0 or value > maximum:
            if math.isinf(maximum):
                raise ValueError("must be a positive finite number")
            raise ValueError(f"must be a number > 0 and ≤ {maximum:g}")
        return value

    return check


def _quantity(maximum: float,
              allowed: str | None = None) -> tuple[BeforeValidator, AfterValidator]:
    return (BeforeValidator(_parser(allowed), json_schema_input_type=_accepts(maximum)),
            AfterValidator(_in_range(maximum)))


_ANY = _quantity(math.inf)
_COUNT = _quantity(1e15)
_TOKENS = _quantity(1e17)
_PRICE = _quantity(1000, MONEY_FORMS.replace("400000, 4e5, '$400k' or '400,000'",
                                              "2.1 or '$2.10'"))
_FLOPS = _quantity(1e35)
_USD = _quantity(1e12, MONEY_FORMS)
_TFLOPS = _quantity(1e6)

PositiveQuantity = Annotated[float, _ANY[0], _ANY[1]]
"""A finite number above zero; accepts ``7e9`` and ``"7B"``, ``"1.5T"``, ``"350M"``."""

ParamCount = Annotated[float, _COUNT[0], _COUNT[1]]
"""A parameter count in (0, 10¹⁵]; accepts ``7e9`` and ``"7B"``."""

TokenCount = Annotated[float, _TOKENS[0], _TOKENS[1]]
"""A token count in (0, 10¹⁷]; accepts ``1e11`` and ``"100B"``, ``"1.5T"``."""

Price = Annotated[float, _PRICE[0], _PRICE[1]]
"""US dollars per device-hour in (0, 1000]; accepts ``2.1`` and ``"$2.10"``."""


FlopCount = Annotated[float, _FLOPS[0], _FLOPS[1]]
"""A number of FLOPs in (0, 10³⁵]; accepts ``6e14`` and ``"1e24"``."""

UsdAmount = Annotated[float, _USD[0], _USD[1]]
"""US dollars in (0, 10¹²]; accepts ``50000``, ``"50K"`` and ``"$50,000"``."""

TflopsPerDevice = Annotated[float, _TFLOPS[0], _TFLOPS[1]]
"""TFLOP/s per device in (0, 10⁶]."""


def bounded_quantity(maximum: float) -> tuple[BeforeValidator, AfterValidator]:
    """Validators for a positive quantity up to ``maximum``: use as ``Annotated[float, *v]``."""
    return _quantity(maximum)
