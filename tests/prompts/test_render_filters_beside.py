"""Two numbers shown side by side (an interval's ends, a level and what the fit expects) are
written with the digits that tell them apart: an interval 0.0007 wide read '2.39 – 2.39'."""

from compute_budget.prompts.render import fmt_beside, fmt_plain


def test_numbers_beside_each_other_are_written_apart() -> None:
    # the reviewer's interval at the checkpoint (fit --json: kill_loss.interval at 7a38f87)
    low, high = 2.3896858576219895, 2.3903778421801842
    assert fmt_plain(low) == fmt_plain(high) == "2.39"
    assert (fmt_beside(low, high), fmt_beside(high, low)) == ("2.3897", "2.3904")
    # apart at 4 significant digits already: written as fmt_plain writes them
    assert (fmt_beside(2.1849, 2.1859), fmt_beside(2.1859, 2.1849)) == ("2.185", "2.186")
    assert fmt_beside(-0.12345, -0.12346) == "−0.12345"
    # the same number, or no other: as fmt_plain (never more digits than it takes)
    assert fmt_beside(2.5, 2.5) == "2.5" and fmt_beside(2.5, None) == "2.5"
    assert fmt_beside(None, 1.0) == "unknown"
