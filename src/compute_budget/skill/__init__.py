"""The knowledge of compute-budget: pure functions and pydantic models, no I/O but packaged data.

Nothing here imports from the rest of the package; ``prompts``, ``tools`` and ``cli`` build on it.
"""

from .alternatives import (
    Alternative,
    AlternativeKind,
    AlternativesOptions,
    AlternativesReport,
    suggest_alternatives,
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
from .decision import Decision, DecisionCheck, DecisionInputs, Verdict, decision_summary
from .errors import (
    ComputeBudgetError,
    ConfigError,
    InputError,
    UnknownAcceleratorError,
    describe_error,
)
from .estimate import CostEstimate, RunEstimate, RunSpec, estimate_run, estimate_run_cost
from .lesson import (
    params_for_budget,
    split_budget,
    tokens_for_budget,
    train_flops,
    training_seconds,
)
from .memory import MemoryEstimate, MemorySpec, estimate_memory
from .mfu import MfuPrior, ModelFamily, mfu_prior
from .quantities import parse_quantity
from .split import BudgetSplit, SplitRow, SplitSpec, budget_split

__all__ = [
    "Accelerator",
    "Alternative",
    "AlternativeKind",
    "AlternativesOptions",
    "AlternativesReport",
    "BudgetSplit",
    "Catalog",
    "ComputeBudgetError",
    "ConfigError",
    "CostEstimate",
    "Decision",
    "DecisionCheck",
    "DecisionInputs",
    "InputError",
    "MemoryEstimate",
    "MemorySpec",
    "MfuPrior",
    "ModelFamily",
    "PeakTflops",
    "Precision",
    "PriceQuote",
    "RunEstimate",
    "RunSpec",
    "SplitRow",
    "SplitSpec",
    "UnknownAcceleratorError",
    "Verdict",
    "budget_split",
    "decision_summary",
    "describe_error",
    "estimate_memory",
    "estimate_run",
    "estimate_run_cost",
    "get_accelerator",
    "list_accelerators",
    "load_catalog",
    "mfu_prior",
    "params_for_budget",
    "parse_quantity",
    "split_budget",
    "suggest_alternatives",
    "tokens_for_budget",
    "train_flops",
    "training_seconds",
]
