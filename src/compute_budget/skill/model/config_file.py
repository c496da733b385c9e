"""Reading a config safely: a local ``config.json`` file, or JSON text given inline.

Whatever the caller names is checked with os.stat before it is opened (a FIFO, a device or a
2 GB file is refused without blocking or reading it), opened without following a link swapped in
since, and read at most 1 MB + 1 bytes; JSON nested deeper than :data:`MAX_CONFIG_DEPTH` is
refused before it is parsed. The object read goes to :func:`~.hf_config.from_hf_config`.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import stat
from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError, InputError
from .architecture import Architecture
from .hf_config import from_hf_config, value_not_shown

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_CONFIG_DEPTH",
    "config_too_deep",
    "data_csv_lines",
    "data_csv_rows",
    "data_json",
    "load_config",
    "parse_config_json",
    "read_config_object",
    "too_deep_error",
]

MAX_CONFIG_BYTES = 1_000_000
"""A config.json is a few kB; a file or inline object larger than this is not one."""
MAX_CONFIG_DEPTH = 64
"""A config.json nests two or three levels; deeper JSON is refused before it is parsed."""

_READABLE = "a readable .json file of at most 1 MB"
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)
"""A JSON string (to the end of the text when unterminated) or a bracket, matched in one pass."""


def _deeper_than(text: str, limit: int) -> bool:
    """Whether the brackets of JSON ``text`` nest more than ``limit`` deep (strings skipped;
    linear, no recursion)."""
    depth = 0
    for token in _JSON_TOKEN.finditer(text):
        char = token.group()[0]
        if char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
    return False


def config_too_deep(value: object, limit: int = MAX_CONFIG_DEPTH) -> bool:
    """Whether a parsed JSON value nests objects and arrays more than ``limit`` deep
    (an explicit stack, so any depth, even a cycle, is measured without recursion)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Any
        if isinstance(item, Mapping):
            children = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def data_json(text: str, field: str) -> Any:
    """JSON ``text`` of a data file or argument (points, candidates), parsed within limits:
    nested at most :data:`MAX_CONFIG_DEPTH` deep, numbers of at most Python's digit limit;
    each failure an :class:`InputError` naming ``field``, the line and the column, without
    the text."""
    if _deeper_than(text, MAX_CONFIG_DEPTH):
        raise InputError(field, "(JSON text)",
                         f"JSON nested at most {MAX_CONFIG_DEPTH} levels deep")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(field, f"(JSON text, line {exc.lineno}, column {exc.colno})",
                         f"valid JSON ({exc.msg})") from None
    except (ValueError, RecursionError):
        raise InputError(field, "(JSON text)", "JSON whose numbers have at most 4,300 digits"
                         ) from None


def data_csv_lines(text: str, field: str) -> list[tuple[int, list[str]]]:
    """The non-blank rows of CSV ``text``, each with the line it starts on (1 for the first: an
    error names a row as a reader of the file counts); a cell over the csv module's limit (128
    KiB) or a malformed line is an :class:`InputError` naming ``field`` and the line, without
    the text."""
    reader = csv.reader(io.StringIO(text))
    rows, start = [], 1
    try:
        for row in reader:
            if any(cell.strip() for cell in row):
                rows.append((start, row))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(field, f"(CSV text, line {reader.line_num})",
                         f"CSV cells of at most 128 KiB, well quoted ({exc})") from None
    return rows


def data_csv_rows(text: str, field: str) -> list[list[str]]:
    """The non-blank rows of CSV ``text`` (:func:`data_csv_lines`, without their lines)."""
    return [row for _, row in data_csv_lines(text, field)]


def too_deep_error() -> ConfigError:
    """The error for JSON nested more than :data:`MAX_CONFIG_DEPTH` levels."""
    return value_not_shown(
        "config", f"a JSON object nested at most {MAX_CONFIG_DEPTH} levels deep")


