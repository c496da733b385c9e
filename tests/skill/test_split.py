"""The budget-split table of the lesson, priced like a run estimate."""

import math

import pytest
from pydantic import ValidationError

from compute_budget import (
    BudgetTableSpec,
    MemorySpec,
    RunSpec,
    budget_table,
    estimate_memory,
    estimate_run,
    get_accelerator,
)
from compute_budget.skill.errors import describe_error
from compute_budget.skill.hardware.mfu import mfu_prior
from compute_budget.skill.hardware.mfu_table import load_mfu_priors
from compute_budget.skill.planning.budget_table import DEFAULT_GPU_COUNT

H100 = get_accelerator("h100")
H100_PRIOR = mfu_prior("dense", H100, "bf16")  # 0.15 / 0.22 / 0.33 in the 2026-11-30 set


def test_lesson_table() -> None:
    # Lesson: C = 6.03e14 at 1e12 FLOP/s gives rows N = 1e5 … 1e8, 603 s each.
    split = budget_table(BudgetTableSpec(budget_flops=6.0256e14, flops_per_sec=1e12))
    assert [r.params for r in split.rows] == [1e5, 1e6, 1e7, 1e8]
    first = split.rows[0]
    assert first.tokens == pytest.approx(1.0043e9, rel=1e-4)
    assert first.tokens_per_param == pytest.approx(10042.66, rel=1e-4)
    for row in split.rows:
        assert row.seconds == pytest.approx(602.56, rel=1e-4)
        assert 6 * row.params * row.tokens == pytest.approx(6.0256e14)
        # A bare FLOP/s has no devices, price or MFU band: no dollars, no ranges.
        assert row.dollar_cost_with_failures is None and row.wall_days_range is None


def test_ratio_split() -> None:
    split = budget_table(BudgetTableSpec(budget_flops=1e21, ratio=20))
    row = split.ratio_split
    assert row.tokens_per_param == pytest.approx(20)
    assert 6 * row.params * row.tokens == pytest.approx(1e21)
    assert split.safe_split is None


def test_given_sizes_and_mfu_with_a_machine_rate() -> None:
    # mfu is the utilisation of flops_per_sec: 6e14 / (1e12 × 0.5) = 1200 s.
    split = budget_table(BudgetTableSpec(budget_flops="6e14", params=["1M", "2M"], mfu=0.5,
                                   flops_per_sec=1e12))
    assert [r.params for r in split.rows] == [1e6, 2e6]
    assert split.rows[1].tokens == pytest.approx(5e7)
    assert split.rows[0].seconds == pytest.approx(1200)
    assert split.utilization == split.mfu == 0.5


def test_utilization_is_the_old_name_of_mfu_on_both_doors() -> None:
    """One rule (issue 15): the spec takes the old name, so the CLI's --utilization and the
    tool's utilization argument mean mfu alike; both together are refused."""
    old = BudgetTableSpec(budget_flops="6e14", utilization=0.5, flops_per_sec=1e12)
    new = BudgetTableSpec(budget_flops="6e14", mfu=0.5, flops_per_sec=1e12)
    assert old.mfu == 0.5 and budget_table(old) == budget_table(new)


def test_no_rate_means_no_time() -> None:
    split = budget_table(BudgetTableSpec(budget_flops=1e24))
    assert split.sustained_flops_per_sec is None
    assert all(r.seconds is None and r.wall_days is None for r in split.rows)


