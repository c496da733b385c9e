"""The team's past runs as text (issue 17, item 4): a CSV table with a header row or a JSON list
of objects, read into :class:`.own_runs.PastRun` records, every bad value named
``calibration[i].field``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from ..errors import InputError
from ..model.config_file import data_csv_rows, data_json
from .own_runs import PAST_RUN_COLUMNS, Calibration, PastRun

__all__ = ["parse_calibration"]


class _Runs(BaseModel):
    """The runs under the name the errors give them."""

    calibration: Calibration


def _column(raw: str) -> str:
    return raw.strip().lower().replace("-", "_").replace(" ", "_")


def _csv_rows(text: str) -> list[dict[str, Any]]:
    rows = data_csv_rows(text, "calibration")
    if not rows:
        return []
    header = [_column(cell) for cell in rows[0]]
    for j, key in enumerate(header):
        if key not in PAST_RUN_COLUMNS or key in header[:j]:
            raise InputError("calibration", f"(column {j + 1} of the header row)",
                             "a header row naming each of its columns once, of "
                             + ", ".join(PAST_RUN_COLUMNS))
    out = []
    for i, row in enumerate(rows[1:]):
        if len(row) > len(header):
            raise InputError(f"calibration[{i}]", f"{len(row)} cells",
                             f"at most {len(header)} cells, as many as the header row has")
        out.append({key: cell.strip() for key, cell in zip(header, row, strict=False)
                    if cell.strip()})
    return out


def _json_rows(text: str) -> list[Any]:
    data = data_json(text, "calibration")
    if not isinstance(data, list):
        raise InputError("calibration", type(data).__name__, "a JSON list of runs, one object "
                                                              "each")
    return [{_column(str(k)): v for k, v in item.items()} if isinstance(item, dict) else item
            for item in data]


def parse_calibration(text: str, *,
                      fmt: Literal["csv", "json"] | None = None) -> list[PastRun]:
    """The team's past runs from a CSV table with a header row (columns: name, params,
    active_params, tokens, gpu, gpu_count, gpu_hours, wall_days, precision; an empty cell is
    not given) or a JSON list of objects with those keys. ``fmt`` None: JSON when the text
    starts with ``[``, else CSV. Raises a ``ValidationError`` naming ``calibration[i].field``
    for every bad value, or an :class:`InputError` for a table it cannot read."""
    if not isinstance(text, str):
        raise InputError("calibration", type(text).__name__, "CSV or JSON text")
    text = text.removeprefix("\ufeff").strip()
    as_json = text.startswith(("[", "{")) if fmt is None else fmt == "json"
    rows = _json_rows(text) if as_json else _csv_rows(text)
    if not rows:
        raise InputError("calibration", "(no runs)", "at least one run after the header row")
    return list(_Runs.model_validate({"calibration": rows}).calibration)
