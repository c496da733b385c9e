"""Parsing and checking of the quantities users type: ``7B``, ``1.5T``, ``7e9``, ``$2.10``.

Suffixes are decimal, as parameter and token counts are always quoted: K = 10³, M = 10⁶,
B (or G) = 10⁹, T = 10¹², P = 10¹⁵. Thousands separators (``7,000,000`` or ``7_000_000``) and a
leading ``$`` (for prices) are accepted.
"""

from __future__ import annotations

import math
import re
from typing import Annotated

from pydantic import BeforeValidator, Field

from .errors import InputError

__all__ = [
    "SUFFIXES",
    "PositiveQuantity",
    "Price",
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


def _parse_for_model(value: object) -> object:
    # Inside a pydantic model the field name is added by pydantic itself (the error's location),
    # so only the string forms are translated here; numbers pass through to pydantic's checks.
    if isinstance(value, str):
        try:
            return parse_quantity(value)
        except InputError as exc:
            raise ValueError(exc.allowed) from None
    return value


PositiveQuantity = Annotated[
    float,
    BeforeValidator(_parse_for_model, json_schema_input_type=float | str),
    Field(gt=0, allow_inf_nan=False),
]
"""A count above zero; accepts ``7e9`` and ``"7B"``, ``"1.5T"``, ``"350M"``."""

Price = Annotated[
    float,
    BeforeValidator(_parse_for_model, json_schema_input_type=float | str),
    Field(gt=0, allow_inf_nan=False),
]
"""US dollars above zero; accepts ``2.1`` and ``"$2.10"``."""
