"""The knowledge of compute-budget: pure functions and pydantic models, in six wings.

``vocabulary``, ``errors`` and ``quantities`` are the ground floor; ``model/``, ``hardware/``,
``memory/``, ``scaling/``, then the run spec and the estimate, then ``advice/`` and
``planning/`` build on it, each importing only what lies below it (``README.md`` says which
wing owns what). No I/O but the packaged data and one deliberate exception: a ``config`` given
as a local path (or a ``model`` id) is read while the spec is validated, so the CLI and the MCP
server share one reader and one set of error messages. Nothing here imports from the rest of the
package; ``prompts``, ``tools`` and ``cli`` build on it.

Imports are lazy (PEP 562): ``import compute_budget.skill`` costs next to nothing, and a name's
module is imported when the name is first used, so a command builds only the models it needs.
``_EXPORTS`` says which module defines each public name and is the one list of them:
``__all__`` is built from it, and the ``TYPE_CHECKING`` imports say the same to a type checker
(a test checks that they agree).
"""

from __future__ import annotations

import warnings
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .advice.alternative_models import (
        Alternative as Alternative,
        AlternativeKind as AlternativeKind,
        AlternativesOptions as AlternativesOptions,
        AlternativesReport as AlternativesReport,
    )
    from .advice.alternatives import (
        AlternativesSpec as AlternativesSpec,
        alternatives_for as alternatives_for,
        suggest_alternatives as suggest_alternatives,
    )
    from .advice.candidates import (
        Candidate as Candidate,
        parse_candidates as parse_candidates,
        validate_candidates as validate_candidates,
    )
    from .advice.compare import (
        CandidateResult as CandidateResult,
        CompareSpec as CompareSpec,
        Comparison as Comparison,
        compare_candidates as compare_candidates,
    )
    from .advice.decision import (
        Decision as Decision,
        DecisionInputs as DecisionInputs,
        NextStep as NextStep,
        Verdict as Verdict,
        decision_summary as decision_summary,
    )
    from .advice.findings import Finding as Finding
    from .advice.from_points import (
        GainFromPoints as GainFromPoints,
        VerdictSpec as VerdictSpec,
        decide as decide,
        gain_for_run as gain_for_run,
        verdict_on as verdict_on,
    )
    from .advice.gain import GainReading as GainReading, read_gain as read_gain
    from .advice.kill_criteria import KillCriterion as KillCriterion
    from .errors import (
        ComputeBudgetError as ComputeBudgetError,
        ConfigError as ConfigError,
        InputError as InputError,
        UnknownAcceleratorError as UnknownAcceleratorError,
        describe_error as describe_error,
    )
    from .estimate import estimate_run as estimate_run
    from .estimate_result import MfuUsed as MfuUsed, RunEstimate as RunEstimate
    from .hardware.calibration_text import parse_calibration as parse_calibration
    from .hardware.catalog import (
        Accelerator as Accelerator,
        Catalog as Catalog,
        CatalogQuery as CatalogQuery,
        PeakTflops as PeakTflops,
        Precision as Precision,
        PriceQuote as PriceQuote,
        PriceUsed as PriceUsed,
        find_accelerators as find_accelerators,
        get_accelerator as get_accelerator,
        list_accelerators as list_accelerators,
        load_catalog as load_catalog,
    )
    from .hardware.cost import CostEstimate as CostEstimate, estimate_run_cost as estimate_run_cost
    from .hardware.energy import EnergyEstimate as EnergyEstimate, energy_of as energy_of
    from .hardware.measured import (
        PROBE_FORMAT as PROBE_FORMAT,
        ProbeResult as ProbeResult,
    )
    from .hardware.mfu import (
        MfuPrior as MfuPrior,
        ModelFamily as ModelFamily,
        mfu_prior as mfu_prior,
    )
    from .hardware.own_runs import (
        PAST_RUN_COLUMNS as PAST_RUN_COLUMNS,
        OwnRun as OwnRun,
        OwnRunsMfu as OwnRunsMfu,
        PastRun as PastRun,
        own_runs_mfu as own_runs_mfu,
    )
    from .memory.estimate import (
        MemoryEstimate as MemoryEstimate,
        MemorySpec as MemorySpec,
        estimate_memory as estimate_memory,
    )
    from .memory.layout import LayoutChoice as LayoutChoice, Slowdown as Slowdown
    from .memory.probe_report import (
        ProbeReport as ProbeReport,
        ProbeSpec as ProbeSpec,
        probe_report as probe_report,
    )
    from .memory.remedies import Remedy as Remedy
    from .memory.spec import ModelAndLayout as ModelAndLayout
    from .model.architecture import (
        Architecture as Architecture,
        LatentAttention as LatentAttention,
        ParamBreakdown as ParamBreakdown,
    )
    from .model.config_file import load_config as load_config
    from .model.flops import (
        FlopsBreakdown as FlopsBreakdown,
        HardwareFlops as HardwareFlops,
        flops_per_token as flops_per_token,
        hardware_flops_per_token as hardware_flops_per_token,
        mfu_from_achieved as mfu_from_achieved,
        seconds_from_achieved as seconds_from_achieved,
    )
    from .model.hf_config import from_hf_config as from_hf_config
    from .model.hub import fetch_config as fetch_config
    from .model.param_count import (
        check_tensor_parallel as check_tensor_parallel,
        count_params as count_params,
    )
    from .model.presets import (
        PRESETS as PRESETS,
        get_preset as get_preset,
        list_presets as list_presets,
    )
    from .model.source import (
        ModelSource as ModelSource,
        ParamReport as ParamReport,
        param_report as param_report,
        report_of as report_of,
    )
    from .planning.budget_table import (
        BudgetTable as BudgetTable,
        BudgetTableRow as BudgetTableRow,
        BudgetTableSpec as BudgetTableSpec,
        budget_table as budget_table,
    )
    from .planning.plan import Plan as Plan, PlanReport as PlanReport, plan_run as plan_run
    from .planning.plan_spec import PlanSpec as PlanSpec
    from .quantities import parse_quantity as parse_quantity
    from .run_spec import RunSpec as RunSpec
    from .scaling.batch import optimal_batch_tokens as optimal_batch_tokens
    from .scaling.fit import fit_scaling_law as fit_scaling_law
    from .scaling.lesson import (
        params_for_budget as params_for_budget,
        split_budget as split_budget,
        tokens_for_budget as tokens_for_budget,
        train_flops as train_flops,
        training_seconds as training_seconds,
    )
    from .scaling.points import (
        ScalingPoint as ScalingPoint,
        parse_points as parse_points,
        points_from_objects as points_from_objects,
    )
    from .scaling.published import (
        OptimalSplit as OptimalSplit,
        PublishedPrediction as PublishedPrediction,
        compute_optimal as compute_optimal,
        published_loss as published_loss,
        published_prediction as published_prediction,
    )
    from .scaling.result import ScalingFit as ScalingFit
    from .scaling.specs import (
        FitSpec as FitSpec,
        OptimalSpec as OptimalSpec,
        optimal as optimal,
        predict as predict,
    )
    from .vocabulary import RunKind as RunKind

