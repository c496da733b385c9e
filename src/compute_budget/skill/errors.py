"""Errors raised by compute-budget.

Every error a user can cause is a ``ValueError`` so that plain Python callers can catch it the
usual way; the hierarchy lets the CLI and the MCP server tell "your input is wrong" (exit status
2, an ``isError`` tool result) from a bug::

    ValueError
    └── ComputeBudgetError           anything compute-budget rejects
        ├── NotFiniteResultError     the numbers given make a result that is not finite
        └── InputError               one named field has a value that is not allowed
            ├── UnknownAcceleratorError   the accelerator name is not in the catalog
            ├── ConfigError               a model config (file or mapping) is unusable
            │   └── UnreachableError      a model id is well formed but could not be fetched
            ├── ArgumentsError            a library function's arguments its types refuse
            └── MultipleInputError        several named fields at once (the cells of a table)

Pydantic's ``ValidationError`` (also a ``ValueError``) is turned into the same kind of message by
:func:`describe_validation_error`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

__all__ = [
    "QUOTED_VALUE",
    "SUGGESTED",
    "ArgumentsError",
    "ComputeBudgetError",
    "ConfigError",
    "InputError",
    "MultipleInputError",
    "NotFiniteResultError",
    "UnknownAcceleratorError",
    "describe_error",
    "describe_validation_error",
    "not_finite_cause",
    "plain_message",
    "rename_fields",
    "shown_field",
    "shown_value",
]


MAX_SHOWN_VALUE = 120
"""Characters of a value an error quotes (its repr); longer ones are cut with "…"."""
MAX_SHOWN_FIELD = 60
_INLINE_MARKUP = re.compile(r"([`*<>|]|\](?=\())")
"""Markup that could style or link inside a quoted value (a repr keeps it on one line)."""


def _count(value: object) -> str | None:
    """``value`` with a K/M/B/T suffix when it is a float of at least 10⁶ that one writes so
    (at most three decimals of its unit); None otherwise."""
    if not isinstance(value, float) or not math.isfinite(value) or abs(value) < 1e6:
        return None
    scale, suffix = next((s, x) for s, x in ((1e12, "T"), (1e9, "B"), (1e6, "M"))
                         if abs(value) >= s)
    unit = value / scale
    return f"{unit:g}{suffix}" if abs(unit) < 1e4 and round(unit, 3) == unit else None


def shown_value(value: object) -> str:
    """A value as every error quotes it: its repr, so control, bidi and zero-width characters
    are escapes (``\\x1b``, ``\\u202e``) and newlines cannot start a heading or a table row;
    inline markup backslash-escaped; at most :data:`MAX_SHOWN_VALUE` characters. A large round
    number reads as it is written (``1e10`` → ``10B``, not ``10000000000.0``)."""
    text = _count(value) or repr(value)
    if len(text) > MAX_SHOWN_VALUE:
        text = text[: MAX_SHOWN_VALUE - 1] + "…"
    return _INLINE_MARKUP.sub(r"\\\1", text)


def shown_field(field: object) -> str:
    """A field's name as every error shows it (it may be the caller's text, a key of an
    argument): printable characters only, inline markup escaped, at most
    :data:`MAX_SHOWN_FIELD` characters."""
    text = "".join(ch if ch.isprintable() else "?" for ch in str(field))
    if len(text) > MAX_SHOWN_FIELD:
        text = text[: MAX_SHOWN_FIELD - 1] + "…"
    return _INLINE_MARKUP.sub(r"\\\1", text)


class ComputeBudgetError(ValueError):
    """Base class for everything compute-budget rejects."""


class NotFiniteResultError(ComputeBudgetError):
    """The inputs are each within bounds, but a number of the result is infinite or NaN: the
    last guard (every result checks itself, :class:`~.vocabulary.FiniteResult`)."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(f"the result is not a finite number ({path}): the numbers given are "
                         "too extreme for a real run; bring them closer to one")


class InputError(ComputeBudgetError):
    """A named field has a value that is not allowed.

    The message names the field, the value (with ``!r``) and what is allowed.
    """

    def __init__(self, field: str, value: object, allowed: str) -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        if value is None:
            super().__init__(f"{shown_field(field)}: required but missing; {allowed}")
        else:
            super().__init__(f"{shown_field(field)}: {shown_value(value)} is not allowed; "
                             f"{allowed}")


class UnknownAcceleratorError(InputError):
    """The accelerator name matches nothing in the catalog."""

    def __init__(self, field: str, value: object, suggestions: list[str]) -> None:
        self.suggestions = suggestions
        hint = (
            "did you mean " + ", ".join(repr(s) for s in suggestions) + "?"
            if suggestions
            else "no close match"
        )
        super().__init__(
            field,
            value,
            f"unknown accelerator ({hint})",
        )


