"""The knowledge of compute-budget: pure functions and pydantic models.

No I/O but the packaged data (catalog, MFU priors) and one deliberate exception: a ``config``
given as a local path is read by :func:`load_config` while the spec is validated, so the CLI and
the MCP server share one reader and one set of error messages. Nothing here imports from the
rest of the package; ``prompts``, ``tools`` and ``cli`` build on it.

Imports are lazy (PEP 562): ``import compute_budget.skill`` costs next to nothing, and a name's
module is imported when the name is first used, so a command builds only the models it needs.
``_EXPORTS`` says which module defines each public name; the ``TYPE_CHECKING`` imports say the
same to a type checker, and ``__all__`` lists them (a test checks the three agree).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .alternatives import (
        Alternative,
        AlternativeKind,
        AlternativesOptions,
        AlternativesReport,
        suggest_alternatives,
    )
    from .architecture import (
        PRESETS,
        Architecture,
        LatentAttention,
        ParamBreakdown,
        check_tensor_parallel,
        count_params,
        from_hf_config,
        get_preset,
        list_presets,
        load_config,
    )
    from .candidates import (
        Candidate,
        parse_candidates,
        validate_candidates,
    )
    from .catalog import (
        Accelerator,
        Catalog,
        PeakTflops,
        Precision,
        PriceQuote,
        get_accelerator,
        list_accelerators,
        load_catalog,
    )
    from .compare import (
        CandidateResult,
        CompareSpec,
        Comparison,
        compare_candidates,
    )
    from .cost import CostEstimate, estimate_run_cost
    from .decision import Decision, DecisionInputs, NextStep, Verdict, decision_summary
    from .energy import (
        EnergyEstimate,
        energy_of,
    )
    from .errors import (
        ComputeBudgetError,
        ConfigError,
        InputError,
        UnknownAcceleratorError,
        describe_error,
    )
    from .estimate import RunEstimate, estimate_run
    from .findings import Finding
    from .flops import (
        FlopsBreakdown,
        HardwareFlops,
        flops_per_token,
        hardware_flops_per_token,
        mfu_from_achieved,
        seconds_from_achieved,
    )
    from .gain import GainReading, read_gain
    from .hub import (
        fetch_config,
    )
    from .kill_criteria import KillCriterion
    from .layout import LayoutChoice, Remedy, Slowdown
    from .lesson import (
        params_for_budget,
        split_budget,
        tokens_for_budget,
        train_flops,
        training_seconds,
    )
    from .memory_estimate import MemoryEstimate, MemorySpec, estimate_memory
    from .mfu import MfuPrior, ModelFamily, mfu_prior
    from .model_source import ModelSource, ParamReport, param_report
    from .model_spec import ModelAndLayout
    from .plan import (
        Plan,
        PlanReport,
        PlanSpec,
        plan_run,
    )
    from .plan_spec import (
        optimal_batch_tokens,
    )
    from .points import (
        ScalingPoint,
        parse_points,
        points_from_objects,
    )
    from .prediction import (
        FitSpec,
        GainFromPoints,
        OptimalSpec,
        decide,
        gain_for_run,
        optimal,
        predict,
    )
    from .quantities import parse_quantity
    from .run_kind import RunKind
    from .run_spec import RunSpec
    from .scaling_fit import (
        fit_scaling_law,
    )
    from .scaling_laws import (
        OptimalSplit,
        PublishedPrediction,
        compute_optimal,
        published_loss,
        published_prediction,
    )
    from .scaling_result import (
        ScalingFit,
    )
    from .split import BudgetSplit, SplitRow, SplitSpec, budget_split

_EXPORTS: dict[str, tuple[str, ...]] = {
    "alternatives": (
        "Alternative", "AlternativeKind", "AlternativesOptions", "AlternativesReport",
        "suggest_alternatives",
    ),
    "architecture": (
        "PRESETS", "Architecture", "LatentAttention", "ParamBreakdown", "check_tensor_parallel",
        "count_params", "from_hf_config", "get_preset", "list_presets", "load_config",
    ),
    "catalog": (
        "Accelerator", "Catalog", "PeakTflops", "Precision", "PriceQuote", "get_accelerator",
        "list_accelerators", "load_catalog",
    ),
    "cost": ("CostEstimate", "estimate_run_cost"),
    "decision": ("Decision", "DecisionInputs", "NextStep", "Verdict", "decision_summary"),
    "errors": (
        "ComputeBudgetError", "ConfigError", "InputError", "UnknownAcceleratorError",
        "describe_error",
    ),
    "estimate": ("RunEstimate", "estimate_run"),
    "findings": ("Finding",),
    "flops": (
        "FlopsBreakdown", "HardwareFlops", "flops_per_token", "hardware_flops_per_token",
        "mfu_from_achieved", "seconds_from_achieved",
    ),
    "gain": ("GainReading", "read_gain"),
    "kill_criteria": ("KillCriterion",),
    "layout": ("LayoutChoice", "Remedy", "Slowdown"),
    "lesson": (
        "params_for_budget", "split_budget", "tokens_for_budget", "train_flops",
        "training_seconds",
    ),
    "memory_estimate": ("MemoryEstimate", "MemorySpec", "estimate_memory"),
    "mfu": ("MfuPrior", "ModelFamily", "mfu_prior"),
    "model_source": ("ModelSource", "ParamReport", "param_report"),
    "model_spec": ("ModelAndLayout",),
    "quantities": ("parse_quantity",),
    "run_kind": ("RunKind",),
    "run_spec": ("RunSpec",),
    "split": ("BudgetSplit", "SplitRow", "SplitSpec", "budget_split"),
    "candidates": ("Candidate", "parse_candidates", "validate_candidates"),
    "compare": ("CandidateResult", "CompareSpec", "Comparison", "compare_candidates"),
    "energy": ("EnergyEstimate", "energy_of"),
    "plan": ("Plan", "PlanReport", "PlanSpec", "plan_run"),
    "points": ("ScalingPoint", "parse_points", "points_from_objects"),
    "scaling_fit": ("fit_scaling_law",),
    "scaling_result": ("ScalingFit",),
    "scaling_laws": ("OptimalSplit", "PublishedPrediction", "compute_optimal", "published_loss",
                     "published_prediction"),
    "prediction": ("FitSpec", "GainFromPoints", "OptimalSpec", "decide", "gain_for_run",
                   "optimal", "predict"),
    "plan_spec": ("optimal_batch_tokens",),
    "hub": ("fetch_config",),
}
"""Each module under ``skill`` → the public names it defines."""
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "PRESETS",
    "Accelerator",
    "Alternative",
    "AlternativeKind",
    "AlternativesOptions",
    "AlternativesReport",
    "Architecture",
    "BudgetSplit",
    "Candidate",
    "CandidateResult",
    "Catalog",
    "CompareSpec",
    "Comparison",
    "ComputeBudgetError",
    "ConfigError",
    "CostEstimate",
    "Decision",
    "DecisionInputs",
    "EnergyEstimate",
    "Finding",
    "FitSpec",
    "FlopsBreakdown",
    "GainFromPoints",
    "GainReading",
    "HardwareFlops",
    "InputError",
    "KillCriterion",
    "LatentAttention",
    "LayoutChoice",
    "MemoryEstimate",
    "MemorySpec",
    "MfuPrior",
    "ModelAndLayout",
    "ModelFamily",
    "ModelSource",
    "NextStep",
    "OptimalSpec",
    "OptimalSplit",
    "ParamBreakdown",
    "ParamReport",
    "PeakTflops",
    "Plan",
    "PlanReport",
    "PlanSpec",
    "Precision",
    "PriceQuote",
    "PublishedPrediction",
    "Remedy",
    "RunEstimate",
    "RunKind",
    "RunSpec",
    "ScalingFit",
    "ScalingPoint",
    "Slowdown",
    "SplitRow",
    "SplitSpec",
    "UnknownAcceleratorError",
    "Verdict",
    "budget_split",
    "check_tensor_parallel",
    "compare_candidates",
    "compute_optimal",
    "count_params",
    "decide",
    "decision_summary",
    "describe_error",
    "energy_of",
    "estimate_memory",
    "estimate_run",
    "estimate_run_cost",
    "fetch_config",
    "fit_scaling_law",
    "flops_per_token",
    "from_hf_config",
    "gain_for_run",
    "get_accelerator",
    "get_preset",
    "hardware_flops_per_token",
    "list_accelerators",
    "list_presets",
    "load_catalog",
    "load_config",
    "mfu_from_achieved",
    "mfu_prior",
    "optimal",
    "optimal_batch_tokens",
    "param_report",
    "params_for_budget",
    "parse_candidates",
    "parse_points",
    "parse_quantity",
    "plan_run",
    "points_from_objects",
    "predict",
    "published_loss",
    "published_prediction",
    "read_gain",
    "seconds_from_achieved",
    "split_budget",
    "suggest_alternatives",
    "tokens_for_budget",
    "train_flops",
    "training_seconds",
    "validate_candidates",
]


def __getattr__(name: str) -> Any:
    """Import the module that defines ``name`` on first use, and keep the name here."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
