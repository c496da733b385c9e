"""The team's past runs as text (issue 17, item 4): a CSV table with a header row or a JSON list
of objects, read into :class:`.own_runs.PastRun` records.

Every bad value is an :class:`~..errors.InputError` naming where it is, as a reader of the text
counts: a row of a table by the line it starts on and its column (``line 4, column gpu``, the
header being line 1), an item of a JSON list by its index from 0 (``calibration[2].gpu``);
several at once are one :class:`~..errors.MultipleInputError`."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from ..errors import InputError, MultipleInputError, plain_message
from ..model.config_file import data_csv_lines, data_json
from .own_runs import PAST_RUN_COLUMNS, Calibration, PastRun

__all__ = ["parse_calibration"]

_NEEDED = "each run gives params, tokens, gpu, and gpu_hours or wall_days with gpu_count"


class _Runs(BaseModel):
    """The runs under the name the errors give them."""

    calibration: Calibration


def _column(raw: str) -> str:
    return raw.strip().lower().replace("-", "_").replace(" ", "_")


def _csv_rows(text: str) -> tuple[list[int], list[dict[str, Any]]]:
    """The lines the runs start on, and the runs' given cells by column."""
    rows = data_csv_lines(text, "calibration")
    if not rows:
        return [], []
    header = [_column(cell) for cell in rows[0][1]]
    for j, key in enumerate(header):
        if key not in PAST_RUN_COLUMNS or key in header[:j]:
            raise InputError("calibration", f"(column {j + 1} of the header row)",
                             "a header row naming each of its columns once, of "
                             + ", ".join(PAST_RUN_COLUMNS))
    lines, out = [], []
    for line, row in rows[1:]:
        if len(row) > len(header):
            raise InputError(f"line {line}", f"{len(row)} cells",
                             f"at most {len(header)} cells, as many as the header row has")
        lines.append(line)
        out.append({key: cell.strip() for key, cell in zip(header, row, strict=False)
                    if cell.strip()})
    return lines, out


def _json_rows(text: str) -> list[Any]:
    data = data_json(text, "calibration")
    if not isinstance(data, list):
        raise InputError("calibration", type(data).__name__, "a JSON list of runs, one object "
                                                              "each")
    return [{_column(str(k)): v for k, v in item.items()} if isinstance(item, dict) else item
            for item in data]


def _named(err: Any, cell: Callable[[int, str | None], str]) -> InputError:
    """One error of the runs (a pydantic error dict), naming its cell by ``cell(i, column)``."""
    loc = err.get("loc", ())
    field = cell(loc[1], ".".join(str(p) for p in loc[2:]) or None) if len(loc) > 1 else (
        "calibration")
    original = (err.get("ctx") or {}).get("error")
    if err.get("type") == "missing":
        return InputError(field, None, _NEEDED)
    allowed = (original.allowed if isinstance(original, InputError)
               else plain_message(str(err.get("msg", "invalid"))))
    return InputError(field, err.get("input"), allowed)


def _item_cell(index: int, column: str | None) -> str:
    """A value of an item of a JSON list: ``calibration[2].gpu``."""
    return f"calibration[{index}]" + (f".{column}" if column else "")


def _table_cell(lines: list[int], index: int, column: str | None) -> str:
    """A value of a table's row (``lines``: the line each row starts on): ``line 4, column
    gpu``."""
    return f"line {lines[index]}" + (f", column {column}" if column else "")


def _runs(rows: list[Any], cell: Callable[[int, str | None], str]) -> list[PastRun]:
    """The runs; every bad value named (:func:`_named`), several in one MultipleInputError."""
    try:
        return list(_Runs.model_validate({"calibration": rows}).calibration)
    except ValidationError as exc:
        errors = [_named(err, cell) for err in exc.errors(include_url=False)]
    raise errors[0] if len(errors) == 1 else MultipleInputError(errors)


def parse_calibration(text: str, *,
                      fmt: Literal["csv", "json"] | None = None) -> list[PastRun]:
    """The team's past runs from a CSV table with a header row (columns: name, params,
    active_params, tokens, gpu, gpu_count, gpu_hours, wall_days, precision; an empty cell is
    not given) or a JSON list of objects with those keys. ``fmt`` None: JSON when the text
    starts with ``[``, else CSV. Raises an :class:`InputError` naming each bad value (module
    docstring), or a table it cannot read."""
    if not isinstance(text, str):
        raise InputError("calibration", type(text).__name__, "CSV or JSON text")
    text = text.removeprefix("\ufeff")
    as_json = text.lstrip().startswith(("[", "{")) if fmt is None else fmt == "json"
    if as_json:
        rows, cell = _json_rows(text.strip()), _item_cell
    else:
        lines, rows = _csv_rows(text)
        cell = partial(_table_cell, lines)
    if not rows:
        raise InputError("calibration", "(no runs)", "at least one run after the header row")
    return _runs(rows, cell)
