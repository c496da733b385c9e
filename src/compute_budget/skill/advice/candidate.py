"""One candidate run of a comparison (:mod:`.candidates` reads them from a table or a list): a
run spec with a name, the gain it is predicted to produce and that gain's 1σ uncertainty. The
gain is a delta (``predicted_gain``) or the metric itself (``metric_now``, ``metric_expected``,
``higher_is_better``), read and checked as the verdict reads it (:func:`.gain.read_gain`)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from ..quantities import Gain, Uncertainty
from ..run_spec import RunSpec
from .decision import DecisionInputs
from .gain import read_gain

__all__ = ["MAX_NAME_LENGTH", "Candidate"]

MAX_NAME_LENGTH = 40


def _verdict_field(name: str) -> Any:
    """The verdict's field ``name`` (its default and description): the metric pair a candidate
    takes as ``decide`` takes it."""
    return DecisionInputs.model_fields[name]


class Candidate(RunSpec):
    """One candidate run: a run spec (every field of :class:`RunSpec`), its name and the gain it
    is predicted to produce, in the same units for every candidate."""

    name: str = Field(
        min_length=1, max_length=MAX_NAME_LENGTH,
        description=f"Short unique name of the candidate (1 to {MAX_NAME_LENGTH} characters).",
    )
    predicted_gain: Gain | None = Field(
        default=None,
        description="Predicted improvement from the run (a delta), in the user's metric, "
                    "higher is better (a loss reduction as a positive number); or give "
                    "metric_now and metric_expected.",
    )
    gain_uncertainty: Uncertainty = Field(
        description="1σ uncertainty of the gain, same units, ≥ 0 (0 if certain).",
    )
    metric_now: Gain | None = _verdict_field("metric_now")
    metric_expected: Gain | None = _verdict_field("metric_expected")
    higher_is_better: bool = _verdict_field("higher_is_better")

    @field_validator("name", mode="before")
    @classmethod
    def _clean_name(cls, value: object) -> object:
        if not isinstance(value, str):
            return value  # pydantic refuses it as "a valid string"
        text = value.strip()
        if any(not ch.isprintable() for ch in text):
            raise ValueError("must be printable text on one line")
        return text

    @model_validator(mode="after")
    def _one_gain(self) -> Candidate:
        """The gain read as the verdict reads it: one form, a whole metric pair."""
        read_gain(self.predicted_gain, self.gain_uncertainty, metric_now=self.metric_now,
                  metric_expected=self.metric_expected, higher_is_better=self.higher_is_better)
        return self
