"""The small-run points a scaling law is fitted to: parsing CSV, JSON and MCP objects.

Each point is one finished training run: its compute in FLOPs, or its parameters N and tokens D
(then compute = 6·N·D, Kaplan et al. 2020, Table 1), and its final loss or metric. A row that
gives all three keeps its compute as given (it may count attention FLOPs that 6·N·D leaves out).

Row kinds may be mixed: some rows with compute only and some with params and tokens is fine,
since compute is known (given or derived) for every row; the fit then uses the compute form
L(C). The two-variable form L(N, D) needs params and tokens on every row (see
:mod:`.scaling_fit`).

CSV: a header naming the columns ``compute,loss`` or ``params,tokens,loss`` (or all four), in
any order; blank lines are ignored and an empty cell is a missing value. JSON: a list of objects
with the same keys. Errors name the row as ``points[i].field``, ``i`` counting data rows from 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..errors import InputError
from ..model.config_file import data_csv_rows, data_json
from ..quantities import (
    GAIN_LIMIT,
    FlopCount,
    Gain,
    ParamCount,
    TokenCount,
    decimal_comma,
    parse_quantity,
)
from ..vocabulary import FLOPS_TOLERANCE, flops_6nd, flops_agree

__all__ = ["COLUMNS", "MAX_POINTS", "ScalingPoint", "as_points", "check_losses", "check_target",
           "parse_points", "points_from_objects"]

MAX_POINTS = 10_000
"""More points than this are refused: a scaling fit needs a handful, not a log file."""
COLUMNS = ("compute", "params", "tokens", "loss")
_LIMITS = {  # field → (lowest, highest, what is allowed); the bounds of quantities.py
    "compute": (1e7, 1e35, "a positive number of FLOPs from 1e7 to 1e35, such as 1e18 or "
                           "'1e18'"),
    "params": (1.0, 1e18, "a positive parameter count from 1 to 1e18, such as 7e9 or '7B'"),
    "tokens": (1.0, 1e17, "a positive token count from 1 to 1e17, such as 1e11 or '100B'"),
}
_LOSS_ALLOWED = f"a finite number (the run's final loss or metric), at most {GAIN_LIMIT:g} in size"
_KINDS = "compute, or params and tokens (then compute = 6·params·tokens)"
_HEADER = ("a header naming the columns compute,loss or params,tokens,loss (all four are fine, "
           "in any order)")


class ScalingPoint(BaseModel):
    """One finished small run: its compute (or size and data) and its final loss or metric."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    compute: FlopCount | None = Field(
        default=None,
        description="Training compute of the run in FLOPs; when absent, 6·params·tokens.")
    params: ParamCount | None = Field(default=None, description="Parameters N of the run.")
    tokens: TokenCount | None = Field(default=None, description="Training tokens D of the run.")
    loss: Gain = Field(description="Final loss of the run (or metric, in the user's units).")

    @model_validator(mode="after")
    def _derive_compute(self) -> ScalingPoint:
        if self.compute is None:
            if self.params is None or self.tokens is None:
                missing = "tokens" if self.params is not None else "params"
                if self.params is None and self.tokens is None:
                    missing = "compute"
                raise InputError(missing, None, _KINDS)
            derived = flops_6nd(self.params, self.tokens)
            low, high, allowed = _LIMITS["compute"]
            if not low <= derived <= high:
                raise InputError("compute", derived, f"6·params·tokens must be {allowed}")
            # The model is frozen; the derived compute is set once, here.
            object.__setattr__(self, "compute", derived)
        return self

    @property
    def flops(self) -> float:
        """Compute in FLOPs (given, or 6·params·tokens); never None once validated."""
        if self.compute is None:  # pragma: no cover - the validator fills it
            raise InputError("compute", None, _KINDS)
        return self.compute


def _quantity(raw: object, field: str, kind: str) -> float | None:
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    low, high, allowed = _LIMITS[kind]
    try:
        value = parse_quantity(raw, field)
    except InputError:
        raise InputError(field, raw, decimal_comma(raw) or allowed) from None
    if not low <= value <= high:
        raise InputError(field, raw, allowed)
    return value


def _loss(raw: object, field: str) -> float:
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raise InputError(field, None, _LOSS_ALLOWED)
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise InputError(field, raw, _LOSS_ALLOWED)
    try:
        value = float(raw)
    except ValueError:
        raise InputError(field, raw, decimal_comma(raw) or _LOSS_ALLOWED) from None
    if not math.isfinite(value) or abs(value) > GAIN_LIMIT:
        raise InputError(field, raw, _LOSS_ALLOWED)
    return value


def _point(row: Mapping[str, object], index: int) -> ScalingPoint:
    where = f"points[{index}]"
    unknown = sorted(str(key) for key in row if key not in COLUMNS)
    if unknown:
        raise InputError(where, unknown, "only the keys " + ", ".join(COLUMNS))
    values = {kind: _quantity(row.get(kind), f"{where}.{kind}", kind) for kind in _LIMITS}
    loss = _loss(row.get("loss"), f"{where}.loss")
    if values["compute"] is None and (values["params"] is None or values["tokens"] is None):
        missing = "tokens" if values["params"] is not None else "params"
        if values["params"] is None and values["tokens"] is None:
            missing = "compute"
        raise InputError(f"{where}.{missing}", None, _KINDS)
    if values["compute"] is None:
        derived = flops_6nd(values["params"] or 0, values["tokens"] or 0)
        low, high, allowed = _LIMITS["compute"]
        if not low <= derived <= high:
            raise InputError(f"{where}.compute", derived, f"6·params·tokens must be {allowed}")
    return ScalingPoint(loss=loss, **values)


