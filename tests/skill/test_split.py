"""The budget-split table of the lesson."""

import pytest
from pydantic import ValidationError

from compute_budget import SplitSpec, budget_split, get_accelerator
from compute_budget.skill.errors import describe_error


def test_lesson_table() -> None:
    # Lesson: C = 6.03e14 at 1e12 FLOP/s gives rows N = 1e5 … 1e8, 603 s each.
    split = budget_split(SplitSpec(budget_flops=6.0256e14, flops_per_sec=1e12))
    assert [r.params for r in split.rows] == [1e5, 1e6, 1e7, 1e8]
    first = split.rows[0]
    assert first.tokens == pytest.approx(1.0043e9, rel=1e-4)
    assert first.tokens_per_param == pytest.approx(10042.66, rel=1e-4)
    for row in split.rows:
        assert row.seconds == pytest.approx(602.56, rel=1e-4)
        assert 6 * row.params * row.tokens == pytest.approx(6.0256e14)


def test_ratio_split() -> None:
    split = budget_split(SplitSpec(budget_flops=1e21, ratio=20))
    row = split.ratio_split
    assert row.tokens_per_param == pytest.approx(20)
    assert 6 * row.params * row.tokens == pytest.approx(1e21)


def test_given_sizes_and_utilization() -> None:
    split = budget_split(SplitSpec(budget_flops="6e14", params=["1M", "2M"], utilization=0.5,
                                   flops_per_sec=1e12))
    assert [r.params for r in split.rows] == [1e6, 2e6]
    assert split.rows[1].tokens == pytest.approx(5e7)
    assert split.rows[0].seconds == pytest.approx(1200)


def test_no_rate_means_no_time() -> None:
    split = budget_split(SplitSpec(budget_flops=1e24))
    assert split.sustained_flops_per_sec is None
    assert all(r.seconds is None and r.hours is None for r in split.rows)


def test_dollar_budget_on_a_gpu() -> None:
    # $10,000 at $2.49/h on one H100 at MFU 0.4, after the ×1.5 failure budget:
    # 10,000 / 1.5 / 2.49 = 2,677 h × 989.5e12 × 0.4 × 3600 FLOPs.
    split = budget_split(SplitSpec(budget_usd=10_000, gpu="h100", mfu=0.4))
    hours = 10_000 / 1.5 / 2.49
    peak = get_accelerator("h100").peak("bf16")
    assert split.budget_flops == pytest.approx(hours * 3600 * peak * 1e12 * 0.4)
    assert split.rows[0].hours == pytest.approx(hours)


@pytest.mark.parametrize(
    ("fields", "name"),
    [
        ({}, "budget_flops"),
        ({"budget_flops": 1e20, "budget_usd": 5}, "budget_flops"),
        ({"budget_flops": -1}, "budget_flops"),
        ({"budget_usd": 100}, "gpu"),
        ({"budget_usd": 100, "gpu": "tpu-v4"}, "usd_per_gpu_hour"),
        ({"budget_flops": 1e20, "utilization": 1.5}, "utilization"),
        ({"budget_flops": 1e20, "ratio": 0}, "ratio"),
        ({"budget_flops": 1e20, "mfu": 0.4}, "mfu"),
        ({"budget_flops": 1e20, "gpu": "h100", "flops_per_sec": 1e15}, "flops_per_sec"),
    ],
)
def test_bad_split_input(fields: dict[str, object], name: str) -> None:
    with pytest.raises(ValidationError) as info:
        SplitSpec(**fields)  # type: ignore[arg-type]
    assert describe_error(info.value).startswith(f"{name}: ")


def test_dollar_split_matches_the_cost_of_the_run_it_suggests() -> None:
    # The split's ratio row, estimated on the same hardware, costs the budget with failures.
    from compute_budget import RunSpec, estimate_run

    split = budget_split(SplitSpec(budget_usd="1M", gpu="h100", gpu_count=256))
    row = split.ratio_split
    est = estimate_run(RunSpec(params=row.params, tokens=row.tokens, gpu="h100", gpu_count=256))
    assert est.dollar_cost_with_failures == pytest.approx(1e6, rel=1e-6)