class ConfigError(InputError):
    """A model configuration is missing a field, contradicts itself or cannot be read."""


class UnreachableError(ConfigError):
    """A named source (a Hugging Face model id) is well formed but could not be fetched: the
    value is not at fault, the network or the cache is."""

    def __init__(self, field: str, value: object, allowed: str) -> None:
        self.field, self.value, self.allowed = field, value, allowed
        ValueError.__init__(self, f"{shown_field(field)}: {shown_value(value)} could not be "
                                  f"fetched; {allowed}")


class ArgumentsError(InputError):
    """Arguments of a library function that the spec types refuse: every bad one, a line each
    (:func:`~.quantities.validated`). ``field``, ``value`` and ``allowed`` are the first's."""

    def __init__(self, exc: ValidationError) -> None:
        first = exc.errors(include_url=False)[0]
        self.field = _location(tuple(first.get("loc", ())))
        self.value = first.get("input")
        self.allowed = plain_message(str(first.get("msg", "invalid")))
        ValueError.__init__(self, describe_validation_error(exc))


class MultipleInputError(InputError):
    """Several named fields with values that are not allowed, each an :class:`InputError` (every
    bad cell of a table of candidates): one line each, in order. ``field``, ``value`` and
    ``allowed`` are the first's; ``errors`` holds them all."""

    def __init__(self, errors: Sequence[InputError]) -> None:
        if not errors:
            raise ValueError("MultipleInputError needs at least one error")
        self.errors = tuple(errors)
        first = self.errors[0]
        self.field, self.value, self.allowed = first.field, first.value, first.allowed
        ValueError.__init__(self, "\n".join(str(e) for e in self.errors))


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"  # an item of a list: candidates[0].gpu
        elif not part.startswith("function-"):
            text += f".{part}" if text else part
    return shown_field(text or "input")  # an unknown argument's name is the caller's text


_PYDANTIC_PHRASES = (
    ("Input should be greater than or equal to ", "must be ≥ "),
    ("Input should be less than or equal to ", "must be ≤ "),
    ("Input should be greater than ", "must be > "),
    ("Input should be less than ", "must be < "),
    ("Input should be ", "must be "),
)


def plain_message(msg: str) -> str:
    """A pydantic error message in this package's words ("must be ≥ 1")."""
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix) :]
    for phrase, plain in _PYDANTIC_PHRASES:
        if msg.startswith(phrase):
            return plain + msg[len(phrase) :]
    return msg


def _hinted(error: BaseException, catalog_hint: str | None,
            shown_as: Mapping[str, object] | None = None) -> str:
    if isinstance(error, MultipleInputError):
        return "\n".join(_hinted(e, catalog_hint, shown_as) for e in error.errors)
    if shown_as and type(error) is InputError and error.field in shown_as:
        error = InputError(error.field, shown_as[error.field], error.allowed)
    text = str(error)
    if catalog_hint and isinstance(error, UnknownAcceleratorError):
        text += f"; {catalog_hint}"
    return text


def describe_validation_error(exc: ValidationError, catalog_hint: str | None = None,
                              skip: frozenset[str] = frozenset(),
                              shown_as: Mapping[str, object] | None = None) -> str:
    """Turn a pydantic ``ValidationError`` into lines that name field, value and what is allowed
    (leaving out the fields named in ``skip`` that are missing: a door that asks for them;
    quoting the value of a field in ``shown_as`` as given there)."""
    lines: list[str] = []
    for err in exc.errors(include_url=False):
        if err.get("type") == "missing" and str((err.get("loc") or ("",))[0]) in skip:
            continue
        loc = _location(tuple(err.get("loc", ())))
        msg = plain_message(str(err.get("msg", "invalid")))
        kind = err.get("type", "")
        original = (err.get("ctx") or {}).get("error")
        if isinstance(original, ComputeBudgetError):
            lines.append(_hinted(original, catalog_hint, shown_as))
        elif kind == "missing":
            lines.append(f"{loc}: required but missing")
        elif err.get("input") is None:  # left out (null), as an InputError says it
            lines.append(f"{loc}: required but missing; {msg}")
        elif kind == "extra_forbidden":
            lines.append(f"{loc}: unknown argument (not one this accepts)")
        else:
            value: Any = err.get("input")
            lines.append(f"{loc}: {shown_value(value)} is not allowed; {msg}")
    return "\n".join(lines)