def test_rows_wall_days_and_dollars_by_hand() -> None:
    # C = 1e22 FLOPs on 64 × H100 (989.5 TFLOP/s dense BF16) at MFU 0.4, your $2.49/GPU-h, ×1.5:
    #   throughput = 64 × 989.5e12 × 0.4        = 2.53312e16 FLOP/s
    #   wall       = 1e22 / 2.53312e16          = 394,770 s = 109.66 h = 4.5691 days
    #   dollars    = 109.66 h × 64 × $2.49      = $17,476;  × 1.5 = $26,213
    # A given MFU caps the fast end; the slow end is the prior's low (0.15) since 0.15 < 0.4:
    #   slow days  = 4.5691 × 0.4 / 0.15        = 12.184;   slow dollars = $26,213 × 0.4/0.15
    split = budget_table(BudgetTableSpec(budget_flops=1e22, gpu="h100", gpu_count=64, mfu=0.4,
                                         usd_per_gpu_hour=2.49))
    assert split.mfu_used.range == (H100_PRIOR.low, 0.4)
    for row in [*split.rows, split.ratio_split]:
        assert row.wall_days == pytest.approx(4.5691, rel=1e-4)
        assert row.dollar_cost_with_failures == pytest.approx(26_213, rel=1e-4)
        slow = 0.4 / H100_PRIOR.low
        assert row.wall_days_range == pytest.approx((4.5691, 4.5691 * slow), rel=1e-4)
        assert row.dollar_cost_with_failures_range == pytest.approx(
            (26_213, 26_213 * slow), rel=1e-4)
        assert row.dollar_cost == pytest.approx(row.gpu_hours * 2.49)


def test_a_gpu_without_a_count_is_eight_devices() -> None:
    split = budget_table(BudgetTableSpec(budget_flops=1e22, gpu="h100", mfu=0.4))
    assert DEFAULT_GPU_COUNT == 8
    assert (split.gpu_count, split.gpu_count_source) == (8, "default")
    # The same compute as on 64 devices above, 8× as long: 4.5691 × 8 days.
    assert split.ratio_split.wall_days == pytest.approx(4.5691 * 8, rel=1e-4)
    given = budget_table(BudgetTableSpec(budget_flops=1e22, gpu="h100", gpu_count=8, mfu=0.4))
    assert given.gpu_count_source == "user"
    assert given.ratio_split.wall_days == split.ratio_split.wall_days


def test_dollar_budget_on_a_gpu() -> None:
    # $10,000 at $2.49/h on H100 at MFU 0.4, after the ×1.5 failure budget:
    # 10,000 / 1.5 / 2.49 = 2,677 GPU-h × 989.5e12 × 0.4 × 3600 FLOPs, 2,677 / 8 h of wall time.
    split = budget_table(BudgetTableSpec(budget_usd=10_000, gpu="h100", mfu=0.4,
                                         usd_per_gpu_hour=2.49))
    gpu_hours = 10_000 / 1.5 / 2.49
    assert split.budget_flops == pytest.approx(gpu_hours * 3600 * 989.5e12 * 0.4)
    assert split.rows[0].hours == pytest.approx(gpu_hours / 8)
    assert split.rows[0].dollar_cost_with_failures == pytest.approx(10_000)


def test_safe_split_fits_the_budget_at_the_slow_end_and_the_median_split_does_not() -> None:
    # $50,000 on H100 at the prior, which follows the model's size: the median split buys
    # C = 50,000 / 1.5 / $3.99 (the catalog's H100, RunPod) × 3600 × 989.5e12 × MFU(N) FLOPs
    # with N = sqrt(C / 120), N and
    # the MFU settled together; the safe split the same at the slow end of N's band. Each is
    # shown rounded down to three digits (N, then D = 20·N), so it spends at most that.
    budget = 50_000
    split = budget_table(BudgetTableSpec(budget_usd=budget, gpu="h100"))
    median, safe = split.ratio_split, split.safe_split
    assert safe is not None
    h100 = get_accelerator("h100")
    prior = mfu_prior("dense", h100, "bf16", params=median.params)
    low, central = prior.low, prior.central
    c = budget / 1.5 / 3.99 * 3600 * 989.5e12 * central
    # (C at the MFU of N = 6.9896B; the prior here is the one at the 6.98B shown)
    assert split.budget_flops == pytest.approx(c, rel=2e-3)
    n_opt = math.sqrt(split.budget_flops / 120)  # read '6.99B' on '140B' before the rounding
    assert (n_opt, median.params, median.tokens) == (pytest.approx(6.9896e9, rel=1e-4),
                                                     6.98e9, 139e9)  # 20 × 6.98B = 139.6B
    assert median.flops == 6 * 6.98e9 * 139e9 < split.budget_flops
    safe_prior = mfu_prior("dense", h100, "bf16", params=safe.params)
    safe_c = budget / 1.5 / 3.99 * 3600 * 989.5e12 * safe_prior.low
    assert safe.flops <= safe_c and safe.flops == pytest.approx(safe_c, rel=0.02)
    assert safe.params < median.params * math.sqrt(low / central) * 1.01
    assert safe.tokens_per_param == pytest.approx(split.ratio, rel=0.01)
    assert 0.99 * budget < median.dollar_cost_with_failures <= budget
    assert median.dollar_cost_with_failures_range[1] == pytest.approx(
        median.dollar_cost_with_failures * central / low)
    assert median.dollar_cost_with_failures_range[1] > budget * 1.4
    assert 0.98 * budget < safe.dollar_cost_with_failures_range[1] <= budget
    assert safe.dollar_cost_with_failures < budget


