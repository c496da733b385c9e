"""`compute-budget split`: the JSON contract, the reply, money forms and bad input (exit 2)."""
# ruff: noqa: E501  (the snapshot holds the rendered markdown verbatim)

import json

import pytest
from inline_snapshot import snapshot

from compute_budget.skill.hardware.catalog import get_accelerator
from compute_budget.skill.hardware.mfu import mfu_prior
from compute_budget.skill.hardware.mfu_table import load_mfu_priors
from tests.conftest import Cli


def split_json(cli: Cli, *argv: str) -> dict[str, object]:
    code, out, err = cli("split", *argv, "--json")
    assert code == 0, err
    data: dict[str, object] = json.loads(out)
    return data


def test_json_rows_have_days_dollars_and_ranges(cli: Cli) -> None:
    data = split_json(cli, "--budget-usd", "50000", "--gpu", "h100")
    for key in ("rows", "ratio_split", "safe_split", "budget_flops", "gpu_count", "mfu",
                "mfu_used", "usd_per_gpu_hour", "failure_budget"):
        assert key in data
    assert data["gpu_count"] == 8 and data["gpu_count_source"] == "default"
    rows = data["rows"]
    assert isinstance(rows, list) and len(rows) == 4
    for row in [*rows, data["ratio_split"], data["safe_split"]]:
        for key in ("params", "tokens", "tokens_per_param", "seconds", "hours", "wall_days",
                    "wall_days_range", "dollar_cost_with_failures",
                    "dollar_cost_with_failures_range"):
            assert key in row
        low, high = row["wall_days_range"]
        assert low <= row["wall_days"] <= high
        assert row["wall_days"] == pytest.approx(row["hours"] / 24)
    # The split the budget buys: 50,000 / 1.5 / 3.99 = 8,354 GPU-h, on 8 devices 1,044 h =
    # 43.5 days, for N = 6.9896B; shown rounded down to 6.98B on 139B tokens, it spends that
    # share of them. The other rows spend the same FLOPs at their own size's MFU: a smaller
    # model runs at a lower MFU, so it takes longer and costs more.
    best = data["ratio_split"]
    assert (best["params"], best["tokens"]) == (6.98e9, 139e9)
    share = best["flops"] / data["budget_flops"]
    assert 0.99 < share < 1
    assert best["wall_days"] == pytest.approx(50_000 / 1.5 / 3.99 / 8 / 24 * share, rel=1e-3)
    assert best["dollar_cost_with_failures"] == pytest.approx(50_000 * share, rel=1e-3)
    assert best["dollar_cost_with_failures"] <= 50_000
    costs = [r["dollar_cost_with_failures"] for r in rows]
    assert costs[:3] == sorted(costs[:3], reverse=True) and costs[0] > 50_000
    # 100B fits 8 × H100 only with CPU offload and full recomputation: its layout's cost is in
    # its days and dollars (its MFU is the prior at 100B divided by the layout's slowdown).
    prior = mfu_prior("dense", get_accelerator("h100"), "bf16", params=1e11)
    assert rows[3]["fit_slowdown"] > 1.3
    assert rows[3]["mfu"] == pytest.approx(prior.central / rows[3]["fit_slowdown"])


COMMON = {
    "dollars on a gpu": ("--budget-usd", "50000", "--gpu", "h100"),
    "flops on a gpu": ("--budget", "1e22", "--gpu", "h100"),
    "flops alone": ("--budget", "1e22"),
}
"""The common questions (issue 16): a dollar budget with a GPU, a FLOP budget with a GPU, a FLOP
budget alone. tests/tools/test_split_mcp.py holds their replies to 1,500 characters on both
doors."""


