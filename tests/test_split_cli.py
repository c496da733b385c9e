"""`compute-budget split`: the JSON contract, the reply, money forms and bad input (exit 2)."""
# ruff: noqa: E501  (the snapshot holds the rendered markdown verbatim)

import json

import pytest
from inline_snapshot import snapshot

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
    # The split the budget buys: 50,000 / 1.5 / 2.49 = 13,387 GPU-h, on 8 devices 1,673 h =
    # 69.7 days. The other rows spend the same FLOPs at their own size's MFU: a smaller model
    # runs at a lower MFU, so it takes longer and costs more.
    best = data["ratio_split"]
    assert best["wall_days"] == pytest.approx(50_000 / 1.5 / 2.49 / 8 / 24)
    assert best["dollar_cost_with_failures"] == pytest.approx(50_000)
    costs = [r["dollar_cost_with_failures"] for r in rows]
    assert costs == sorted(costs, reverse=True) and costs[0] > 50_000


def test_reply_for_a_dollar_budget(cli: Cli) -> None:
    code, out, _ = cli("split", "--budget-usd", "50000", "--gpu", "h100",
                       "--sizes", "1B,7B")
    assert code == 0
    assert out == snapshot("""\
### Budget split: $50,000 on 8 × H100 SXM

**Best size if the run reaches the median MFU (0.23): 9.58B parameters on 192B tokens** (20 tokens per parameter, 1.10 × 10²² FLOPs): 69.7 days and $50,000 with the failure budget. Over the MFU band (0.35 – 0.15) the same run takes 46.1 – 105 days and costs $33,095 – $75,490: at the slow end, with the failure budget, it overshoots the budget.

**Size that stays within $50,000 even at the slow end (MFU 0.15): 7.75B parameters on 155B tokens** (20 tokens per parameter, 7.20 × 10²¹ FLOPs): 46.2 days and $33,114 at the median MFU; 30.6 – 69.7 days and $21,948 – $50,000 over the band.

Every row below spends 1.10 × 10²² FLOPs, what $50,000 buys at the median MFU: tokens D = C / (6·N). Times are on 8 × H100 SXM; ranges are over the MFU band, fast end (0.35) to slow end (0.15).

| parameters N | tokens D = C / 6N | tokens per parameter | wall time (range) | cost with ×1.50 failure budget (range) | fits on 8 × H100 SXM |
|---|---|---|---|---|---|
| 1B | 1.84T | 1,836 | 80.9 days (53.5 – 122) | $58,040 ($38,372 – $87,500) | yes |
| 7B | 262B | 37.47 | 71.0 days (47.1 – 107) | $50,881 ($33,772 – $77,000) | yes |
| **9.58B** | **192B** | **20** (your ratio) | 69.7 days (46.1 – 105) | $50,000 ($33,095 – $75,490) | yes |

**Assumptions**
- Devices: 8 × H100 SXM: not given, so the default of one 8-device server (an HGX/DGX node, the usual cloud instance); give your device count. The count changes the wall time, not the dollars: the budget buys the same FLOPs on any number of devices.
- Peak: 989.5 TFLOP/s dense bf16 per device (the device's default training precision). Source (catalog of 2026-12-01): NVIDIA H100 page (nvidia.com/en-us/data-center/h100), H100 SXM column: 'BFLOAT16 Tensor Core 1,979 teraFLOPS*', 'FP8 Tensor Core 3,958 teraFLOPS*' (*with sparsity), 80GB, 3.35 TB/s, up to 700 W. NVIDIA NGC DGXC benchmarking page states dense peaks 'H100 FP8 is 1979 TFLOPS and for H100 BF16 is 989 TFLOPS'.
- MFU: 0.23, band 0.15 – 0.35 — a prior, not a measurement. End-to-end MFU (6·N·T ÷ reported GPU-hours ÷ BF16 dense peak) fitted to the 11 published dense runs on Hopper: 0.23 at 10B active parameters, ×1.16 per tenfold more (one slope fitted across generations), with a band of ×/÷ 1.51 that covers 90% of the published runs around the fit. Source: compute-budget calibration set calibration_runs.csv: 52 published training runs from papers, model cards and technical reports, GPU-hours as reported or derived from device count × duration as each row says, 2026-12-01. Give a measured MFU to replace it.
- Price: $2.49 per GPU-hour, on-demand, as of 2026-Q1 (industry price survey (secondary)). Prices differ 2–4x between providers and commitments: give yours to replace it.
- Failure budget: ×1.50: of $50,000, $33,333 buys compute and the rest is kept for a failed or repeated run.

A bigger model sees fewer tokens for the same budget. About 20 tokens per parameter was compute-optimal in Hoffmann et al. 2022 ("Chinchilla"); that is a fit to their data and setup, not a law for every setting.
""")


def test_reply_for_a_flop_budget_on_a_priced_gpu(cli: Cli) -> None:
    code, out, _ = cli("split", "--budget", "1e22", "--gpu", "h100", "--gpus", "64",
                       "--mfu", "0.4")
    assert code == 0
    # 1e22 / (64 × 989.5e12 × 0.4) s = 4.57 days; × 64 × 24 h × $2.49 × 1.5 = $26,213.
    assert "4.57 days at MFU 0.40" in out and "$26,213 with the failure budget" in out
    assert "64 × H100 SXM, given by you" in out and "MFU: 0.40, given by you" in out


@pytest.mark.parametrize("money", ["400000", "4e5", "$400k", "400,000"])
def test_money_forms(cli: Cli, money: str) -> None:
    data = split_json(cli, "--budget-usd", money, "--gpu", "h100", "--price", "$2.49")
    assert data["budget_usd"] == 400_000
    assert data["ratio_split"]["dollar_cost_with_failures"] == pytest.approx(400_000)


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
    # $400k buys 400,000 / 1.5 / 2.49 = 107,095 GPU-h: on 8 devices 558 days, on 64 70 days.
    _, out, _ = cli("split", "--budget-usd", "$400k", "--gpu", "h100")
    assert "558 days" in out and "1.5 years, longer than any plan survives" in out
    _, out, _ = cli("split", "--budget-usd", "$400k", "--gpu", "h100", "--gpus", "64")
    assert "69.7 days" in out and "longer than any plan" not in out