_EXPORTS: dict[str, tuple[str, ...]] = {
    "advice.alternative_models": (
        "Alternative", "AlternativeKind", "AlternativesOptions", "AlternativesReport"
    ),
    "advice.alternatives": ("AlternativesSpec", "alternatives_for", "suggest_alternatives"),
    "advice.candidates": ("Candidate", "parse_candidates", "validate_candidates"),
    "advice.compare": ("CandidateResult", "CompareSpec", "Comparison", "compare_candidates"),
    "advice.decision": ("Decision", "DecisionInputs", "NextStep", "Verdict", "decision_summary"),
    "advice.findings": ("Finding",),
    "advice.from_points": (
        "GainFromPoints", "VerdictSpec", "decide", "gain_for_run", "verdict_on"
    ),
    "advice.gain": ("GainReading", "read_gain"),
    "advice.kill_criteria": ("KillCriterion",),
    "errors": (
        "ComputeBudgetError", "ConfigError", "InputError", "UnknownAcceleratorError",
        "describe_error"
    ),
    "estimate": ("estimate_run",),
    "estimate_result": ("MfuUsed", "RunEstimate"),
    "hardware.catalog": (
        "Accelerator", "Catalog", "CatalogQuery", "PeakTflops", "Precision", "PriceQuote",
        "PriceUsed", "find_accelerators", "get_accelerator", "list_accelerators", "load_catalog"
    ),
    "hardware.cost": ("CostEstimate", "estimate_run_cost"),
    "hardware.energy": ("EnergyEstimate", "energy_of"),
    "hardware.measured": ("PROBE_FORMAT", "ProbeResult"),
    "memory.probe_report": ("ProbeReport", "ProbeSpec", "probe_report"),
    "hardware.mfu": ("MfuPrior", "ModelFamily", "mfu_prior"),
    "hardware.own_runs": ("OwnRun", "OwnRunsMfu", "PAST_RUN_COLUMNS", "PastRun", "own_runs_mfu"),
    "hardware.calibration_text": ("parse_calibration",),
    "memory.estimate": ("MemoryEstimate", "MemorySpec", "estimate_memory"),
    "memory.layout": ("LayoutChoice", "Slowdown"),
    "memory.remedies": ("Remedy",),
    "memory.spec": ("ModelAndLayout",),
    "model.architecture": ("Architecture", "LatentAttention", "ParamBreakdown"),
    "model.config_file": ("load_config",),
    "model.flops": (
        "FlopsBreakdown", "HardwareFlops", "flops_per_token", "hardware_flops_per_token",
        "mfu_from_achieved", "seconds_from_achieved"
    ),
    "model.hf_config": ("from_hf_config",),
    "model.hub": ("fetch_config",),
    "model.param_count": ("check_tensor_parallel", "count_params"),
    "model.presets": ("PRESETS", "get_preset", "list_presets"),
    "model.source": ("ModelSource", "ParamReport", "param_report", "report_of"),
    "planning.budget_table": ("BudgetTable", "BudgetTableRow", "BudgetTableSpec", "budget_table"),
    "planning.plan": ("Plan", "PlanReport", "plan_run"),
    "planning.plan_spec": ("PlanSpec",),
    "quantities": ("parse_quantity",),
    "scaling.batch": ("optimal_batch_tokens",),
    "run_spec": ("RunSpec",),
    "scaling.fit": ("fit_scaling_law",),
    "scaling.lesson": (
        "params_for_budget", "split_budget", "tokens_for_budget", "train_flops",
        "training_seconds"
    ),
    "scaling.points": ("ScalingPoint", "parse_points", "points_from_objects"),
    "scaling.published": (
        "OptimalSplit", "PublishedPrediction", "compute_optimal", "published_loss",
        "published_prediction"
    ),
    "scaling.result": ("ScalingFit",),
    "scaling.specs": ("FitSpec", "OptimalSpec", "optimal", "predict"),
    "vocabulary": ("RunKind",),
}
"""Each module under ``skill`` → the public names it defines."""
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

RENAMED: dict[str, str] = {
    "BudgetSplit": "BudgetTable", "SplitRow": "BudgetTableRow", "SplitSpec": "BudgetTableSpec",
    "budget_split": "budget_table",
}
"""Old public name → its new name: importable for one release, with a DeprecationWarning."""

__all__ = sorted(_MODULE_OF)  # noqa: PLE0605 (built from the one list of names)


def __getattr__(name: str) -> Any:
    """Import the module that defines ``name`` on first use, and keep the name here."""
    if name in RENAMED:
        warnings.warn(f"compute_budget.skill.{name} is renamed {RENAMED[name]}; the old name "
                      "goes in the next release", DeprecationWarning, stacklevel=2)
        return __getattr__(RENAMED[name])
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