def test_short_reply_for_a_dollar_budget(cli: Cli) -> None:
    code, out, _ = cli("split", *COMMON["dollars on a gpu"])
    assert code == 0
    # Numbers as in test_json_rows_have_days_dollars_and_ranges: $50,000 / 1.5 / $3.99 =
    # 8,354 GPU-h = 43.5 days on 8 devices for the ratio split (43.2 for the 99.3% of its
    # FLOPs that 6.98B on 139B, rounded down, spends); 100M takes the MFU the prior has
    # at 0.4B (the low end of its calibrated sizes, Granite 3.0 1B-A400M's active parameters),
    # so 100M and 1B have rows of their own.
    assert out == snapshot("""\
### Budget split: $50,000 on 8 × H100 SXM

**Best size at the median MFU (0.20): 6.98B parameters on 139B tokens** (20 tokens per parameter, Hoffmann et al. 2022).

**Within $50,000 even at the slow end (MFU 0.09): 4.8B parameters on 96B tokens**: 21.6 days and $24,841 with the failure budget at the median MFU.

Each row spends 5.86 × 10²¹ FLOPs at the MFU prior for its size. The bold row, rounded down to fit, spends 5.82 × 10²¹.

| parameters | tokens | tokens per parameter | days (median – slow end) | nominal cost | with ×1.50 failure budget (median – slow end) | over $50,000? | fits |
|---|---|---|---|---|---|---|---|
| 100M | 9.77T | 97,710 | 72.6 – 148 | $55,650 | $83,475 – $169,828 | yes | yes |
| 1B | 977B | 977.1 | 56.0 – 113 | $42,919 | $64,379 – $129,605 | yes | yes |
| 10B | 97.7B | 9.771 | 41.6 – 84.0 | $31,877 | $47,816 – $96,569 | at slow end | yes |
| 100B | 9.77B | 0.09771 | 41.5 – 84.0 | $31,820 | $47,730 – $96,562 | at slow end | yes, with CPU offload, its layout ×1.35 in the days and cost |
| **6.98B** | **139B** | **19.91** | 43.2 – 87.7 | $33,099 | $49,648 – $100,831 | at slow end | yes |

**Assumptions** (full detail: every source)
- Devices: 8, the default (one server); the count sets the days, not the dollars.
- MFU: 0.20 (0.10 – 0.30) at 6.98B parameters (each size has its own), a prior from 26 published runs on Hopper, calibrated 2026-12-06; give a measured one.
- Price: $3.99/GPU-h on-demand, 2026-11 (runpod.io/pricing); give yours.
""")


def test_short_reply_for_a_flop_budget_on_a_gpu(cli: Cli) -> None:
    code, out, _ = cli("split", *COMMON["flops on a gpu"])
    assert code == 0
    assert out == snapshot("""\
### Budget split: 1.00 × 10²² FLOPs on 8 × H100 SXM

**At 20 tokens per parameter (Hoffmann et al. 2022): 9.13B parameters on 183B tokens**.

Each row spends 1.00 × 10²² FLOPs at the MFU prior for its size.

| parameters | tokens | tokens per parameter | days (median – slow end) | nominal cost | with ×1.50 failure budget (median – slow end) | fits |
|---|---|---|---|---|---|---|
| 100M | 16.7T | 166,667 | 124 – 252 | $94,923 | $142,385 – $289,680 | yes |
| 1B | 1.67T | 1,667 | 95.6 – 192 | $73,209 | $109,813 – $221,071 | yes |
| 10B | 167B | 16.67 | 71.0 – 143 | $54,374 | $81,560 – $164,720 | yes |
| 100B | 16.7B | 0.1667 | 70.7 – 143 | $54,188 | $81,282 – $164,328 | yes, with CPU offload, its layout ×1.34 in the days and cost |
| **9.13B** | **183B** | **20** | 71.7 – 145 | $54,907 | $82,360 – $166,351 | yes |

**Assumptions** (full detail: every source)
- Devices: 8, the default (one server); the count sets the days, not the dollars.
- MFU: 0.20 (0.10 – 0.31) at 9.13B parameters (each size has its own), a prior from 26 published runs on Hopper, calibrated 2026-12-06; give a measured one.
- Price: $3.99/GPU-h on-demand, 2026-11 (runpod.io/pricing); give yours.
""")


def test_short_reply_for_a_flop_budget_alone(cli: Cli) -> None:
    code, out, _ = cli("split", *COMMON["flops alone"])
    assert code == 0
    assert out == snapshot("""\
### Budget split: 1.00 × 10²² FLOPs

Every row spends the same compute: tokens D = C / (6·N). Give a GPU type (and count), or the machine's FLOP/s, for the time each split takes; a GPU type also gives the dollars.

| parameters N | tokens D = C / 6N | tokens per parameter |
|---|---|---|
| 100M | 16.7T | 166,667 |
| 1B | 1.67T | 1,667 |
| 10B | 167B | 16.67 |
| 100B | 16.7B | 0.1667 |
| **9.13B** | **183B** | **20** (Chinchilla) |

A bigger model sees fewer tokens for the same budget. About 20 tokens per parameter was compute-optimal in Hoffmann et al. 2022 ("Chinchilla"); that is a fit to their data and setup, not a law for every setting.
""")