def test_safe_split_is_the_median_split_when_your_mfu_is_the_slow_end() -> None:
    # A given MFU below the prior's low is the whole band: (0.1, 0.1).
    split = budget_table(BudgetTableSpec(budget_usd="$50k", gpu="h100", mfu=0.1))
    assert split.mfu_used.range == (0.1, 0.1)
    assert split.safe_split is not None
    assert split.safe_split.params == pytest.approx(split.ratio_split.params)


def test_flop_budget_on_a_priced_gpu_has_dollars() -> None:
    split = budget_table(BudgetTableSpec(budget_flops="1e22", gpu="h100"))
    row = split.ratio_split
    assert split.usd_per_gpu_hour == 3.99 and split.price.origin == "catalog"  # RunPod, 2026-11
    assert split.price.as_of and split.price.kind
    assert row.dollar_cost_with_failures == pytest.approx(row.gpu_hours * 3.99 * 1.5)
    assert row.dollar_cost_with_failures_range is not None
    unpriced = budget_table(BudgetTableSpec(budget_flops="1e22", gpu="tpu-v3"))
    assert unpriced.usd_per_gpu_hour is None
    assert unpriced.ratio_split.dollar_cost_with_failures is None
    assert unpriced.ratio_split.wall_days is not None


def test_your_price_replaces_the_catalog() -> None:
    split = budget_table(BudgetTableSpec(budget_flops=1e22, gpu="h100", usd_per_gpu_hour="$7.98"))
    catalog = budget_table(BudgetTableSpec(budget_flops=1e22, gpu="h100"))
    assert split.price.origin == "user" and split.price.kind is None
    # $7.98 is twice the catalog's $3.99 (RunPod H100 SXM)
    assert split.ratio_split.dollar_cost_with_failures == pytest.approx(
        2 * catalog.ratio_split.dollar_cost_with_failures)


@pytest.mark.parametrize("value", [400_000, 4e5, "4e5", "$400k", "400,000", "$400,000", "400K"])
def test_budget_usd_money_forms(value: object) -> None:
    assert BudgetTableSpec(budget_usd=value, gpu="h100").budget_usd == 400_000  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [2.5, "2.5", "$2.50", "2.5e0", "$2.50 "])
def test_price_money_forms(value: object) -> None:
    spec = BudgetTableSpec(budget_usd=1e4, gpu="h100", usd_per_gpu_hour=value)  # type: ignore[arg-type]
    assert spec.usd_per_gpu_hour == 2.5


@pytest.mark.parametrize("field", ["budget_usd", "usd_per_gpu_hour"])
@pytest.mark.parametrize("value", ["lots", "€400k", "400 dollars", "$", "nan", "-5"])
def test_a_string_that_is_not_money_names_the_field(field: str, value: str) -> None:
    fields = {"budget_usd": 1e4, "gpu": "h100", field: value}
    with pytest.raises(ValidationError) as info:
        BudgetTableSpec(**fields)  # type: ignore[arg-type]
    assert describe_error(info.value).startswith(f"{field}: {value!r} is not allowed")