PLAIN_AFTER = ("with", "as", "give", "given", "than", "most", "least", "from", "leave")
"""Words after which a plain name (``experts``, ``mfu``) names a field: "give experts", "at most
params", "not together with mfu"; elsewhere such a name is an English word."""
_BESIDE_MATH = re.compile(r" (?:\(\d|[×/<>≤≥] )")
"""After a name: its value quoted (``hidden (4096)``) or arithmetic (``tp × pp``, ``tp > 1``)."""
_AFTER = re.compile(rf"(?:\b(?i:{'|'.join(PLAIN_AFTER)})|[×/]) $")  # "With gpu" too
_JOINED = re.compile(r",? (?:and|or) |, ")


def _names_a_field(text: str, start: int, end: int, joined_to: int | None) -> bool:
    """Whether the plain name at ``text[start:end]`` names a field (``joined_to``: where the
    name renamed last ends)."""
    if "·" in (text[start - 1 : start], text[end : end + 1]):  # a formula's: 6·params·tokens
        return False
    return bool(_AFTER.search(text, 0, start) or _BESIDE_MATH.match(text, end)
                or (joined_to is not None and _JOINED.fullmatch(text, joined_to, start)))


QUOTED_VALUE = re.compile(r"'[^']*'|\"[^\"]*\"")
"""A value quoted in a message (its repr): never renamed (it is what the user gave), and left
out where it may have been read from a file (:mod:`..cli.files`)."""
SUGGESTED = re.compile(r"did you mean (?:'[^']*'(?:, )?)+\?")
"""The names a message suggests (``did you mean 'l40s', 'l4'?``): the catalog's or the presets',
never the user's text, so a reader that leaves out quoted values keeps them."""


def rename_fields(text: str, aliases: Mapping[str, str]) -> str:
    """``text`` with the fields it names as the caller knows them (``aliases``: field → its
    name there, the CLI's flag): the leading ``field:`` always; a snake_case name, or a name in
    backticks, anywhere; a plain one (``experts``) where it names the field, not an English
    word: after a word of :data:`PLAIN_AFTER`, beside its value or arithmetic (``hidden
    (4096)``, ``tp × pp``), or joined by "and", "or" or a comma to a name renamed just before
    (``with hidden and heads``)."""
    for name, alias in aliases.items():
        if text.startswith((f"{name}:", f"{name}.", f"{name}[")):
            text = alias + text[len(name) :]
            break
    if not aliases:
        return text
    names = "|".join(re.escape(n) for n in sorted(aliases, key=len, reverse=True))
    quoted = [q.span() for q in QUOTED_VALUE.finditer(text)]  # the user's values, as given
    parts, last, joined_to = [], 0, None
    for m in re.finditer(rf"`({names})`|(?<![\w.`·-])({names})(?![\w`·-])", text):
        name = m[1] or m[2]
        if any(a <= m.start() < b for a, b in quoted):
            continue
        if m[1] is None and "_" not in name and not _names_a_field(
                text, m.start(), m.end(), joined_to):
            continue
        parts += [text[last : m.start()], aliases[name]]
        last = joined_to = m.end()
    return "".join(parts) + text[last:]


def describe_error(exc: BaseException, aliases: Mapping[str, str] | None = None,
                   catalog_hint: str | None = None, skip: frozenset[str] = frozenset(),
                   shown_as: Mapping[str, object] | None = None) -> str:
    """A user-facing message for any error compute-budget expects to see from bad input.

    ``aliases`` renames fields as the caller knows them (CLI flags, :func:`rename_fields`);
    ``catalog_hint`` is added to an unknown accelerator: where the caller lists the catalog (a
    tool or a subcommand); ``skip`` leaves out missing fields the caller asks for itself;
    ``shown_as`` quotes a field's value as the caller gave it (a file's path, where the spec
    holds what was read from it)."""
    text = (describe_validation_error(exc, catalog_hint, skip, shown_as)
            if isinstance(exc, ValidationError) else _hinted(exc, catalog_hint, shown_as))
    if aliases:
        text = "\n".join(rename_fields(line, aliases) for line in text.splitlines())
    return text


def not_finite_cause(exc: BaseException) -> NotFiniteResultError | None:
    """The non-finite result behind ``exc`` (itself, or inside a ValidationError), or None."""
    if isinstance(exc, NotFiniteResultError):
        return exc
    if isinstance(exc, ValidationError):
        for err in exc.errors(include_url=False):
            cause = (err.get("ctx") or {}).get("error")
            if isinstance(cause, NotFiniteResultError):
                return cause
    return None