def test_full_detail_quotes_the_sources_the_short_reply_labels(cli: Cli) -> None:
    _, short, _ = cli("split", *COMMON["dollars on a gpu"])
    _, full, _ = cli("split", *COMMON["dollars on a gpu"], "--detail", "full")
    quote = "'BFLOAT16 Tensor Core 1,979 teraFLOPS*'"  # the H100 page, as the catalog quotes it
    table = load_mfu_priors()  # the packaged table's band, as the basis sentence quotes it
    calibration = (f"with a band of ÷ {table.band_factor:g} to × {table.band_high_factor:g} that "
                   "covers 85% of the published runs held out one organisation or model family "
                   "at a time")
    for text in (quote, calibration, "Hoffmann et al. 2022 (\"Chinchilla\")"):
        assert text in full and text not in short
    # The short reply keeps the labels and dates an assistant relays.
    assert "$3.99/GPU-h on-demand, 2026-11 (runpod.io/pricing)" in short
    assert "a prior from 26 published runs on Hopper, calibrated 2026-12-06" in short
    assert "Devices: 8, the default (one server)" in short


def test_a_reply_names_no_internal_file(cli: Cli) -> None:
    # The A100's price is a RunPod quote whose source once named the receipts file.
    for detail in ("short", "full"):
        _, out, _ = cli("split", "--budget-usd", "50000", "--gpu", "a100", "--detail", detail)
        assert "runpod.io/pricing" in out
        assert ".json" not in out and "109-" not in out


def test_rows_over_a_dollar_budget_are_marked(cli: Cli) -> None:
    _, out, _ = cli("split", *COMMON["dollars on a gpu"])
    data = split_json(cli, *COMMON["dollars on a gpu"])
    rows = [line for line in out.splitlines() if line.startswith("| ")][1:]
    statuses = [line.split(" | ")[6] for line in rows]
    # 100M costs $84,052 and 1B $64,570 > $50,000 at the median; 10B ($47,794), 100B ($47,586
    # with its offload layout's ×1.35) and the 6.95B split stay within at the median but not at
    # the slow end (tests/skill/test_split.py has the arithmetic).
    assert statuses == ["yes", "yes", "at slow end", "at slow end", "at slow end"]
    assert [r["budget_status"] for r in data["rows"]] == [
        "over", "over", "over_at_slow_end", "over_at_slow_end"]
    assert "| over $50,000? |" in out.splitlines()[out.splitlines().index(rows[0]) - 2]


def test_reply_for_a_flop_budget_on_a_priced_gpu(cli: Cli) -> None:
    code, out, _ = cli("split", "--budget", "1e22", "--gpu", "h100", "--gpus", "64",
                       "--mfu", "0.4")
    assert code == 0
    # 1e22 / (64 × 989.5e12 × 0.4) s = 4.57 days; × 64 × 24 h × $3.99 (RunPod) = $28,002
    # nominal, × 1.5 = $42,004; at the slow end (the Hopper prior's low at 9.13B, 0.204 ÷ 2.02
    # = 0.101 on the 114-row calibration set) × 0.4 / 0.101.
    bold = next(line for line in out.splitlines() if line.startswith("| **"))
    assert "| 4.57 – 17.9 | $28,002 | $42,004 – $164,720 |" in bold
    assert "at your MFU, so every size takes the same days and cost" in out
    assert "Devices: 64, given by you" in out and "MFU: 0.40, given by you" in out


@pytest.mark.parametrize("money", ["400000", "4e5", "$400k", "400,000"])
def test_money_forms(cli: Cli, money: str) -> None:
    data = split_json(cli, "--budget-usd", money, "--gpu", "h100", "--price", "$2.49")
    assert data["budget_usd"] == 400_000
    # 23.09B rounded down to 23B on 460B tokens: under the budget by the FLOPs rounded off
    assert 0.99 * 400_000 < data["ratio_split"]["dollar_cost_with_failures"] <= 400_000