@pytest.mark.parametrize(
    ("fields", "name"),
    [
        ({}, "budget_flops"),
        ({"budget_flops": 1e20, "budget_usd": 5}, "budget_flops"),
        ({"budget_flops": -1}, "budget_flops"),
        ({"budget_usd": 100}, "gpu"),
        ({"budget_usd": 100, "gpu": "tpu-v3"}, "usd_per_gpu_hour"),
        ({"budget_flops": 1e20, "ratio": 0}, "ratio"),
        ({"budget_flops": 1e20, "mfu": 0.4}, "mfu"),
        ({"budget_flops": 1e20, "gpu": "h100", "mfu": 1.5}, "mfu"),
        ({"budget_flops": 1e20, "gpu": "h100", "mfu": 0}, "mfu"),
        ({"budget_flops": 1e20, "flops_per_sec": 1e12, "mfu": 2}, "mfu"),
        ({"budget_flops": 1e20, "utilization": 0.5, "mfu": 0.5, "flops_per_sec": 1e12},
         "utilization"),
        ({"budget_flops": 1e20, "gpu_count": 8}, "gpu_count"),
        ({"budget_flops": 1e20, "gpu": "h100", "gpu_count": 0}, "gpu_count"),
        ({"budget_flops": 1e20, "usd_per_gpu_hour": 2}, "usd_per_gpu_hour"),
        ({"budget_flops": 1e20, "gpu": "h100", "flops_per_sec": 1e15}, "flops_per_sec"),
    ],
)
def test_bad_split_input(fields: dict[str, object], name: str) -> None:
    with pytest.raises(ValidationError) as info:
        BudgetTableSpec(**fields)  # type: ignore[arg-type]
    assert describe_error(info.value).startswith(f"{name}: ")


def test_dollar_split_matches_the_cost_of_the_run_it_suggests() -> None:
    # The split's ratio row, estimated on the same hardware, costs the budget with failures;
    # the safe row costs the budget at the slow end of the estimate's range.
    # Both rounded down to the digits shown (34.6B on 692B; the safe one 23.7B on 474B), so
    # they cost a little less than the budget: the row's own cost, which the estimate repeats.
    split = budget_table(BudgetTableSpec(budget_usd="1M", gpu="h100", gpu_count=256))
    row, safe = split.ratio_split, split.safe_split
    assert safe is not None
    est = estimate_run(RunSpec(params=row.params, tokens=row.tokens, gpu="h100", gpu_count=256))
    assert est.dollar_cost_with_failures == pytest.approx(row.dollar_cost_with_failures,
                                                          rel=1e-12)
    assert 0.99e6 < est.dollar_cost_with_failures <= 1e6
    assert est.wall_days == pytest.approx(row.wall_days, rel=1e-6)
    est = estimate_run(RunSpec(params=safe.params, tokens=safe.tokens, gpu="h100", gpu_count=256))
    assert est.dollar_cost_with_failures_range is not None
    assert 0.99e6 < est.dollar_cost_with_failures_range[1] <= 1e6


def test_rows_say_whether_the_model_fits_the_devices() -> None:
    # A 1T-parameter row on 8 H100: its 16-bit weights alone are 2 TB against 640 GB.
    split = budget_table(BudgetTableSpec(budget_usd="$400k", gpu="h100", params=["1B", "1T"]))
    small, big = split.rows
    assert small.fits is True
    assert big.fits is False and big.min_gpu_count is not None and big.min_gpu_count > 8
    assert budget_table(BudgetTableSpec(budget_flops="1e22", params=["1B"])).rows[0].fits is None


def test_a_row_that_fits_only_at_a_cost_says_what_it_costs() -> None:
    # 100B on 8 × A100 80GB: the model states (16 bytes per parameter, 1.6 TB) exceed the
    # 640 GB of the node, so it fits only with the optimizer offloaded to CPU memory and full
    # recomputation (×4/3 FLOPs) under ZeRO-3 — the same layout estimate_memory names.
    split = budget_table(BudgetTableSpec(budget_usd="$20k", gpu="a100", params=["1B", "100B"]))
    small, big = split.rows
    assert (small.fits, small.fit_needs_offload, small.fit_slowdown) == (True, False, 1.0)
    memory = estimate_memory(MemorySpec(params=100e9, gpu="a100", gpu_count=8))
    assert big.fits is True and big.fit_needs_offload is True and memory.offload is True
    # One layout cost everywhere (issue 16): the row's is the run estimate's for that run, and
    # it is in the row's days and dollars.
    run = estimate_run(RunSpec(params=100e9, tokens=big.tokens, gpu="a100", gpu_count=8))
    assert run.layout_cost is not None
    assert big.fit_slowdown == pytest.approx(run.layout_cost.total)
    assert big.fit_slowdown is not None and big.fit_slowdown > 4 / 3
    assert big.dollar_cost_with_failures == pytest.approx(run.dollar_cost_with_failures)
    # A row that does not fit carries no layout cost.
    none_fit = budget_table(BudgetTableSpec(budget_usd="$400k", gpu="h100", params=["1T"])).rows[0]
    assert none_fit.fits is False and none_fit.fit_slowdown is None
    assert none_fit.fit_needs_offload is None


