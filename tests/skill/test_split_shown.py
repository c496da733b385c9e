"""The sizes a dollar split recommends fit the budget as a user reads them (a user review of the
MCP server): ``split_budget`` on $60k and 8 × H100 read 7.7B on 154B tokens, costing exactly
$60,000 with the failure budget, and those numbers, passed to the verdict on the same devices
with the same budget, cost $60,070: MARGINAL, "$69.70 over budget". The sizes are now rounded
down to the three digits shown and priced as shown."""

import re

import pytest

from compute_budget import (
    BudgetTableSpec,
    RunSpec,
    VerdictSpec,
    budget_table,
    estimate_run,
    verdict_on,
)
from compute_budget.prompts import render_split
from compute_budget.prompts.render import fmt_count
from compute_budget.skill.planning.budget_shown import floor_shown

BEST = re.compile(r"\*\*Best size at [^:]*: (\S+) parameters on (\S+) tokens\*\*")
SAFE = re.compile(r"\*\*Within \$[\d,]+ even at the slow end [^:]*: (\S+) parameters on (\S+) "
                  r"tokens\*\*")
CASES = [pytest.param(usd, gpu, None, marks=[pytest.mark.slow] if usd > 1e6 else [])
         for gpu in ("h100", "a100-80gb", "tpu-v5p")
         for usd in (10_000, 60_000, 1_000_000, 5_000_000)]
"""The review's budgets on three devices at the default count (8: the $1M and $5M splits take
longer than a year there, so their verdicts are no-go for time, never for money)."""
COUNTED = [(1_000_000, "h100", 256), (5_000_000, "tpu-v5p", 512)]
"""Budgets on a count that runs them within a year, so the whole verdict can be go."""


def _verdict(usd: float, gpu: str, count: int, params: str, tokens: str) -> VerdictSpec:
    # a gain far beyond its uncertainty: only time, memory or money can hold the verdict back
    return VerdictSpec(params=params, tokens=tokens, gpu=gpu, gpu_count=count, budget_usd=usd,
                       predicted_gain=1, gain_uncertainty=0.1)


@pytest.mark.parametrize(("usd", "gpu", "count"), CASES + COUNTED)
def test_the_sizes_shown_fit_the_budget_they_were_sized_for(
        usd: float, gpu: str, count: int | None) -> None:
    table = budget_table(BudgetTableSpec(budget_usd=usd, gpu=gpu, gpu_count=count))
    text = render_split(table)
    assert table.gpu_count == (count or 8) and f"on {table.gpu_count} × " in text
    safe = table.safe_split
    assert safe is not None
    best_text, safe_text = BEST.search(text), SAFE.search(text)
    assert best_text is not None and safe_text is not None, text
    for row, shown, slow in ((table.ratio_split, best_text, False), (safe, safe_text, True)):
        params, tokens = shown.groups()
        assert (params, tokens) == (fmt_count(row.params), fmt_count(row.tokens))
        spec = _verdict(usd, gpu, table.gpu_count, params, tokens)
        # what the markdown says is what the structured fields hold, to the last digit
        assert (spec.params, spec.tokens) == (row.params, row.tokens)
        assert row.flops == 6 * row.params * row.tokens
        run = estimate_run(RunSpec(params=params, tokens=tokens, gpu=gpu,
                                   gpu_count=table.gpu_count))
        assert run.dollar_cost_with_failures == pytest.approx(row.dollar_cost_with_failures,
                                                              rel=1e-12)
        assert run.dollar_cost_with_failures_range is not None
        cost = run.dollar_cost_with_failures_range[1] if slow else run.dollar_cost_with_failures
        assert cost is not None and cost <= usd
        decision = verdict_on(spec)
        (money,) = [f for f in decision.findings if f.check == "within_budget"]
        assert (money.passed, money.cause) == (True, "ok"), money
        assert decision.verdict == ("go" if decision.feasibility == "ok" else "no-go")
        assert decision.feasibility in (("ok",) if count else ("ok", "too_long"))
    # rounded down, not thrown away: three digits (N, then D = 20·N) lose at most about 3% of
    # the FLOPs the budget buys (less than it, where the layout changes: tpu-v5p at $5M)
    assert table.ratio_split.flops >= 0.97 * table.budget_flops
    assert safe.dollar_cost_with_failures_range is not None
    assert safe.dollar_cost_with_failures_range[1] >= 0.95 * usd


def test_60k_on_h100_reads_a_size_the_verdict_finds_within_the_budget() -> None:
    # The review's case. $60,000 / 1.5 / $3.99 (the catalog's H100, RunPod) on 8 × H100 at
    # the prior's MFU 0.199 buys C = 7.1065e21 FLOPs: N = sqrt(C / 120) = 7.6955B on 153.91B
    # tokens, which read '7.7B' on '154B' (6 × 7.7e9 × 154e9 = 7.1148e21 FLOPs, $60,070 with
    # failures). Rounded down: 7.69B and 20 × 7.69B = 153.8B → 153B, 7.0594e21 FLOPs, $59,602.
    table = budget_table(BudgetTableSpec(budget_usd="$60k", gpu="h100"))
    best = table.ratio_split
    assert table.budget_flops == pytest.approx(7.1065e21, rel=1e-4)
    assert (best.params, best.tokens, table.gpu_count) == (7.69e9, 153e9, 8)
    assert best.dollar_cost_with_failures == pytest.approx(59_602.13, abs=0.01)
    assert BEST.search(render_split(table)).groups() == ("7.69B", "153B")  # type: ignore[union-attr]
    assert verdict_on(_verdict(60_000, "h100", 8, "7.69B", "153B")).verdict == "go"
    # the numbers read before: over by $69.70 with the failure budget
    before = verdict_on(_verdict(60_000, "h100", 8, "7.7B", "154B"))
    (money,) = [f for f in before.findings if f.check == "within_budget"]
    assert (before.verdict, money.cause) == ("marginal", "over_budget_with_failures")
    assert before.dollar_cost_with_failures == pytest.approx(60_069.70, abs=0.01)


@pytest.mark.parametrize(("x", "shown"), [
    (7.6955e9, 7.69e9), (1.5391e11, 1.53e11), (7.7e9, 7.7e9), (1e9, 1e9), (9.999e8, 9.99e8),
    (1.0049e12, 1e12), (123.456, 123.0), (0.0123456, 0.0123)])
def test_floor_shown_rounds_down_to_the_digits_a_count_is_read_with(x: float,
                                                                     shown: float) -> None:
    assert floor_shown(x) == shown
    assert float(f"{floor_shown(x):.3g}") == floor_shown(x)  # fmt_count's three digits