def test_utilization_is_the_old_name_of_mfu(cli: Cli) -> None:
    code, old, err = cli("split", "--budget", "6e14", "--flops-per-sec", "1e12",
                         "--utilization", "0.5", "--json")
    assert code == 0 and "deprecated" in err
    new = split_json(cli, "--budget", "6e14", "--flops-per-sec", "1e12", "--mfu", "0.5")
    assert json.loads(old) == new
    assert new["ratio_split"]["seconds"] == pytest.approx(1200)  # 6e14 / (1e12 × 0.5)


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--budget", "1e21", "--budget-usd", "5"], "--budget"),
        ([], "--budget"),
        (["--budget", "1e21", "--gpu", "h100", "--mfu", "1.5"], "--mfu"),
        (["--budget", "1e21", "--gpu", "h100", "--mfu", "0"], "--mfu"),
        (["--budget", "1e21", "--mfu", "0.4"], "--mfu"),
        (["--budget-usd", "lots", "--gpu", "h100"], "--budget-usd"),
        (["--budget-usd", "50k", "--gpu", "h100", "--price", "cheap"], "--price"),
        (["--budget-usd", "50k"], "--gpu"),
        (["--budget", "1e21", "--gpus", "8"], "--gpus"),
        (["--budget", "1e21", "--gpu", "h100", "--flops-per-sec", "1e15"], "--flops-per-sec"),
        (["--budget", "1e21", "--flops-per-sec", "1e12", "--utilization", "2"],
         "--utilization"),
        (["--budget", "1e21", "--flops-per-sec", "1e12", "--utilization", "0.5",
          "--mfu", "0.4"], "--utilization"),
    ],
)
def test_bad_input_names_the_flag_and_exits_2(
    cli: Cli, argv: list[str], flag: str
) -> None:
    code, out, err = cli("split", *argv)
    assert code == 2 and out == ""
    assert err.splitlines()[-1].startswith(f"error: {flag}: "), err


def test_a_split_longer_than_a_plan_asks_for_more_devices(
    cli: Cli,
) -> None:
    # $400k at $2.49/h buys 400,000 / 1.5 / 2.49 = 107,095 GPU-h: on 8 devices 558 days, on
    # 64 70 days; the slow end is the median days × the band's ÷ factor (the packaged table's,
    # 2.02 on the 114-row calibration set, applied to the prior's rounded ends). The best size
    # is shown rounded down (23.09B to 23B on 460B tokens, 99.2% of the FLOPs): 553 days; on
    # 64, 27.3B on 546B (99.7%): 69.6 days.
    _, out, _ = cli("split", "--budget-usd", "$400k", "--gpu", "h100", "--price", "2.49")
    assert "| 553 – 1,116 |" in out and "553 days on 8 × H100 SXM: longer than any plan" in out
    _, out, _ = cli("split", "--budget-usd", "$400k", "--gpu", "h100", "--gpus", "64",
                    "--price", "2.49")
    assert "| 69.6 – 141 |" in out and "longer than any plan" not in out


def test_a_capped_fast_end_is_said_in_the_short_reply(cli: Cli) -> None:
    # $2M on 256 A100s: the best size (~54B) has a prior of 0.41 whose × 1.37 would pass 0.51,
    # the fastest published run end to end; the band stops there, and the short reply says so.
    _, out, _ = cli("split", "--budget-usd", "2000000", "--gpu", "a100", "--gpus", "256")
    line = next(x for x in out.splitlines() if x.startswith("- MFU:"))
    cap = load_mfu_priors().highest_mfu
    assert cap is not None and f" – {cap:.2f})" in line
    assert f"The MFU band's fast end is held at {cap:.2f}, the fastest published run end to end." in line
    _, small, _ = cli("split", "--budget-usd", "50000", "--gpu", "a100")
    assert "fast end is held" not in small


def test_an_uncalibrated_devices_prior_is_dated_by_the_calibration_set(cli: Cli) -> None:
    # B200 (Blackwell) has too few published runs: its prior is Hopper's, so the date is the
    # calibration set's, not a calibration of the device (as the estimate says it).
    _, b200, _ = cli("split", "--budget-usd", "400k", "--gpu", "b200")
    assert ("a prior borrowed from Hopper (uncalibrated: too few published runs on Blackwell), "
            "calibration set of 2026-12-06" in b200)
    assert "calibrated 2026-12-06" not in b200
