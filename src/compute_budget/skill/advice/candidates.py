"""Candidate runs to weigh side by side: a run spec with a name and a predicted gain, read from a
CSV table (a header row, one candidate a row) or a JSON list of objects.

Columns: ``name``, ``params``, ``tokens``, ``gpu``, ``gpu_count``, ``predicted_gain`` and
``gain_uncertainty``; instead of ``predicted_gain``, the metric itself, ``metric_now`` and
``metric_expected`` (with ``higher_is_better`` false for a loss), read as the verdict reads them
(:func:`.gain.read_gain`); any other field of :class:`~compute_budget.skill.run_spec.RunSpec` may be
added (``mfu``, ``usd_per_gpu_hour``, ``kind``, ``preset``, ``config`` …). Quantities read as
everywhere (``1B``, ``20B``, ``$2.49``). ``params`` may be left out when a ``config`` or
``preset`` gives the model, as for a single run.

Column names are matched ignoring case, surrounding spaces and ``-`` for ``_``; the CLI's
``gpus`` and ``price`` name ``gpu_count`` and ``usd_per_gpu_hour``. A field with an alias is the
column of that name, as the tool's key and the CLI's flag name it (``model``; ``model_id`` is
read as it). An empty CSV cell, a JSON
``null`` or a blank string means "not given". A table holds 2 to 50 candidates with distinct
names (compared ignoring case).

Every error is an :class:`~compute_budget.skill.errors.InputError` naming the row and the
column, the value and what is allowed: an item of a list (the MCP tool's argument, a JSON list)
by its index from 0, ``candidates[2].params``; a row of a CSV table (:class:`TableRow`) by the
line of the text it starts on, as a reader of the file counts, ``line 4, column params`` (a
header cell by its place, ``line 1, column 3``). The values of every row are checked before any
is refused: with more than one bad cell, one
:class:`~compute_budget.skill.errors.MultipleInputError` names each of them, a line each. A
table's row is worded as a table's (a value in its column, data rows); a list's item names the
candidate: ``candidates[1] ('b'): predicted_gain is required (…)``.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import ValidationError

from ..errors import (
    ConfigError,
    InputError,
    MultipleInputError,
    UnknownAcceleratorError,
    plain_message,
    shown_field,
    shown_value,
)
from ..model.config_file import data_csv_lines, data_json
from .candidate import MAX_NAME_LENGTH, Candidate
from .gain import GAIN_FORMS, NO_GAIN

__all__ = [
    "MAX_CANDIDATES",
    "MAX_NAME_LENGTH",
    "MIN_CANDIDATES",
    "Candidate",
    "MissingValueError",
    "TableRow",
    "parse_candidates",
    "validate_candidates",
]

MIN_CANDIDATES = 2
MAX_CANDIDATES = 50
MAX_TEXT_CHARS = 1_000_000
"""Longest table text read (50 rows of every column, with inline configs, fit well within)."""

REQUIRED_COLUMNS = ("name", "params", "tokens", "gpu", "gpu_count", "predicted_gain",
                    "gain_uncertainty")
ALIASES = {"gpus": "gpu_count", "price": "usd_per_gpu_hour", "gain": "predicted_gain",
           "uncertainty": "gain_uncertainty", "model_id": "model"}
"""The CLI's flag names for four columns (``estimate --gpus --price``, ``decide --gain
--uncertainty``), and the field behind the ``model`` column."""
REQUIRED_HINTS = {
    "name": "a short name of its own",
    "tokens": "the training tokens, e.g. 20B",
    "gpu": "a catalog accelerator, e.g. h100",
    "gpu_count": "the number of devices",
    "gain_uncertainty": "its 1σ uncertainty, in the same units (0 if certain)",
}
"""What a required column holds, said when a row leaves it out."""


class TableRow(dict[str, Any]):
    """A row read from a CSV table, keyed by column, with the line of the text it starts on: its
    errors name that line and the column, as a reader of the file counts (``line 4, column
    params``), and are worded as a table's."""

    def __init__(self, cells: Mapping[str, Any], line: int) -> None:
        super().__init__(cells)
        self.line = line