# --- issue 16: one row per distinct outcome, nominal and failure dollars, the budget marked ---


def test_rows_the_mfu_clamp_prices_alike_form_one_group() -> None:
    # The H100 prior's size term stops at 134.5M active parameters (the low end of the
    # calibrated sizes, mfu_priors.json params_range: SmolLM2 135M): 100M and 120M both run at
    # the MFU of 134.5M, so the two rows spend the same FLOPs at the same MFU — the same days and
    # dollars — and are shown as one row.
    floor_params = load_mfu_priors().params_range[0]
    assert floor_params == 134_515_008
    split = budget_table(BudgetTableSpec(budget_usd=50_000, gpu="h100",
                                         params=["100M", "120M", "10B", "100B"]))
    small, floor, ten_b, _ = split.rows
    assert small.mfu_prior_params == floor.mfu_prior_params == floor_params
    assert small.mfu == floor.mfu == mfu_prior("dense", H100, "bf16", params=floor_params).central
    assert small.wall_days == floor.wall_days
    assert small.dollar_cost_with_failures == floor.dollar_cost_with_failures
    assert ten_b.wall_days != floor.wall_days and ten_b.mfu_prior_params == 1e10
    groups = [(g.first, g.last, g.mfu_prior_params) for g in split.row_groups]
    assert groups == [(0, 1, floor_params), (2, 2, None), (3, 3, None)]
    assert [(g.first, g.last) for g in split.mfu_clamps] == [(0, 1)]


def test_rows_alike_in_price_but_not_in_fit_keep_their_rows() -> None:
    # Above 405B parameters (the largest calibrated run) the size term stops too: 1T and 10T
    # run at the same prior, but 10T needs full recomputation to fit (×4/3 in its days), so
    # each keeps its row.
    split = budget_table(BudgetTableSpec(budget_usd="$50M", gpu="h100", gpu_count=4096,
                                         params=["100B", "1T", "10T"]))
    _, big, huge = split.rows
    assert big.mfu_prior_params == huge.mfu_prior_params == pytest.approx(405e9)
    assert big.fit_slowdown == 1.0 and huge.fit_slowdown == pytest.approx(4 / 3)
    assert huge.wall_days == pytest.approx(big.wall_days * 4 / 3)
    assert [(g.first, g.last) for g in split.row_groups] == [(0, 0), (1, 1), (2, 2)]
    assert [(g.first, g.last, g.mfu_prior_params) for g in split.mfu_clamps] == [
        (1, 2, pytest.approx(405e9))]


@pytest.mark.parametrize("spec", [
    BudgetTableSpec(budget_flops=1e22, gpu="h100", mfu=0.4),  # one MFU for every size, given
    BudgetTableSpec(budget_flops=6e14, flops_per_sec=1e12),   # the lesson: no prior
    BudgetTableSpec(budget_usd=50_000, gpu="h100", params=["2B", "2B"]),  # not clamped
])
def test_rows_alike_for_another_reason_are_not_merged(spec: BudgetTableSpec) -> None:
    split = budget_table(spec)
    assert all(g.first == g.last and g.mfu_prior_params is None for g in split.row_groups)
    assert split.mfu_clamps == []
    assert len(split.row_groups) == len(split.rows)