def parse_config_json(text: str, shown: str | None = None) -> dict[str, Any]:
    """Parse config.json ``text`` into its object, refusing more than 1 MB or
    :data:`MAX_CONFIG_DEPTH` levels. Errors show ``shown`` (the caller's path) or no value."""

    def refuse(allowed: str) -> ConfigError:
        if shown is None:
            return value_not_shown("config", allowed)
        return ConfigError("config", shown, allowed)

    if len(text) > MAX_CONFIG_BYTES or len(text.encode("utf-8", "replace")) > MAX_CONFIG_BYTES:
        raise refuse("a config.json of at most 1 MB")
    if _deeper_than(text, MAX_CONFIG_DEPTH):
        raise too_deep_error()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise refuse(f"valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except (ValueError, RecursionError):  # e.g. an integer of more than 4300 digits
        raise refuse("valid JSON of a config.json's size") from None
    if not isinstance(data, dict):
        raise refuse(f"a JSON object, not a {type(data).__name__}")
    return data


def _uniform_refusal() -> ConfigError:
    """The one refusal of a path inside a server's config directory, whatever the reason."""
    error = ConfigError("config", None, _READABLE)
    error.args = (f"config: not {_READABLE}",)
    return error


def _read_config_file(path: str, root: str | None) -> str:
    """The text of config file ``path`` (inside ``root`` when given), after the checks above.

    Inside ``root`` (a server's config directory) every refusal is the same message, so a
    caller learns nothing about which files exist; otherwise the reason is given."""

    def refuse(reason: str) -> ConfigError:
        if root is not None:
            return _uniform_refusal()
        return ConfigError("config", path, f"{_READABLE} ({reason})")

    try:
        target = os.path.realpath(os.path.join(root, path) if root is not None else path)
        base = os.path.realpath(root) if root is not None else None
        outside = base is not None and os.path.commonpath([base, target]) != base
    except (OSError, ValueError):  # an embedded NUL, or paths on different drives
        raise refuse("not a valid path") from None
    if outside:
        raise refuse("outside the config directory")
    if not target.lower().endswith(".json"):
        raise refuse("its name, links resolved, does not end in .json")
    try:
        return read_small_text(target, MAX_CONFIG_BYTES)
    except UnreadableFileError as exc:
        raise refuse(exc.reason) from None


class UnreadableFileError(Exception):
    """A file :func:`read_small_text` refuses, with the reason in a few words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_small_text(path: str, max_bytes: int) -> str:
    """The UTF-8 text of the regular file ``path``, of at most ``max_bytes``: checked before it
    is opened (a FIFO or a device would hang or flood the reader), opened without following a
    final link and without blocking, checked again once open, and read at most
    ``max_bytes + 1``. Raises :class:`UnreadableFileError` with the reason."""
    try:
        info = os.stat(path)
    except (OSError, ValueError) as exc:
        raise UnreadableFileError(getattr(exc, "strerror", None) or "not a valid path") from None
    if not stat.S_ISREG(info.st_mode):
        raise UnreadableFileError("not a regular file")
    too_large = f"larger than {max_bytes / 1e6:g} MB"
    if info.st_size > max_bytes:
        raise UnreadableFileError(too_large)
    flags = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0))
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise UnreadableFileError(exc.strerror or type(exc).__name__) from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped for a FIFO or device since stat
            raise UnreadableFileError("not a regular file")
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise UnreadableFileError(exc.strerror or type(exc).__name__) from None
    if len(data) > max_bytes:
        raise UnreadableFileError(too_large)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UnreadableFileError("not UTF-8 text") from None


def load_config(
    path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None
) -> Architecture:
    """Read a local ``config.json`` (no network) and return its :class:`Architecture`.

    The file is read only if, links resolved, it is a regular file whose name ends in ``.json``
    of at most 1 MB, nested at most :data:`MAX_CONFIG_DEPTH` levels; with ``root``, it must
    also lie inside that directory (a relative ``path`` is taken from it). Anything else raises
    :class:`ConfigError` naming ``config``; no error shows a value read from the file.
    """
    shown = os.fspath(path)
    text = _read_config_file(shown, None if root is None else os.fspath(root))
    if root is None:
        return from_hf_config(parse_config_json(text, shown), source=shown)
    try:  # inside a server's config directory a file that is no JSON object is refused
        data = parse_config_json(text)  # as a missing one is, so nobody learns which exist
    except ConfigError:
        raise _uniform_refusal() from None
    data.pop("_name_or_path", None)  # the file's own text is not echoed back to the caller
    return from_hf_config(data, source=shown)


def read_config_object(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON object of a local ``config.json``, read with :func:`load_config`'s checks (for
    a program that builds the model itself, such as the probe)."""
    shown = os.fspath(path)
    return parse_config_json(_read_config_file(shown, None), shown)