class MissingValueError(InputError):
    """A row leaves out a value it needs. ``item``: a list's item as the message opens with it,
    the candidate's name beside its index (``candidates[1] ('b'): predicted_gain is required
    (…)``); None: a table's cell, a value in its column."""

    def __init__(self, field: str, column: str, allowed: str, *,
                 item: str | None = None) -> None:
        super().__init__(field, None,
                         f"a value in this column ({allowed})" if item is None else allowed)
        self.column = column
        if item is not None:
            self.args = (f"{item}: {shown_field(column)} is required ({allowed})",)


def _row_name(index: int, row: object) -> str:
    """A row as its errors name it: a table's by its line, a list's item by its index."""
    return f"line {row.line}" if isinstance(row, TableRow) else f"candidates[{index}]"


def _cell_name(index: int, row: object, column: str) -> str:
    """A cell as its errors name it: ``line 4, column params`` or ``candidates[2].params``."""
    if isinstance(row, TableRow):
        return f"line {row.line}, column {column}"
    return f"candidates[{index}].{column}"


def _columns() -> tuple[str, ...]:
    """The columns, as the user names them: a field's alias where it has one (``model``)."""
    return tuple(info.alias or name for name, info in Candidate.model_fields.items())


def _known_columns_text() -> str:
    others = [c for c in _columns() if c not in REQUIRED_COLUMNS]
    return (f"the columns are {', '.join(REQUIRED_COLUMNS)}, and optionally any run field: "
            f"{', '.join(others)}")


def _column(raw: str) -> str:
    """A column name as the model knows it: lower case, ``_`` for ``-`` and spaces, aliases."""
    key = raw.strip().lower().replace("-", "_").replace(" ", "_")
    return ALIASES.get(key, key)


def _unknown_column(field: str, value: object, key: str, listed: bool = True) -> InputError:
    """An unknown column, with the closest known one (in backticks: ours, not the file's, so a
    reader that hides quoted file text keeps it) and, when ``listed``, every known column."""
    close = difflib.get_close_matches(key, [*_columns(), *ALIASES], n=1, cutoff=0.6)
    hint = f" (did you mean `{ALIASES.get(close[0], close[0])}`?)" if close else ""
    known = f"; {_known_columns_text()}" if listed else ""
    return InputError(field, value, f"unknown column {key!r}{hint}{known}")


def _count_check(count: int, rows: str = "") -> None:
    """2 to 50 candidates; ``rows`` says what a table counts (its data rows)."""
    if not MIN_CANDIDATES <= count <= MAX_CANDIDATES:
        raise InputError("candidates", f"{count} candidate{'s' * (count != 1)}",
                         f"from {MIN_CANDIDATES} to {MAX_CANDIDATES} candidates{rows}")


def _raise_all(errors: Sequence[InputError]) -> None:
    """Nothing when there is no error, the one error, or every one as a MultipleInputError
    (the list of known columns said once, by the last unknown column)."""
    if len(errors) > 1:
        listed = f"; {_known_columns_text()}"
        last = max((i for i, e in enumerate(errors) if e.allowed.endswith(listed)), default=-1)
        raise MultipleInputError([
            InputError(e.field, e.value, e.allowed.removesuffix(listed))
            if i != last and type(e) is InputError else e for i, e in enumerate(errors)])
    if errors:
        raise errors[0]


def _given(value: object) -> bool:
    """Whether a cell holds a value: not None and not a blank string."""
    return value is not None and not (isinstance(value, str) and not value.strip())


def _csv_keys(line: int, header: Sequence[str]) -> list[str | None]:
    """The columns of the header row (None under a blank cell); every bad name at once."""
    keys: list[str | None] = []
    errors: list[InputError] = []
    unknown = [i for i, raw in enumerate(header)
               if _column(raw) and _column(raw) not in _columns()]
    for i, raw in enumerate(header):
        key, field = _column(raw), f"line {line}, column {i + 1}"  # the CLI shows no file text
        if key in keys:
            errors.append(InputError(field, raw.strip(), "each column once in the header row"))
        elif i in unknown:
            errors.append(_unknown_column(field, raw.strip(), key, listed=i == unknown[-1]))
        keys.append(key or None)  # a blank header cell: its column must stay empty
    _raise_all(errors)
    return keys


