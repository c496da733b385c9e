"""A wall time over a plan's length reads in days under two years, else in years."""

from compute_budget.prompts.render import fmt_long


def test_a_long_wall_time_reads_in_days_under_two_years() -> None:
    # 366 days read "1.0 years", beside "longer than any plan survives" (365 days)
    assert fmt_long(366) == "366 days"
    assert fmt_long(729) == "729 days"
    assert fmt_long(4354) == "11.9 years"
    assert fmt_long(None) == "unknown"
    assert fmt_long(649, like=960) == "1.78 years"  # a range's end in its centre's unit
