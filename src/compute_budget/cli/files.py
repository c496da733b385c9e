"""The data files the command line reads (``--points``, ``compare FILE``): one reader, and
errors that never show what the file holds.

The file is read as a config is (:func:`~..skill.model.config_file.read_small_text`: a regular
UTF-8 file, checked before it is opened, at most ``MAX_DATA_BYTES``); its format comes from its
content (JSON when it starts with ``[`` or ``{``, else CSV), whatever its name. Parsing limits
(nesting depth, digits in a number, the size of a CSV cell) become clear errors. An error
names the file as the user gave it, where in it (row, field, line and column) and what was
expected — never a value read from it: a file given by mistake (``/etc/shadow``, a token file,
``/proc/self/environ``) must not be printed to a terminal or a log.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import ValidationError

from ..skill.errors import (
    QUOTED_VALUE,
    SUGGESTED,
    ComputeBudgetError,
    InputError,
    MultipleInputError,
)

__all__ = ["MAX_DATA_BYTES", "DataFileError", "read_data"]

MAX_DATA_BYTES = 1_000_000
"""A data file larger than this is refused before it is parsed."""
_T = TypeVar("_T")
_PLACE = re.compile(r"\((?:(?:CSV|JSON) text(?:, line \d+(?:, column \d+)?)?"
                    r"|column \d+ of the header row)\)")
"""A place in the text a parser gives as an error's value (``(CSV text, line 3)``, ``(column 2
of the header row)``): shown; anything else the value holds may be the file's and is not."""


class DataFileError(InputError):
    """A data file that cannot be used: the flag, the path as given, where and what was
    expected, and nothing read from the file."""

    def __init__(self, flag: str, path: str, expected: str, read: bool = True) -> None:
        super().__init__(flag, path, expected)
        self.args = (f"{flag}: {path!r} is not allowed; {expected} (contents not shown)" if read
                     else f"{flag}: {path!r} cannot be read; give {expected}",)


def _without_values(text: str) -> str:
    """``text`` with each quoted value left out ("…"), but for the names it suggests: ours, the
    catalog's (``did you mean 'l40s', 'l4'?``), not the file's."""
    ours = [m.span() for m in SUGGESTED.finditer(text)]
    return QUOTED_VALUE.sub(
        lambda q: q[0] if any(a <= q.start() < b for a, b in ours) else "…", text)


def _where(exc: BaseException) -> tuple[str, str]:
    """The place in the file and what was expected, from a parser's error, values dropped;
    every error of a MultipleInputError, one after another."""
    if isinstance(exc, MultipleInputError):
        places = [_where(e) for e in exc.errors]
        return places[0][0], "; ".join([places[0][1], *(f"{w}: {x}" for w, x in places[1:])])
    if isinstance(exc, InputError):
        place = isinstance(exc.value, str) and _PLACE.fullmatch(exc.value)
        return (f"{exc.field} {exc.value}" if place else exc.field), _without_values(exc.allowed)
    if isinstance(exc, ValidationError):
        first = exc.errors(include_input=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        return where, _without_values(first["msg"])
    return "", "a CSV or JSON file the parser accepts"


def read_data(path: str, flag: str, parse: Callable[..., _T], formats: str = "CSV or JSON",
              ) -> _T:
    """``parse(text, fmt=...)`` of the data file ``path`` (given after ``flag``, a file of
    ``formats``); every failure is a :class:`DataFileError` (module docstring)."""
    from ..skill.model.config_file import UnreadableFileError, read_small_text

    try:
        text = read_small_text(os.path.realpath(path), MAX_DATA_BYTES)
    except UnreadableFileError as exc:
        raise DataFileError(flag, path, f"a readable {formats} file ({exc.reason})",
                            read=False) from None
    fmt: Any = "json" if text.lstrip()[:1] in ("[", "{") else "csv"
    try:
        return parse(text, fmt=fmt)
    except (ComputeBudgetError, ValidationError) as exc:
        where, expected = _where(exc)
        raise DataFileError(flag, path, f"{where}: {expected}" if where else expected) from None
    except (RecursionError, ValueError, OverflowError, csv.Error) as exc:
        raise DataFileError(flag, path, f"a {fmt.upper()} file within the parser's limits "
                                        f"({type(exc).__name__})") from None