def _check_count(count: int) -> None:
    if count == 0:
        raise InputError("points", [], "at least one point (a run's compute, or params and "
                                       "tokens, and its loss)")
    if count > MAX_POINTS:
        raise InputError("points", f"{count} points", f"at most {MAX_POINTS:,} points")


def points_from_objects(items: list[dict[str, object]]) -> list[ScalingPoint]:
    """Points from a list of objects with the keys compute, params, tokens, loss (as MCP sends
    them); quantities may be numbers or strings such as ``"1e18"`` or ``"7B"``."""
    if not isinstance(items, list):
        raise InputError("points", type(items).__name__,
                         "a list of objects with the keys " + ", ".join(COLUMNS))
    _check_count(len(items))
    points = []
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise InputError(f"points[{index}]", item,
                             "an object with the keys " + ", ".join(COLUMNS))
        points.append(_point(item, index))
    return points


def as_points(points: Sequence[ScalingPoint] | Sequence[Mapping[str, object]],
              ) -> list[ScalingPoint]:
    """Points from a list of :class:`ScalingPoint` or of objects (or both), checked as
    :func:`points_from_objects` checks them."""
    if isinstance(points, str | bytes) or not isinstance(points, Sequence):
        raise InputError("points", type(points).__name__, "a list of points")
    _check_count(len(points))
    if all(isinstance(p, ScalingPoint) for p in points):
        return [p for p in points if isinstance(p, ScalingPoint)]
    items = [p.model_dump(exclude_none=True) if isinstance(p, ScalingPoint) else p
             for p in points]
    return points_from_objects(items)  # type: ignore[arg-type]  # it checks each item itself


def _csv_points(text: str) -> list[ScalingPoint]:
    rows = data_csv_rows(text, "points")
    if not rows:
        raise InputError("points", text, "at least one point after a header")
    header = [cell.strip().lower() for cell in rows[0]]
    unknown = [name for name in header if name not in COLUMNS]
    if unknown:
        raise InputError("points", unknown, f"only known columns: {_HEADER}")
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise InputError("points", repeated, f"each column once: {_HEADER}")
    if "loss" not in header or not ("compute" in header or {"params", "tokens"} <= set(header)):
        raise InputError("points", ",".join(header), _HEADER)
    data = rows[1:]
    _check_count(len(data))
    points = []
    for index, row in enumerate(data):
        if len(row) != len(header):
            raise InputError(f"points[{index}]", ",".join(row),
                             f"{len(header)} cells, one for each of {','.join(header)}")
        points.append(_point(dict(zip(header, row, strict=True)), index))
    return points


def parse_points(text: str, *,
                 fmt: Literal["csv", "json"] | None = None) -> list[ScalingPoint]:
    """Points from CSV or JSON text (module docstring); ``fmt`` None guesses: JSON when the
    text starts with ``[`` or ``{``, else CSV."""
    if not isinstance(text, str):
        raise InputError("points", type(text).__name__, "CSV or JSON text")
    if fmt not in (None, "csv", "json"):
        raise InputError("fmt", fmt, "csv or json (or leave it out to guess)")
    stripped = text.strip()
    if not stripped:
        raise InputError("points", text, "at least one point: CSV with " + _HEADER
                         + ", or a JSON list of objects")
    if fmt == "json" or (fmt is None and stripped[0] in "[{"):
        return points_from_objects(data_json(stripped, "points"))
    return _csv_points(text)


def check_losses(points: Sequence[ScalingPoint], higher_is_better: bool) -> None:
    """A loss (lower is better) above 0 in every point: L = E + a·C^(−b) fits E ≥ 0 and a > 0,
    so it has no curve through a loss of 0 or below. A metric where higher is better is fitted
    as E − a·C^(−b) with E free, so it may have any sign."""
    if higher_is_better:
        return
    for index, point in enumerate(points):
        if point.loss <= 0:
            raise InputError(f"points[{index}].loss", point.loss,
                             "a loss above 0, as every loss L = E + a·C^(−b) fits is (E ≥ 0, "
                             "a > 0); a metric where higher is better may be 0 or below, "
                             "with higher_is_better")


def check_target(compute: float | None, params: float | None, tokens: float | None) -> None:
    """A target given by all three agrees: compute = 6·params·tokens within
    :data:`~..vocabulary.FLOPS_TOLERANCE` (the rule ``optimal`` holds its flops to)."""
    if compute is None or params is None or tokens is None or flops_agree(compute, params,
                                                                           tokens):
        return
    raise InputError("target_compute", compute,
                     f"6 × target params × target tokens ({flops_6nd(params, tokens):.3g}) within "
                     f"{FLOPS_TOLERANCE:.0%}, or leave one of the three out")