def _parse_csv(text: str) -> list[dict[str, Any]]:
    rows = data_csv_lines(text, "candidates")
    if not rows:
        raise InputError("candidates", text[:40], "a CSV table: a header row and one row for "
                                                  "each candidate")
    keys = _csv_keys(*rows[0])
    _count_check(len(rows) - 1, " (data rows, after the header row)")
    out: list[dict[str, Any]] = []
    errors: list[InputError] = []
    for line, row in rows[1:]:
        if len(row) > len(keys):
            errors.append(InputError(f"line {line}", row, f"at most {len(keys)} cells, as many "
                                                          "as the header row has"))
            continue
        record: dict[str, Any] = {}
        # missing trailing cells: not given
        for j, (column, cell) in enumerate(zip(keys, row, strict=False)):
            if not _given(cell):
                continue
            if column is None:
                errors.append(InputError(f"line {line}, column {j + 1}", cell,
                                         "no value under a header cell without a column name"))
                continue
            record[column] = cell.strip()
        out.append(TableRow(record, line))
    _raise_all(errors)
    return out


def _json_record(index: int, item: object) -> tuple[dict[str, Any], list[InputError]]:
    """One object of a JSON list: its given cells keyed by column, and every key refused."""
    if not isinstance(item, dict):
        return {}, [InputError(f"candidates[{index}]", item, "an object of columns and values")]
    record: dict[str, Any] = {}
    errors: list[InputError] = []
    seen: set[str] = set()
    for raw, value in item.items():
        key = _column(str(raw))
        if key not in _columns():
            errors.append(_unknown_column(f"candidates[{index}].{raw}", value, key))
        elif key in seen:
            errors.append(InputError(f"candidates[{index}].{raw}", value,
                                     f"each column once ({key!r} is given twice)"))
        else:
            seen.add(key)
            if _given(value):
                record[key] = value
    return record, errors


def _parse_json(text: str) -> list[dict[str, Any]]:
    data = data_json(text, "candidates")
    if not isinstance(data, list):
        raise InputError("candidates", type(data).__name__,
                         "a JSON list of objects, one for each candidate")
    _count_check(len(data))
    out: list[dict[str, Any]] = []
    errors: list[InputError] = []
    for i, item in enumerate(data):
        record, refused = _json_record(i, item)
        out.append(record)
        errors += refused
    _raise_all(errors)
    return out


def parse_candidates(text: str, *,
                     fmt: Literal["csv", "json"] | None = None) -> list[dict[str, Any]]:
    """Read a CSV table (header row) or a JSON list of objects into one mapping per candidate,
    keyed by the model's column names, with the cells that were given (module docstring).

    ``fmt`` None: JSON when the text starts with ``[`` or ``{``, else CSV. Checks the columns
    and the number of rows; the values are checked by :func:`validate_candidates`.
    """
    if not isinstance(text, str):
        raise InputError("candidates", type(text).__name__, "the text of a CSV or JSON table")
    if len(text) > MAX_TEXT_CHARS:
        raise InputError("candidates", f"{len(text)} characters",
                         f"at most {MAX_TEXT_CHARS} characters")
    if fmt not in (None, "csv", "json"):
        raise InputError("fmt", fmt, "csv or json (or leave it out to detect it)")
    text = text.removeprefix("\ufeff")
    as_json = text.lstrip().startswith(("[", "{")) if fmt is None else fmt == "json"
    return _parse_json(text) if as_json else _parse_csv(text)


# --- validation ---------------------------------------------------------------------------


