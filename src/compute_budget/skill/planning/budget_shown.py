"""The splits a dollar budget recommends, as the replies show them.

The replies write a count with three significant digits (``fmt_count``): the ratio split of
$60k on 8 × H100, N = sqrt(C / 6r) = 7.6955B on 153.91B tokens, read '7.7B' on '154B', and
those numbers, passed to the verdict on the same devices at the same price, cost $60,070 with
the failure budget: $69.70 over the budget they were sized for. Here N is rounded down to the
digits shown, D = ratio·N rounded down too, and the row is priced at 6·N·D, so what a user
reads (and what the structured content carries) is the run they would get. A smaller model
runs at a lower MFU under the prior (N^0.07) and may take another layout, so the row is priced
again; while it is still over the budget (at the central MFU for the ratio split, at the slow
end of the band for the safe split), N steps down one unit in its last digit.
"""

from __future__ import annotations

from decimal import ROUND_FLOOR, Decimal

from ..scaling.lesson import split_budget
from ..vocabulary import flops_6nd
from .budget_pricing import BudgetTableRow, Machine, price_row

__all__ = ["SHOWN_DIGITS", "floor_shown", "shown_split"]

SHOWN_DIGITS = 3
"""Significant digits of a count as the replies write it (``fmt_count``: 7.6955e9 → '7.7B',
that is 7.70e9)."""
STEPS = 100
"""Most steps down of one unit in N's last digit (each 0.1 % – 1 % of N) before the row is
returned as it is, its ``budget_status`` saying it is over."""
_HEADROOM = 1e-9
"""Relative margin under the budget a shown split keeps, so that the run estimate's own
arithmetic (the same formula, rounded alike) cannot put it over by a rounding of one FLOP."""


def floor_shown(x: float) -> float:
    """A positive ``x`` rounded down to :data:`SHOWN_DIGITS` significant digits: 7.6955e9 →
    7.69e9, 1.5391e11 → 1.53e11; 7.7e9 stays (decimal arithmetic, so no 7.6999…e9)."""
    d = Decimal(repr(x))
    exponent = d.adjusted() - (SHOWN_DIGITS - 1)
    return float(d.scaleb(-exponent).to_integral_value(ROUND_FLOOR).scaleb(exponent))


def _within(row: BudgetTableRow, budget_usd: float, slow: bool) -> bool:
    spread = row.dollar_cost_with_failures_range
    cost = spread[1] if slow and spread is not None else row.dollar_cost_with_failures
    return cost is None or cost <= budget_usd * (1 - _HEADROOM)


def shown_split(flops: float, ratio: float, machine: Machine, budget_usd: float, *,
                slow: bool) -> BudgetTableRow:
    """The ratio split of ``flops`` on ``machine``, N and D = ratio·N rounded down to the digits
    shown, priced at 6·N·D and stepped down until its cost with failures is within
    ``budget_usd``: at the central MFU, or at the slow end of the band with ``slow``."""
    n = floor_shown(split_budget(flops, ratio)[0])
    for step in range(STEPS + 1):
        d = floor_shown(ratio * n)
        row = price_row(flops_6nd(n, d), n, machine, budget_usd, tokens=d)
        if step == STEPS or _within(row, budget_usd, slow):
            break
        n = floor_shown(n * (1 - 1e-9))  # one unit less in the last digit shown
    return row