def test_each_row_has_nominal_and_failure_dollars_and_its_budget_status() -> None:
    # Every row spends the FLOPs $50,000 buys at the split's median MFU; a smaller model runs at
    # a lower MFU (the prior rises ×1.35 per tenfold), so it costs more.
    split = budget_table(BudgetTableSpec(budget_usd=50_000, gpu="h100"))
    for row in [*split.rows, split.ratio_split]:
        assert row.dollar_cost is not None and row.dollar_cost_with_failures is not None
        assert row.dollar_cost_with_failures == pytest.approx(row.dollar_cost * 1.5)
        assert row.mfu_range is not None and row.mfu_range[0] < row.mfu < row.mfu_range[1]
    status = {row.params: row.budget_status for row in split.rows}
    # 100B on 8 × H100 fits only with CPU offload and full recomputation: ×1.35 in its
    # dollars, which the prior's rise with size (×1.35 per tenfold on the 114-row calibration
    # set) about repays: $47,586, within the budget at the median MFU, as 10B ($47,794) is.
    assert status == {1e8: "over", 1e9: "over", 1e10: "over_at_slow_end",
                      1e11: "over_at_slow_end"}
    assert split.rows[1].dollar_cost_with_failures > 50_000  # $64,570
    assert split.ratio_split.budget_status == "over_at_slow_end"  # $50,000, $101,563 slow
    assert split.safe_split is not None and split.safe_split.budget_status == "within"
    flops = budget_table(BudgetTableSpec(budget_flops=1e22, gpu="h100"))
    assert {row.budget_status for row in [*flops.rows, flops.ratio_split]} == {None}


def test_a_row_within_the_budget_across_the_band_says_so() -> None:
    # With your MFU at or below the prior's low the band is that one MFU: the ratio split
    # costs the budget exactly, and every row (the same MFU) the same.
    split = budget_table(BudgetTableSpec(budget_usd=50_000, gpu="h100", mfu=0.1))
    assert {row.budget_status for row in [*split.rows, split.ratio_split]} == {"within"}


def test_the_header_mfu_is_the_prior_at_the_suggested_size() -> None:
    # $1M on 256 × H100 buys a 44.4B split: its prior is 0.26 with the band 0.17 – 0.39, not
    # the 10B reference level's 0.23 (0.15 – 0.35), divided by its layout's cost — as
    # estimate_run uses for that run, whose cost is then the budget.
    split = budget_table(BudgetTableSpec(budget_usd="1M", gpu="h100", gpu_count=256))
    at_opt = mfu_prior("dense", H100, "bf16", params=split.ratio_split.params)
    run = estimate_run(RunSpec(params=split.ratio_split.params, tokens=split.ratio_split.tokens,
                               gpu="h100", gpu_count=256))
    assert split.mfu == pytest.approx(run.mfu) and split.mfu_used.origin == "prior"
    assert run.layout_cost is not None
    assert split.mfu == pytest.approx(at_opt.central / run.layout_cost.total)
    assert split.mfu_used.range == split.ratio_split.mfu_range
    assert split.mfu_used.range == pytest.approx(run.mfu_used.range)
    # the split rounded down to the digits shown (34.6B on 692B): a little under the budget
    assert 0.99e6 < run.dollar_cost_with_failures <= 1e6
    assert split.mfu_used.prior == at_opt
    assert split.mfu_as_of == "2026-12-06"  # mfu_priors.json as_of
    assert split.peak_label == "NVIDIA H100 page, 2022"  # the datasheet and its date
    assert split.ratio_source == "default"
    assert budget_table(BudgetTableSpec(budget_flops=1e21, ratio=20)).ratio_source == "user"


def test_a_budget_is_spent_where_the_layout_changes_between_sizes() -> None:
    # $300k on 4 TPU v5p: the sizes the budget buys straddle a layout change (x1.05 below
    # about 12.7B, x1.34 above), so the rounds had no fixed point and the best size spent
    # $239,686 (80%), priced at the other layout; now the most FLOPs within the budget at
    # their own layout (the largest size below the change)
    from compute_budget import BudgetTableSpec, budget_table

    table = budget_table(BudgetTableSpec(budget_usd=300_000, gpu="tpu-v5p", gpu_count=4))
    best = table.ratio_split
    assert best.dollar_cost_with_failures is not None
    assert 0.9 * 300_000 < best.dollar_cost_with_failures <= 300_000 * (1 + 1e-6)
