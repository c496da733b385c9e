"""Parsing and checking of the quantities users type: ``7B``, ``1.5T``, ``7e9``, ``$2.10``.

Suffixes are decimal, as parameter and token counts are always quoted: K = 10³, M = 10⁶,
B (or G) = 10⁹, T = 10¹², P = 10¹⁵. Thousands separators (``7,000,000`` or ``7_000_000``) and a
leading ``$`` (for prices) are accepted; any other comma is refused as a decimal comma (``2,10``
is not read as 210).

Every number has bounds, wide enough for any real run and narrow enough that no number derived
from them (FLOPs, wall time, dollars, ratios of gains) overflows, underflows to zero or becomes
NaN; ``true`` and ``false`` are refused where a number is meant (pydantic would read 1 and 0).
"""

from __future__ import annotations

import functools
import inspect
import math
import re
import types
import typing
from collections.abc import Callable
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal
from typing import Annotated, Any, ParamSpec, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    InstanceOf,
    TypeAdapter,
    ValidationError,
    validate_call,
)

from .errors import ArgumentsError, InputError

__all__ = [
    "GAIN_LIMIT",
    "GAIN_RESOLUTION",
    "MAX_DEVICES",
    "MAX_FLOPS",
    "MIN_FLOPS",
    "SUFFIXES",
    "Count",
    "DeviceCount",
    "FlopCount",
    "FlopRate",
    "Gain",
    "NotBool",
    "Number",
    "OptionalCount",
    "ParamCount",
    "PositiveNumber",
    "Price",
    "SeqLen",
    "TflopsPerDevice",
    "TokenCount",
    "TokensPerParam",
    "Uncertainty",
    "UsdAmount",
    "WholeNumberText",
    "bounded_quantity",
    "check_positive",
    "decimal_comma",
    "name_count_pairs",
    "parse_quantity",
    "reject_bool",
    "validated",
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

_DECIMAL = Context(prec=40, Emax=MAX_EMAX, Emin=MIN_EMIN)
"""Decimal arithmetic for a suffixed number: more digits than a float holds, no overflow."""

ALLOWED_FORMS = "a positive number such as 7e9, or with a suffix K, M, B, T (7B, 1.5T, 350M)"

_THOUSANDS = re.compile(r"^\s*\$?\s*[+-]?\d{1,3}(,\d{3})+(?![\d,])")
"""Where a comma is allowed: between groups of three digits of the whole part (``7,000,000``,
``$1,500``, ``1,000B``), one to three digits before the first."""


def decimal_comma(text: object) -> str | None:
    """What is allowed when ``text`` has a comma that is not a thousands separator (``2,10``,
    ``1,5T``: a decimal comma, which must not be read as ``210`` or ``15T``); None when it is
    not text, has no comma or only thousands separators."""
    if not isinstance(text, str) or "," not in text or _THOUSANDS.match(text):
        return None
    example = text.strip().replace(",", ".", 1) if text.count(",") == 1 else "2.10"
    return (f"use a point for decimals: {example} (a comma only between groups of three "
            "digits, as in 7,000,000)")


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
        comma = decimal_comma(value)
        if comma is not None:
            raise InputError(field, value, comma)
        text = value.replace(",", "").replace("_", "")
        match = _PATTERN.match(text)
        if match is None:
            raise InputError(field, value, ALLOWED_FORMS)
        number = float(match["number"])
        suffix = match["suffix"]
        if suffix:
            # in decimal, rounded once: '8.37B' is 8.37e9, as '8.37e9' is (8.37 × 1e9 in
            # floats is 8369999999.999999); past the float range it is inf, refused below
            number = float(_DECIMAL.multiply(Decimal(match["number"]),
                                             Decimal(SUFFIXES[suffix.upper()])))
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
NOT_A_SWITCH = "must be a number, not true or false"


def reject_bool(value: object) -> object:
    """Refuse ``true``/``false`` where a number is meant (pydantic's lax mode reads them as 1
    and 0); pass every other value on."""
    if isinstance(value, bool):
        raise ValueError(NOT_A_SWITCH)
    return value


def _plain_number(value: object) -> object:
    """:func:`reject_bool`, and a decimal comma (``"0,5"``) refused with its hint, where pydantic
    would only say the text is not a number; every other value passes on."""
    comma = decimal_comma(reject_bool(value))
    if comma is not None:
        raise ValueError(comma)
    return value


NotBool = BeforeValidator(_plain_number)
"""Put it last in an ``Annotated[...]`` after the bounds, so that the JSON schema keeps them."""


def _parser(allowed: str | None) -> Callable[[object], object]:
    def parse(value: object) -> object:
        # Inside a pydantic model the field name is added by pydantic itself (the error's
        # location), so only the string forms are translated here; numbers pass through to the
        # range check.
        if isinstance(_plain_number(value), str):
            try:
                return parse_quantity(value)
            except InputError as exc:
                raise ValueError(allowed or exc.allowed) from None
        return value

    return parse


_STRING_FORM = r"^\s*\$?\s*[+-]?(\d[\d,_]*(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*[KkMmBbGgTtPp]?\s*$"


def _accepts(minimum: float, maximum: float) -> Any:
    """What the JSON schema advertises: a number in [minimum, maximum], or a string like '7B'."""
    return (Annotated[float, Field(ge=minimum, le=maximum)]
            | Annotated[str, Field(pattern=_STRING_FORM)])


def _in_range(minimum: float, maximum: float) -> Callable[[float], float]:
    def check(value: float) -> float:
        if not (math.isfinite(value) and minimum <= value <= maximum):
            raise ValueError(f"must be a number from {minimum:g} to {maximum:g}")
        return value

    return check


def _quantity(minimum: float, maximum: float,
              allowed: str | None = None) -> tuple[BeforeValidator, AfterValidator]:
    return (BeforeValidator(_parser(allowed), json_schema_input_type=_accepts(minimum, maximum)),
            AfterValidator(_in_range(minimum, maximum)))


# The bounds keep every derived number finite: 6·N·T ≤ 6·10³⁵ FLOPs, wall time at the slowest
# device (10⁻³ TFLOP/s at MFU 10⁻⁴) and dollars at $1000/h stay far below 10³⁰⁸. The budget split
# checks its own sizes as parameter counts: C ≤ 10³⁵ FLOPs (or $10¹² at $10⁻⁴/h on the fastest
# device) gives sizes √(C/6r) up to 10¹⁸ with r ≥ 0.1, and C ≥ 10⁷ FLOPs (or $0.01 at $1000/h)
# keeps them ≥ 1 with r ≤ 10⁶.
_RATIO = _quantity(0.1, 1e6)
_COUNT = _quantity(1, 1e18)
_TOKENS = _quantity(1, 1e17)
_PRICE = _quantity(1e-4, 1000, MONEY_FORMS.replace("400000, 4e5, '$400k' or '400,000'",
                                                    "2.1 or '$2.10'"))
MIN_FLOPS, MAX_FLOPS = 1e7, 1e35
"""The compute budgets accepted, in FLOPs (a real run is many orders inside them)."""
_FLOPS = _quantity(MIN_FLOPS, MAX_FLOPS)
_FLOP_RATE = _quantity(1e6, 1e25)
_USD = _quantity(0.01, 1e12, MONEY_FORMS)
_TFLOPS = _quantity(1e-3, 1e6)

TokensPerParam = Annotated[float, _RATIO[0], _RATIO[1]]
"""Tokens per parameter in [0.1, 10⁶]; accepts ``20`` and ``"20"``."""

ParamCount = Annotated[float, _COUNT[0], _COUNT[1]]
"""A parameter count in [1, 10¹⁸]; accepts ``7e9`` and ``"7B"``."""

TokenCount = Annotated[float, _TOKENS[0], _TOKENS[1]]
"""A token count in [1, 10¹⁷]; accepts ``1e11`` and ``"100B"``, ``"1.5T"``."""

Price = Annotated[float, _PRICE[0], _PRICE[1]]
"""US dollars per device-hour in [10⁻⁴, 1000]; accepts ``2.1`` and ``"$2.10"``."""

FlopCount = Annotated[float, _FLOPS[0], _FLOPS[1]]
"""A number of FLOPs in [10⁷, 10³⁵]; accepts ``6e14`` and ``"1e24"``."""

FlopRate = Annotated[float, _FLOP_RATE[0], _FLOP_RATE[1]]
"""FLOP/s of a whole machine in [10⁶, 10²⁵]; accepts ``1e12`` and ``"1T"``."""

UsdAmount = Annotated[float, _USD[0], _USD[1]]
"""US dollars in [0.01, 10¹²]; accepts ``50000``, ``"50K"`` and ``"$50,000"``."""

TflopsPerDevice = Annotated[float, _TFLOPS[0], _TFLOPS[1]]
"""TFLOP/s per device in [10⁻³, 10⁶]."""


def bounded_quantity(minimum: float,
                     maximum: float) -> tuple[BeforeValidator, AfterValidator]:
    """Validators for a quantity in [minimum, maximum]: use as ``Annotated[float, *v]``."""
    return _quantity(minimum, maximum)


# --- plain numbers: no suffixes, no booleans ---------------------------------------------

GAIN_LIMIT = 1e12
"""Largest magnitude of a gain, a baseline, a metric or an uncertainty, in the user's units."""
GAIN_RESOLUTION = 1e-12
"""Smallest non-zero magnitude of those: below it a ratio such as gain ÷ σ leaves the floats."""


def _gain_range(minimum: float) -> Callable[[float], float]:
    def check(value: float) -> float:
        if not (math.isfinite(value) and minimum <= value <= GAIN_LIMIT):
            raise ValueError(f"must be a number from {minimum:g} to {GAIN_LIMIT:g}")
        if value != 0 and abs(value) < GAIN_RESOLUTION:
            raise ValueError(f"must be 0 or at least {GAIN_RESOLUTION:g} in magnitude")
        return value

    return check


def _plain(minimum: float) -> tuple[BeforeValidator, Any, AfterValidator]:
    return (NotBool, Field(json_schema_extra={"minimum": minimum, "maximum": GAIN_LIMIT}),
            AfterValidator(_gain_range(minimum)))


Count = Annotated[int, NotBool]
"""A whole number (``8`` or ``"8"``, not ``true``); give its bounds with ``Field(ge=, le=)``."""

MAX_DEVICES = 10_000_000
"""The most devices any spec or function accepts."""
DeviceCount = Annotated[int, Field(ge=1, le=MAX_DEVICES), NotBool]
"""A number of devices in [1, 10⁷] (``8`` or ``"8"``; not ``8.5``, not ``true``)."""

SeqLen = Annotated[int, Field(ge=1, le=10_000_000), NotBool]
"""A sequence length in tokens, in [1, 10⁷]."""

OptionalCount = Annotated[int | None, NotBool]
""":data:`Count` or None (the check outside the union, so that the schema keeps the bounds)."""

_WHOLE_NUMBER: TypeAdapter[int] = TypeAdapter(int)


def _whole_number_text(value: object) -> object:
    """Text that pydantic's lax mode reads as a whole number for an ``int`` field (``"4"``, a
    CSV cell) as that int; every other value passes on unchanged, for the field's own check."""
    if isinstance(value, str):
        try:
            return _WHOLE_NUMBER.validate_python(value)
        except ValidationError:
            return value
    return value


WholeNumberText = BeforeValidator(_whole_number_text)
"""For a choice of whole numbers, ``Annotated[Literal[4, 8, 16], WholeNumberText]``: pydantic
matches a ``Literal`` only against ints, so text such as a CSV cell's ``"4"`` would be refused
where an ``int`` field reads it. The JSON schema keeps the choice."""

Number = Annotated[float, Field(allow_inf_nan=False), NotBool]
"""A finite number (not ``true``); give its bounds with ``Field(ge=, le=)``."""

PositiveNumber = Annotated[float, Field(gt=0, allow_inf_nan=False), NotBool]
"""A finite number above zero (FLOPs per token, a ratio of two counts)."""

_GAIN = _plain(-GAIN_LIMIT)
_SIGMA = _plain(0.0)

Gain = Annotated[float, _GAIN[0], _GAIN[1], _GAIN[2]]
"""A gain, a baseline or a metric, in the user's units: 0 or 10⁻¹² ≤ |x| ≤ 10¹²."""

Uncertainty = Annotated[float, _SIGMA[0], _SIGMA[1], _SIGMA[2]]
"""A 1σ uncertainty in the user's units: 0 or 10⁻¹² ≤ σ ≤ 10¹²."""


_CALL_CONFIG = ConfigDict(arbitrary_types_allowed=True)
"""Arguments typed by a class pydantic does not model (a protocol) are checked by isinstance."""
_P = ParamSpec("_P")
_R = TypeVar("_R")


def validated(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """``function`` with its arguments checked against their annotated types (the spec types
    above, so a library call and a spec refuse the same values), every bad argument reported
    at once as an :class:`~.errors.ArgumentsError` naming each. The checker is built on the
    first call (building it costs more than most calls), so importing a module stays cheap."""
    checked: list[Callable[..., _R]] = []
    signature: list[inspect.Signature] = []

    @functools.wraps(function)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if not checked:
            checked.append(validate_call(config=_CALL_CONFIG)(_instances_as_given(function)))
            signature.append(inspect.signature(function))
        named = signature[0].bind(*args, **kwargs).arguments  # names errors
        try:
            return checked[0](**named)
        except ValidationError as exc:
            raise ArgumentsError(exc) from None

    return call


def _instances_as_given(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """A copy of ``function`` whose model-typed arguments are checked with isinstance only: a
    spec passed in is already validated, and validating it again would run its validators
    (and read its config file) a second time."""
    hints = typing.get_type_hints(function, include_extras=True)
    copy = types.FunctionType(function.__code__, function.__globals__, function.__name__,
                              function.__defaults__, function.__closure__)
    copy.__kwdefaults__ = function.__kwdefaults__
    instance_of: Any = InstanceOf
    copy.__annotations__ = {name: instance_of[hint] if isinstance(hint, type)
                            and issubclass(hint, BaseModel) else hint
                            for name, hint in hints.items()}
    return copy


def name_count_pairs(text: str, field: str) -> dict[str, str]:
    """``h100=64,a100=128`` → {"h100": "64", "a100": "128"} (the counts left to their field's
    type); InputError naming ``field`` on a malformed or repeated pair."""
    out: dict[str, str] = {}
    for item in (i.strip() for i in text.split(",") if i.strip()):
        name, sep, count = item.partition("=")
        if not sep or not name.strip() or not count.strip():
            raise InputError(field, text, "NAME=COUNT pairs separated by commas, e.g. "
                                          "h100=64,a100=128")
        if name.strip().lower() in (known.lower() for known in out):
            raise InputError(field, text, f"each name once ({name.strip()} is given twice)")
        out[name.strip()] = count.strip()
    return out