def _cell_error(index: int, row: Mapping[str, Any], err: Any) -> InputError:
    """One error of one row (a pydantic error dict), as an InputError naming its cell."""
    loc = [str(p) for p in err.get("loc", ()) if not str(p).startswith("function-")]
    column = loc[0] if loc else None
    original = (err.get("ctx") or {}).get("error")
    if isinstance(original, InputError):
        return _located(index, row, original)
    field = _cell_name(index, row, column) if column else _row_name(index, row)
    kind = err.get("type", "")
    if kind == "missing" and column:
        return _missing(index, row, column, REQUIRED_HINTS.get(column, "a value"))
    if kind == "extra_forbidden":
        return _unknown_column(field, err.get("input"), column or "")
    return InputError(field, err.get("input"), plain_message(str(err.get("msg", "invalid"))))


def _missing(index: int, row: Mapping[str, Any], column: str, allowed: str) -> InputError:
    field = _cell_name(index, row, column)
    if isinstance(row, TableRow):
        return MissingValueError(field, column, allowed)
    name = _raw_name(row)
    label = "" if name is None else f" ({shown_value(name)})"
    return MissingValueError(field, column, allowed, item=_row_name(index, row) + label)


def _located(index: int, row: Mapping[str, Any], original: InputError) -> InputError:
    """An error a row's spec raised about one of its fields, named in the row."""
    field = _cell_name(index, row, original.field)
    if isinstance(original, UnknownAcceleratorError):
        return UnknownAcceleratorError(field, original.value, original.suggestions)
    if isinstance(original, ConfigError):
        return ConfigError(field, original.value, original.allowed)
    if original.value is None:
        return _missing(index, row, original.field, original.allowed)
    return InputError(field, original.value, original.allowed)


def _row(index: int, row: object) -> Candidate | list[InputError]:
    """One row as a candidate, or every error it has."""
    if isinstance(row, Candidate):
        return row
    if not isinstance(row, Mapping):
        return [InputError(f"candidates[{index}]", row, "an object of columns and values")]
    given = {str(k): v for k, v in row.items() if _given(v)}
    try:
        return Candidate.model_validate(given)
    except ValidationError as exc:
        errors = [_cell_error(index, row, err) for err in exc.errors(include_url=False)]
    except InputError as exc:  # raised outside pydantic's wrapping
        errors = [_located(index, row, exc)]
    named = {getattr(e, "column", None) for e in errors}
    if not given.keys() & set(GAIN_FORMS) and "predicted_gain" not in named:
        # no gain given, and the check that says so did not run: another field refused first
        errors.append(_missing(index, row, "predicted_gain", NO_GAIN))
    return errors


def _raw_name(row: object) -> str | None:
    """The name a row that was refused gives, as a candidate would hold it (None: none)."""
    name = row.get("name") if isinstance(row, Mapping) else None
    return name.strip() if isinstance(name, str) and name.strip() else None


def validate_candidates(rows: object) -> list[Candidate]:
    """Check each row (a mapping or a :class:`Candidate`) and the table: 2 to 50 candidates,
    distinct names. Raises :class:`InputError` naming the cell (``candidates[i].column``, or a
    table's ``line n, column c``); with more than one bad cell, a :class:`MultipleInputError`
    naming every one, of every row."""
    if isinstance(rows, str | bytes) or not isinstance(rows, Sequence):
        raise InputError("candidates", type(rows).__name__,
                         f"a list of {MIN_CANDIDATES} to {MAX_CANDIDATES} candidates")
    _count_check(len(rows))
    out: list[Candidate] = []
    errors: list[InputError] = []
    seen: dict[str, str] = {}  # a name, folded → the row that has it
    for i, row in enumerate(rows):
        candidate = _row(i, row)
        if isinstance(candidate, Candidate):
            out.append(candidate)
        else:
            errors += candidate
        name = candidate.name if isinstance(candidate, Candidate) else _raw_name(row)
        folded = None if name is None else name.casefold()
        if folded is not None and folded in seen:
            errors.append(InputError(
                _cell_name(i, row, "name"), name,
                f"a name not used by another candidate ({seen[folded]} has it; names are "
                "compared ignoring case)"))
        elif folded is not None:
            seen[folded] = _row_name(i, row)
    _raise_all(errors)
    return out
