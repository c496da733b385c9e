"""What the alternatives return: one :class:`Alternative` per row, its kind-specific numbers in
a :data:`AlternativeDetail` discriminated by ``kind``, and the report around them
(:mod:`.alternatives` says which kinds a run gets and how each is counted)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..estimate_result import Feasibility, RunEstimate
from ..hardware.catalog import PriceQuote
from ..memory.layout import LORA_RANK_SUGGESTED
from ..model.fields import ModelParamCount
from ..quantities import Gain, NotBool, Uncertainty
from ..vocabulary import FiniteResult, RunKind

__all__ = [
    "DISTILL_TOKEN_FRACTION",
    "LORA_RANK",
    "SHORTER_RUN_FRACTION",
    "Alternative",
    "AlternativeDetail",
    "AlternativeKind",
    "AlternativesOptions",
    "AlternativesReport",
    "DifferentIdeaDetail",
    "DistillationDetail",
    "FewerTokensDetail",
    "FillMachineDetail",
    "LoraDetail",
    "MoreSeedsDetail",
    "OtherHardwareDetail",
    "SeedsRule",
    "ShorterRunDetail",
    "SmallerBaseDetail",
    "TokenShare",
]

AlternativeKind = Literal[
    "smaller_scale", "shorter_run", "distillation", "other_hardware", "different_idea",
    "more_seeds", "lora", "fewer_tokens", "smaller_base", "fill_machine",
]
SeedsRule = Literal["clears_gain", "halves_uncertainty", "gain_not_positive", "out_of_reach"]
"""How more_seeds counted its runs: the fewest that bring σ/√k under the gain; 4, which halve σ
(the gain or σ is missing); none (a gain ≤ 0 never clears its noise); none (over MAX_SEEDS)."""

SHORTER_RUN_FRACTION = 0.3
"""Share of the tokens the shorter run (and the fewer-tokens run) trains on first."""
DISTILL_TOKEN_FRACTION = 0.1
"""Share of the tokens a distillation run needs (conservative against Minitron's 40x)."""
LORA_RANK = LORA_RANK_SUGGESTED
"""Rank of the LoRA alternative (on every linear layer of the decoder)."""

TokenShare = Annotated[float, Field(ge=1e-4, le=1, allow_inf_nan=False), NotBool]
"""A share of the original run's tokens, in [10⁻⁴, 1]."""


class _Detail(BaseModel):
    model_config = ConfigDict(frozen=True)


class ShorterRunDetail(_Detail):
    """The same model on a share of the tokens first."""

    kind: Literal["shorter_run"] = "shorter_run"
    token_fraction: float = Field(description="Share of the original tokens.")


class FewerTokensDetail(_Detail):
    """A run from a model on a share of its tokens first, with its stop rule."""

    kind: Literal["fewer_tokens"] = "fewer_tokens"
    token_fraction: float = Field(description="Share of the original tokens.")
    predicted_gain: float | None = Field(description="The predicted gain given, if any.")
    gain_uncertainty: float | None = Field(description="Its 1σ uncertainty, if given.")
    stop_if_gain_below: float | None = Field(
        description="Stop unless the eval metric has moved by at least this much at the end of "
                    "the shorter run (token_fraction × predicted_gain, user's units; 0, any "
                    "movement, for a predicted gain ≤ 0); None without a predicted_gain.")


class DistillationDetail(_Detail):
    """Training the same model from a larger teacher on a share of the tokens."""

    kind: Literal["distillation"] = "distillation"
    token_fraction: float = Field(description="Share of the original tokens.")
    teacher_params: float = Field(description="Teacher parameters.")
    teacher_active_params: float = Field(
        description="Teacher parameters active per token (its forward pass).")
    teacher_preset: str | None = Field(description="The teacher's preset, when it is one.")
    teacher_name: str | None = Field(description="The teacher's name, when it is a preset.")


class SmallerBaseDetail(_Detail):
    """The next smaller model of the same family."""

    kind: Literal["smaller_base"] = "smaller_base"
    base_preset: str = Field(description="The preset of the smaller model.")


class LoraDetail(_Detail):
    """LoRA (or QLoRA) instead of training every weight."""

    kind: Literal["lora"] = "lora"
    lora_rank: int = Field(description="The LoRA rank.")
    weights_bits: int = Field(description="Storage bits of the frozen base (16 LoRA, 4 QLoRA).")


class MoreSeedsDetail(_Detail):
    """Repeats of an ablation whose mean brings the noise under the gain."""

    kind: Literal["more_seeds"] = "more_seeds"
    runs: int | None = Field(description="Runs (seeds) priced; None when none suffice.")
    seeds_rule: SeedsRule = Field(description="How the runs were counted (see SeedsRule).")
    predicted_gain: float | None = Field(description="The predicted gain given, if any.")
    gain_uncertainty: float | None = Field(description="Its 1σ uncertainty, if given.")
    uncertainty_after: float | None = Field(description="σ/√runs, the uncertainty of the mean.")


class OtherHardwareDetail(_Detail):
    """The same FLOPs on another device, at its on-demand price."""

    kind: Literal["other_hardware"] = "other_hardware"
    price_quote: PriceQuote = Field(
        description="The on-demand quote the device is priced at (of the machine that holds the "
                    "run, where the seller rents fixed sizes).")
    original_price_on_demand: bool | None = Field(
        description="Whether the original's price is a catalog on-demand quote (False: another "
                    "kind, e.g. a reservation; None: the user's own price or no price).")
    uncalibrated: bool = Field(
        description="The device's MFU prior is borrowed from another generation (no published "
                    "runs on it).")
    saving_usd_range: tuple[float, float] | None = Field(
        description="Saving [low, high] in US dollars over the device's MFU band against the "
                    "original's nominal cost; low ≤ 0 when uncalibrated.")


class FillMachineDetail(_Detail):
    """The same run on every device the original's machines are paid for."""

    kind: Literal["fill_machine"] = "fill_machine"
    gpu_count_used: int = Field(description="Devices the original run uses.")
    paid_gpus: int = Field(
        description="Devices its machines are paid for, all of which this run uses.")


class DifferentIdeaDetail(_Detail):
    """The opportunity cost: what the same money buys."""

    kind: Literal["different_idea"] = "different_idea"
    runs_affordable: float = Field(
        description="How many runs of kind runs_of the original budget buys.")
    runs_of: AlternativeKind = Field(
        description="The run runs_affordable counts (smaller_scale or fewer_tokens).")


AlternativeDetail = Annotated[
    ShorterRunDetail | FewerTokensDetail | DistillationDetail | SmallerBaseDetail | LoraDetail
    | MoreSeedsDetail | OtherHardwareDetail | FillMachineDetail | DifferentIdeaDetail,
    Field(discriminator="kind"),
]
"""The numbers only one kind of alternative has."""


class Alternative(BaseModel):
    """One cheaper way to get the answer, with its own estimate and its saving."""

    model_config = ConfigDict(frozen=True)

    kind: AlternativeKind
    run_kind: RunKind = Field(description="Kind of the run this is an alternative to.")
    estimate: RunEstimate | None = Field(
        description="Full estimate of the alternative run (more_seeds: of each of its runs, the "
                    "totals below are runs × it); None for different_idea.")
    feasibility: Feasibility | None = Field(
        description="ok, does_not_fit or too_long: the row's own memory check, or the "
                    "original's for the same model on the same devices; None for "
                    "different_idea.")
    params: float | None = Field(description="Parameters of the alternative run.")
    tokens: float | None = Field(description="Training tokens of the alternative run (each run).")
    accelerator: str | None = Field(description="Device of the alternative run.")
    flops: float | None = Field(description="Model FLOPs of the alternative, all runs.")
    wall_days: float | None = Field(
        description="Wall-clock days (more_seeds: the runs one after another on the devices).")
    gpu_hours: float | None = Field(description="Device-hours.")
    dollar_cost: float | None = Field(description="US dollars; None when the price is unknown.")
    dollar_cost_with_failures: float | None = Field(description="US dollars × failure budget.")
    saving_usd: float | None = Field(
        description="Original minus alternative cost in US dollars (negative when it costs "
                    "more); None when either is unknown.")
    cost_ratio: float | None = Field(
        description="Alternative cost / original cost (dollars, or device-hours on the same "
                    "device when prices are unknown); None when not comparable.")
    detail: AlternativeDetail | None = Field(
        default=None, description="The numbers only this kind has; None for smaller_scale.")


class AlternativesOptions(BaseModel):
    """Optional knobs of the alternatives (defaults documented in :mod:`.alternatives`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    teacher_params: ModelParamCount | None = Field(
        default=None,
        description="Parameters of a larger model to distil from. Pre-training "
                    "only; default: the next larger model of the same family, if any.",
    )
    distill_token_fraction: TokenShare = Field(
        default=DISTILL_TOKEN_FRACTION,
        description="Share of the original tokens a distillation run trains on, in (0, 1].",
    )
    shorter_run_fraction: TokenShare = Field(
        default=SHORTER_RUN_FRACTION,
        description="Share of the original tokens the shorter (or fewer-tokens) run trains on "
                    "first, in (0, 1].",
    )
    predicted_gain: Gain | None = Field(
        default=None,
        description="Optional: predicted improvement from the run, in the user's own metric "
                    "(accuracy points, loss reduction, win rate …); higher is better. Sets the "
                    "stop rule of a fewer-tokens run and, with gain_uncertainty, the seeds an "
                    "ablation needs.",
    )
    gain_uncertainty: Uncertainty | None = Field(
        default=None,
        description="Optional: 1σ uncertainty of the predicted gain, same units, ≥ 0 (from "
                    "the spread of seeds or small-scale runs, or a scaling-fit interval).",
    )


class AlternativesReport(FiniteResult):
    """The original estimate and its cheaper alternatives."""

    model_config = ConfigDict(frozen=True)

    kind: RunKind = Field(description="Kind of run the alternatives are for.")
    original: RunEstimate
    alternatives: list[Alternative]
