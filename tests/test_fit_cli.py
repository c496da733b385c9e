"""`fit`, `optimal`, `decide --points` and the energy columns on the command line (issue 10)."""

import json
import struct
from pathlib import Path

import pytest
from inline_snapshot import snapshot

from compute_budget.prompts.plots import fit_picture_data
from compute_budget.skill import ScalingPoint, fit_scaling_law
from tests.conftest import Cli

# A clean saturating curve L = 2.245 + 960.9·C^-0.1693 read off at seven computes (rounded to
# the third decimal, as a training log would report them).
POINTS = """compute,loss
1e17,3.52
3e17,3.30
1e18,3.11
3e18,2.96
1e19,2.83
3e19,2.73
1e20,2.64
"""
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def points(tmp_path: Path) -> Path:
    path = tmp_path / "points.csv"
    path.write_text(POINTS)
    return path


def test_fit_json_contract(cli: Cli, points: Path) -> None:
    code, out, err = cli("fit", "--points", str(points), "--target-compute", "1e22",
                         "--baseline-loss", "2.6", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    low, high = data["interval"]
    assert low <= data["predicted"] <= high
    assert data["predicted_gain"] == pytest.approx(2.6 - data["predicted"])
    assert data["gain_uncertainty"] > 0
    assert 2.3 < data["predicted"] < 2.5  # the curve above at 1e22 is 2.43


def test_fit_markdown_names_the_gain_and_the_loss_check(cli: Cli,
                                                        points: Path) -> None:
    code, out, _ = cli("fit", "--points", str(points), "--target-compute", "1e23",
                       "--baseline-loss", "2.6")
    assert code == 0
    assert out.startswith("### Scaling fit: loss = E + a·C^−b on 7 small runs")
    assert "**Far extrapolation:** the target is 1,000× the largest small run" in out
    # a fit in compute alone: a bar at the end, no level at a checkpoint, and why
    assert "**Loss check for the long run, by its end:** loss at most " in out
    assert "A fit in compute alone gives no level at a checkpoint" in out
    assert "at 10% of its" not in out
    assert "are the predicted gain and uncertainty for the verdict" in out


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
    return width, height


@pytest.mark.slow
def test_fit_plot_writes_a_png(cli: Cli, points: Path,
                               tmp_path: Path) -> None:
    picture = tmp_path / "fit.png"
    code, _, _ = cli("fit", "--points", str(points), "--target-compute", "1e22",
                     "--baseline-loss", "2.6", "--plot", str(picture))
    assert code == 0
    data = picture.read_bytes()
    assert _png_size(data) == (825, 506)  # 7.5 × 4.6 in at 110 dpi
    assert len(data) > 10_000  # axes, labels, curve: not an empty canvas


def test_fit_plot_data_snapshot() -> None:
    """What the fit picture plots, rounded: the points, the band and the target marker; with
    four points (one spare) the fit has no interval, so no band and no error bar."""
    pts = [ScalingPoint(compute=c, loss=loss) for c, loss in (
        (1e17, 3.52), (1e18, 3.11), (3e18, 2.95), (1e19, 2.83), (1e20, 2.64))]
    fit = fit_scaling_law(pts, target_compute=1e21, baseline_loss=2.6, seed=0, resamples=200)
    data = fit_picture_data(fit, pts).as_dict()
    kinds = [(s["label"], s["kind"], len(s["x"])) for s in data["series"]]
    assert kinds == snapshot([
        ("interval (80%)", "band", 40), ("fitted curve", "line", 40), ("small runs", "points", 5),
        ("prediction at the target", "marker", 1), ("baseline loss", "hline", 0)])
    points = data["series"][2]
    assert points["x"] == [1e17, 1e18, 3e18, 1e19, 1e20]
    assert points["y"] == [3.52, 3.11, 2.95, 2.83, 2.64]
    band = data["series"][0]
    assert band["x"][0] == 1e17 and band["x"][-1] == 1e21
    assert all(lo <= hi for lo, hi in zip(band["low"], band["high"], strict=True))
    assert data["series"][3]["y"] == [float(f"{fit.predicted:.6g}")]
    assert len(data["series"][3]["low"]) == 1
    four = [p for p in pts if p.compute != 3e18]
    bare = fit_picture_data(fit_scaling_law(four, target_compute=1e21), four).as_dict()
    assert [s["kind"] for s in bare["series"]] == ["line", "points", "marker"]
    assert bare["series"][2]["low"] == [] and bare["series"][2]["high"] == []


def test_fit_without_points_is_the_labelled_published_fallback(
        cli: Cli) -> None:
    code, out, _ = cli("fit", "--target-params", "70B", "--target-tokens", "1.4T",
                       "--baseline-params", "7B", "--baseline-tokens", "140B")
    assert code == 0
    assert "A fallback for language models only" in out
    assert "not a statistical interval" in out
    code, out, _ = cli("fit", "--target-params", "70B", "--target-tokens", "1.4T",
                       "--json")
    # Hoffmann et al. 2022's fit at Chinchilla's own size: 1.69 + 406.4/N^0.34 + 410.7/D^0.28
    loss = 1.69 + 406.4 / 70e9 ** 0.34 + 410.7 / 1.4e12 ** 0.28
    assert json.loads(out)["fits"][0]["predicted_loss"] == pytest.approx(loss)


@pytest.mark.parametrize(("rows", "says"), [
    ("compute,loss\n1e17,3.5\n1e18,3.1\n1e19,2.8\n", "error: --points: "),  # too few
    ("compute,loss\n1e17,2.5\n1e18,2.7\n1e19,2.9\n1e20,3.1\n", "error: --points: "),  # rising
    ("compute,loss\n1e17,3.5\n1e17,3.4\n1e17,3.6\n1e17,3.5\n", "error: --points: "),  # one compute
    ("compute,loss\n-1e17,3.5\n1e18,3.1\n1e19,2.8\n1e20,2.6\n", "error: --points[0].compute: "),
    ("compute,loss\n1e17,nan\n1e18,3.1\n1e19,2.8\n1e20,2.6\n", "error: --points[0].loss: "),
])
def test_bad_points_exit_2_naming_the_field(cli: Cli, tmp_path: Path,
                                            rows: str, says: str) -> None:
    path = tmp_path / "p.csv"
    path.write_text(rows)
    code, out, err = cli("fit", "--points", str(path), "--target-compute", "1e22")
    assert (code, out) == (2, "")
    # issue 18: a file that does not parse as points is named with where in it, never a value
    # read from it; points that parse but cannot be fitted are named as before
    field = says.removeprefix("error: --").removesuffix(": ")
    assert err.startswith(says) or (
        err.startswith("error: --points: ") and f"; {field}" in err
        and "(contents not shown)" in err), err


def test_optimal_json_contract_and_placement(cli: Cli) -> None:
    _, out, _ = cli("optimal", "--flops", "5.76e23", "--json")
    data = json.loads(out)
    # 20 tokens per parameter: N = sqrt(C / 120) = 69.3B, D = 1.39T (Hoffmann et al. 2022 trained
    # Chinchilla, 70B on 1.4T tokens, with this compute)
    assert data["params"] == pytest.approx((5.76e23 / 120) ** 0.5)
    assert data["tokens"] == pytest.approx(20 * data["params"])
    _, out, _ = cli("optimal", "--params", "7B", "--tokens", "100B")
    assert "is 14.3 tokens per parameter" in out and "under-trained for its size" in out


def test_decide_takes_the_gain_from_points(cli: Cli,
                                           points: Path) -> None:
    run_flags = ["--params", "1B", "--tokens", "20B", "--gpu", "h100", "--gpus", "8"]
    code, out, _ = cli("decide", *run_flags, "--points", str(points),
                       "--baseline-loss", "2.7", "--json")
    assert code == 0
    decision = json.loads(out)
    fit = fit_scaling_law([ScalingPoint(compute=float(c), loss=float(v)) for c, v in (
        line.split(",") for line in POINTS.strip().splitlines()[1:])],
        target_compute=6 * 1e9 * 20e9, target_params=1e9, target_tokens=20e9,
        baseline_loss=2.7)
    assert decision["predicted_gain"] == pytest.approx(fit.predicted_gain)
    assert decision["gain_uncertainty"] == pytest.approx(fit.gain_uncertainty)
    assert decision["gain_fit"]["points_used"] == 7
    # A fit in compute alone gives the bar at the end of the run, not a checkpoint level
    # (issue 16: a checkpoint of a larger model on fewer tokens sits above the small runs'
    # curve): the loss must end within the fit's interval at this run.
    loss = [k for k in decision["kill_criteria"] if k["metric"] == "loss_at_end"]
    assert len(loss) == 1 and loss[0]["threshold"] == pytest.approx(fit.interval[1])
    code, _, err = cli("decide", *run_flags, "--points", str(points),
                       "--baseline-loss", "2.7", "--gain", "1")
    assert code == 2 and err.startswith("error: --gain: ")
    code, _, err = cli("decide", *run_flags, "--points", str(points))
    assert code == 2 and err.startswith("error: --baseline-loss: ")


def test_estimate_energy_from_board_power_pue_and_grid(cli: Cli) -> None:
    flags = ["estimate", "--params", "7B", "--tokens", "100B", "--gpu", "h100", "--gpus", "8",
             "--mfu", "0.4", "--json"]
    _, out, _ = cli(*flags, "--pue", "1.2", "--grid-kg-co2-per-kwh", "0.4")
    e = json.loads(out)
    # 8 devices × 0.700 kW (H100 SXM, NVIDIA's "up to 700 W") × wall hours × PUE 1.2
    kwh = 8 * 0.7 * e["wall_hours"] * 1.2
    assert e["energy"]["kwh"] == pytest.approx(kwh)
    assert e["energy"]["co2_kg"] == pytest.approx(kwh * 0.4)
    assert e["energy"]["pue"]["origin"] == "user"
    _, out, _ = cli(*flags[:-1], "--board-power-w", "500")
    assert "500 W per device (given by you" in out
    _, out, _ = cli("estimate", "--params", "7B", "--tokens", "100B", "--gpu",
                    "tpu-v5e", "--gpus", "8", "--json")
    assert json.loads(out)["energy"]["kwh"] is None  # no sourced board power: unknown, not 0
    _, out, _ = cli("estimate", "--params", "7B", "--tokens", "100B", "--gpu", "tpu-v5e",
                    "--gpus", "8")
    assert "board power of TPU v5e (per chip) is unknown (give it in W)" in out


def test_plan_json_contract_matches_estimate(cli: Cli,
                                             tmp_path: Path) -> None:
    picture = tmp_path / "plan.png"
    code, out, err = cli("plan", "--params", "7B", "--tokens", "300B",
                         "--deadline-days", "20", "--gpu-types", "h100,a100,mi300x",
                         "--json", "--plot", str(picture))
    assert code == 0 and err == ""
    report = json.loads(out)
    plans = report["plans"]
    costs = [p["dollar_cost"] for p in plans]
    assert costs == sorted(costs) and all(p["wall_days"] <= 20 for p in plans)
    first = plans[0]
    code, out, _ = cli("estimate", "--params", "7B", "--tokens", "300B", "--gpu",
                       first["gpu"], "--gpus", str(first["gpu_count"]), "--json")
    estimate = json.loads(out)
    assert estimate["wall_days"] == pytest.approx(first["wall_days"])
    assert estimate["dollar_cost"] == pytest.approx(first["dollar_cost"])
    assert _png_size(picture.read_bytes()) == (825, 506)


def test_plan_says_which_constraint_binds(cli: Cli) -> None:
    code, out, _ = cli("plan", "--params", "70B", "--tokens", "2T",
                       "--deadline-days", "20", "--budget", "$500k", "--gpu-types", "h100")
    assert code == 0
    assert "**No plan meets every constraint.**" in out
    assert "- Budget: the cheapest plan in time" in out and "above the $500,000 budget" in out


def test_plan_plot_data_is_the_frontier_that_fits() -> None:
    """What the plan picture plots: per type, cost with failures against wall days over the
    counts that fit, the chosen plans as markers, the deadline and the budget as lines."""
    from compute_budget.prompts.plots import plan_picture_data
    from compute_budget.skill import PlanSpec, plan_run

    report = plan_run(PlanSpec(params="7B", tokens="300B", deadline_days=20,
                               budget_usd=200_000, gpus=["h100", "a100"]))
    data = plan_picture_data(report, 20, 200_000).as_dict()
    lines = {s["label"]: s for s in data["series"] if s["kind"] == "line"}
    assert set(lines) == {"H100 SXM", "A100 80GB SXM"}
    for front in report.frontier:
        fitting = sorted((p for p in front.points if p.fits), key=lambda p: p.wall_days)
        assert lines[front.accelerator]["x"] == [float(f"{p.wall_days:.6g}") for p in fitting]
    markers = [s["label"] for s in data["series"] if s["kind"] == "marker"]
    assert markers[0] == f"{report.plans[0].gpu_count} × {report.plans[0].accelerator}"
    assert [s["kind"] for s in data["series"][-2:]] == ["vline", "hline"]
    assert data["x_log"] and data["y_log"]


@pytest.mark.parametrize(("argv", "says"), [
    (["plan", "--params", "7B", "--tokens", "1T", "--deadline-days", "30",
      "--available", "h100:64"], "error: --available: 'h100:64' is not allowed; NAME=COUNT"),
    (["plan", "--params", "7B", "--tokens", "1T", "--deadline-days", "30",
      "--available", "h100=0"], "error: --available"),
    (["estimate", "--params", "7B", "--tokens", "1T", "--gpu", "h100", "--gpus", "8",
      "--mfu-convention", "half"], "error: compute-budget estimate: argument --mfu-convention"),
    (["estimate", "--params", "7B", "--tokens", "1T", "--gpu", "h100", "--gpus", "8",
      "--mfu-convention", "full"], "error: --mfu-convention: 'full' is not allowed"),
    (["fit", "--points", "POINTS", "--target-compute", "1e22", "--plot",
      "/no/such/dir/fit.png"], "error: --plot: '/no/such/dir/fit.png' is not allowed"),
    (["fit", "--target-params", "7B", "--target-tokens", "1T", "--plot", "x.png"],
     "error: --plot: a picture needs a fit of your small runs"),
])
def test_bad_planning_input_exits_2_naming_the_flag(
        cli: Cli, points: Path, argv: list[str], says: str) -> None:
    argv = [str(points) if a == "POINTS" else a for a in argv]
    code, out, err = cli(*argv)
    assert (code, out) == (2, "")
    # issue 18: a file that does not parse as points is named with where in it, never a value
    # read from it; points that parse but cannot be fitted are named as before
    field = says.removeprefix("error: --").removesuffix(": ")
    assert err.startswith(says) or (
        err.startswith("error: --points: ") and f"; {field}" in err
        and "(contents not shown)" in err), err


@pytest.mark.parametrize(("rows", "says"), [
    ("compute,loss,loss\n1e17,3.5,3.5\n", "error: --points: "),  # a column twice
    ("compute,loss\n1e5,3.5\n1e18,3.1\n1e19,2.8\n1e20,2.6\n", "error: --points[0].compute: "),
    ("params,tokens,loss\n1,1,3.5\n1e8,1e9,3.1\n1e9,1e10,2.8\n1e10,1e11,2.6\n",
     "error: --points[0]"),  # 6·N·D = 6 FLOPs: below the smallest compute
])
def test_more_bad_points(cli: Cli, tmp_path: Path, rows: str,
                         says: str) -> None:
    path = tmp_path / "p.csv"
    path.write_text(rows)
    code, out, err = cli("fit", "--points", str(path), "--target-compute", "1e22")
    assert (code, out) == (2, "")
    # issue 18: a file that does not parse as points is named with where in it, never a value
    # read from it; points that parse but cannot be fitted are named as before
    field = says.removeprefix("error: --").removesuffix(": ")
    assert err.startswith(says) or (
        err.startswith("error: --points: ") and f"; {field}" in err
        and "(contents not shown)" in err), err


def test_plan_refuses_a_type_named_twice_in_available(cli: Cli) -> None:
    code, _, err = cli("plan", "--params", "7B", "--tokens", "1T", "--deadline-days",
                       "30", "--available", "h100=64,h100-sxm=8")
    assert code == 2 and err.startswith("error: --available"), err


def test_decide_says_what_it_cannot_weigh(cli: Cli, tmp_path: Path) -> None:
    """Four small runs leave the fit's 1σ unknown, and a device without a price leaves the cost
    unknown: each verdict is marginal, says why, and names the flag that would settle it."""
    four = tmp_path / "four.csv"
    four.write_text("compute,loss\n1e17,3.05\n1e18,2.66\n1e19,2.42\n1e20,2.25\n")
    run = ("--params", "7B", "--tokens", "140B", "--gpu", "h100", "--gpus", "64")
    code, out, _ = cli("decide", *run, "--points", str(four), "--baseline-loss", "2.4")
    assert code == 0 and out.startswith("### Verdict: **MARGINAL**")
    assert "The gain's uncertainty cannot be estimated from 4 small runs" in out
    assert "| Gain used | 0.3" in out and ", 1σ unknown, over a baseline" in out
    code, out, _ = cli("decide", "--params", "7B", "--tokens", "1T", "--gpu", "h800", "--gpus",
                       "8", "--gain", "0.5", "--uncertainty", "0.3")
    assert code == 0 and out.startswith("### Verdict: **MARGINAL**")
    assert "The cost is unknown (no price for this device)" in out
    assert "- Give the price per GPU-hour you pay (`--price`)" in out
    assert "usd_per_gpu_hour" not in out
    code, out, _ = cli("decide", "--params", "7B", "--tokens", "1T", "--gpu", "h800", "--gpus",
                       "8", "--gain", "0.5", "--uncertainty", "0.3", "--price", "2.5")
    assert code == 0 and out.startswith("### Verdict: **GO**")
