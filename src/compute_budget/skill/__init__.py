"""The knowledge of compute-budget: pure functions and pydantic models.

No I/O but the packaged data (catalog, MFU priors) and one deliberate exception: a ``config``
given as a local path is read by :func:`load_config` while the spec is validated, so the CLI and
the MCP server share one reader and one set of error messages. Nothing here imports from the
rest of the package; ``prompts``, ``tools`` and ``cli`` build on it.
"""

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
from .cost import CostEstimate, estimate_run_cost
from .decision import Decision, DecisionInputs, NextStep, Verdict, decision_summary
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
from .quantities import parse_quantity
from .run_kind import RunKind
from .run_spec import RunSpec
from .split import BudgetSplit, SplitRow, SplitSpec, budget_split

__all__ = [
    "PRESETS",
    "Accelerator",
    "Alternative",
    "AlternativeKind",
    "AlternativesOptions",
    "AlternativesReport",
    "Architecture",
    "BudgetSplit",
    "Catalog",
    "ComputeBudgetError",
    "ConfigError",
    "CostEstimate",
    "Decision",
    "DecisionInputs",
    "Finding",
    "FlopsBreakdown",
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
    "ParamBreakdown",
    "ParamReport",
    "PeakTflops",
    "Precision",
    "PriceQuote",
    "Remedy",
    "RunEstimate",
    "RunKind",
    "RunSpec",
    "Slowdown",
    "SplitRow",
    "SplitSpec",
    "UnknownAcceleratorError",
    "Verdict",
    "budget_split",
    "check_tensor_parallel",
    "count_params",
    "decision_summary",
    "describe_error",
    "estimate_memory",
    "estimate_run",
    "estimate_run_cost",
    "flops_per_token",
    "from_hf_config",
    "get_accelerator",
    "get_preset",
    "hardware_flops_per_token",
    "list_accelerators",
    "list_presets",
    "load_catalog",
    "load_config",
    "mfu_from_achieved",
    "mfu_prior",
    "param_report",
    "params_for_budget",
    "parse_quantity",
    "read_gain",
    "seconds_from_achieved",
    "split_budget",
    "suggest_alternatives",
    "tokens_for_budget",
    "train_flops",
    "training_seconds",
]
