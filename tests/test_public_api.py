"""The public surface re-exported from ``compute_budget``: a change here is a change for users."""

import compute_budget
from compute_budget import skill


def test_public_surface() -> None:
    assert sorted(compute_budget.__all__) == sorted([
        "Accelerator", "Alternative", "AlternativeKind", "AlternativesOptions",
        "AlternativesReport", "Architecture", "BudgetTable", "Catalog", "ComputeBudgetError",
        "ConfigError", "CostEstimate", "Decision", "DecisionInputs", "Finding", "GainReading",
        "KillCriterion", "NextStep", "read_gain",
        "FlopsBreakdown", "HardwareFlops", "InputError", "LatentAttention", "LayoutChoice",
        "MemoryEstimate", "MemorySpec", "MfuPrior", "ModelAndLayout", "ModelFamily",
        "ModelSource", "PRESETS", "ParamBreakdown", "ParamReport", "PeakTflops", "Precision",
        "PriceQuote", "Remedy", "RunEstimate", "RunKind", "RunSpec",
        "Slowdown", "BudgetTableRow", "BudgetTableSpec", "UnknownAcceleratorError", "Verdict",
        "budget_table",
        "check_tensor_parallel", "count_params", "decision_summary", "describe_error",
        "estimate_memory", "estimate_run", "estimate_run_cost", "flops_per_token",
        "from_hf_config", "get_accelerator", "get_preset", "hardware_flops_per_token",
        "list_accelerators", "list_presets", "load_catalog", "load_config",
        "mfu_from_achieved", "mfu_prior", "param_report", "params_for_budget",
        "parse_quantity", "seconds_from_achieved", "split_budget", "suggest_alternatives",
        "tokens_for_budget", "train_flops", "training_seconds",
        # issue 10
        "Candidate", "CandidateResult", "CompareSpec", "Comparison", "compare_candidates",
        "parse_candidates", "validate_candidates", "EnergyEstimate", "energy_of", "Plan",
        "PlanReport", "PlanSpec", "plan_run", "ScalingPoint", "parse_points",
        "points_from_objects", "ScalingFit", "fit_scaling_law", "OptimalSplit",
        "PublishedPrediction", "compute_optimal", "published_loss", "published_prediction",
        "FitSpec", "gain_for_run", "predict", "OptimalSpec", "optimal",
        "GainFromPoints", "decide", "optimal_batch_tokens", "fetch_config",
        # issue 15
        "AlternativesSpec", "MfuUsed", "PriceUsed", "VerdictSpec", "verdict_on",
        "CatalogQuery", "find_accelerators", "report_of", "alternatives_for",
        # issue 17: the team's own runs
        "OwnRun", "OwnRunsMfu", "PAST_RUN_COLUMNS", "PastRun", "own_runs_mfu",
        "parse_calibration",
        # issue 20: a probe's measurement
        "PROBE_FORMAT", "ProbeReport", "ProbeResult", "ProbeSpec", "probe_report",
    ])
    for name in compute_budget.__all__:
        assert getattr(compute_budget, name) is getattr(skill, name)


def test_errors_are_value_errors() -> None:
    assert issubclass(compute_budget.InputError, ValueError)
    assert issubclass(compute_budget.UnknownAcceleratorError, compute_budget.InputError)
    assert issubclass(compute_budget.ConfigError, compute_budget.InputError)


def test_skill_imports_nothing_else_of_ours() -> None:
    import ast
    from pathlib import Path

    root = Path(skill.__file__).parent
    for path in root.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level >= 2:
                raise AssertionError(f"{path.name} imports from outside skill/")
            if isinstance(node, ast.ImportFrom | ast.Import):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [
                    a.name for a in node.names]
                for name in names:
                    assert not name.startswith(("compute_budget.tools", "compute_budget.cli",
                                                "compute_budget.prompts", "mcp", "jinja2")), (
                        f"{path.name} imports {name}")


def test_lazy_exports_agree_with_the_type_checker_imports() -> None:
    """``skill`` imports its names lazily: ``__all__``, the name → module map and the
    ``TYPE_CHECKING`` imports (what mypy sees) must list the same names, each from its module."""
    import ast
    import importlib
    from pathlib import Path

    tree = ast.parse(Path(skill.__file__).read_text())
    guarded = next(node for node in tree.body if isinstance(node, ast.If))
    seen = {alias.name: node.module for node in guarded.body
            if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert seen == skill._MODULE_OF
    assert sorted(skill.__all__) == sorted(seen)
    for name, module in seen.items():
        defined = getattr(importlib.import_module(f"compute_budget.skill.{module}"), name)
        assert getattr(skill, name) is defined
    assert set(skill.__all__) <= set(dir(skill))


def test_an_unknown_name_is_an_attribute_error() -> None:
    import pytest

    with pytest.raises(AttributeError, match="no_such_thing"):
        _ = skill.no_such_thing  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="no_such_thing"):
        _ = compute_budget.no_such_thing  # type: ignore[attr-defined]


def test_renamed_names_still_import_for_one_release_with_a_warning() -> None:
    """Issue 15: the priced split table is the budget table; the old names still work."""
    import pytest

    for old, new in (("BudgetSplit", "BudgetTable"), ("SplitRow", "BudgetTableRow"),
                     ("SplitSpec", "BudgetTableSpec"), ("budget_split", "budget_table")):
        with pytest.warns(DeprecationWarning, match=new):
            assert getattr(skill, old) is getattr(skill, new)
        with pytest.warns(DeprecationWarning, match=new):
            assert getattr(compute_budget, old) is getattr(skill, new)
        assert old not in skill.__all__


def test_bad_input_is_a_value_error_either_way_and_described_the_same() -> None:
    # README, "As a library": a spec model raises pydantic's ValidationError, a function an
    # InputError; both are ValueErrors, and describe_error words either as the doors do
    import pytest

    from compute_budget import InputError, RunSpec, describe_error, train_flops

    with pytest.raises(ValueError) as spec_error:
        RunSpec(params="7B", tokens="1T", gpu="h100", gpu_count=8, tp=3)
    assert describe_error(spec_error.value) == "tp: 3 is not allowed; a divisor of gpu_count (8)"
    with pytest.raises(InputError) as call_error:
        train_flops(-1, 1e12)
    assert describe_error(call_error.value).startswith(f"{call_error.value.field}: ")
