"""Candidate runs side by side: parsing and its errors, the ranking by gain per dollar, the
verdicts (equal to `decide`'s), P(beats the baseline), and the best set within a pool of
device-days against brute force."""

import itertools
import json
import math
import random
from pathlib import Path
from statistics import NormalDist

import pytest
from pydantic import ValidationError

from compute_budget.cli import main
from compute_budget.skill.advice.candidates import Candidate, parse_candidates, validate_candidates
from compute_budget.skill.advice.compare import (
    POOL_UNITS,
    CandidateResult,
    CompareSpec,
    Comparison,
    best_set_in_pool,
    compare_candidates,
)
from compute_budget.skill.errors import InputError, UnknownAcceleratorError, describe_error

# H100 SXM dense BF16 peak 989.5 TFLOP/s (NVIDIA H100 datasheet, the catalog's h100-sxm entry).
H100_PEAK = 989.5e12
HEADER = "name,params,tokens,gpu,gpu_count,predicted_gain,gain_uncertainty,mfu,usd_per_gpu_hour"


def _row(name: str, params: str = "1B", tokens: str = "20B", gpu: str = "h100",
         gpus: int = 8, gain: float = 1.0, sigma: float = 0.1, mfu: str = "0.4",
         price: str = "2") -> dict[str, object]:
    return {"name": name, "params": params, "tokens": tokens, "gpu": gpu, "gpu_count": gpus,
            "predicted_gain": gain, "gain_uncertainty": sigma, "mfu": mfu,
            "usd_per_gpu_hour": price}


def _by_name(comparison: Comparison) -> dict[str, CandidateResult]:
    return {r.name: r for r in comparison.candidates}


def _hand_cost_with_failures(n: float, t: float, mfu: float, price: float) -> float:
    """6·N·T FLOPs (Kaplan et al. 2020) at MFU × the dense peak: device-hours × $/h × 1.5."""
    device_hours = 6 * n * t / (H100_PEAK * mfu) / 3600
    return device_hours * price * 1.5


# --- ranking ------------------------------------------------------------------------------


def test_ranking_by_gain_per_dollar_computed_by_hand() -> None:
    text = "\n".join([
        HEADER,
        "big,7B,140B,h100,64,3.0,0.5,0.4,2",  # 5.88e21 FLOPs: 4126.7 device-hours, $12,380
        "tiny,350M,7B,h100,8,0.2,0.05,0.4,4",  # 1.47e19 FLOPs: 10.32 device-hours, $61.90
        "small,1B,20B,h100,8,1.0,0.3,0.4,2",  # 1.2e20 FLOPs: 84.22 device-hours, $252.65
    ])
    comparison = compare_candidates(CompareSpec(candidates=parse_candidates(text)))
    expected = {
        "big": 3.0 / _hand_cost_with_failures(7e9, 140e9, 0.4, 2),  # 2.42e-4 per $
        "tiny": 0.2 / _hand_cost_with_failures(350e6, 7e9, 0.4, 4),  # 3.23e-3 per $
        "small": 1.0 / _hand_cost_with_failures(1e9, 20e9, 0.4, 2),  # 3.96e-3 per $
    }
    assert expected["small"] == pytest.approx(3.958e-3, rel=1e-3)
    assert [r.name for r in comparison.candidates] == ["small", "tiny", "big"]
    assert [r.rank for r in comparison.candidates] == [1, 2, 3]
    assert comparison.top == "small"
    rows = _by_name(comparison)
    for name, per_dollar in expected.items():
        assert rows[name].gain_per_dollar == pytest.approx(per_dollar, rel=1e-9)
    # without a pool the opportunity cost is the dollars beyond the top-ranked run
    small_cost = _hand_cost_with_failures(1e9, 20e9, 0.4, 2)
    assert rows["small"].usd_vs_top == 0
    assert rows["big"].usd_vs_top == pytest.approx(
        _hand_cost_with_failures(7e9, 140e9, 0.4, 2) - small_cost, rel=1e-9)
    assert comparison.opportunity_basis == "dollars"
    assert comparison.best_set is None and rows["big"].pool_status is None
    assert rows["big"].pool_share is None and rows["big"].fits_horizon is None
    # gpu_days = devices × wall days: 4126.7 device-hours / 24
    assert rows["big"].gpu_days == pytest.approx(
        6 * 7e9 * 140e9 / (H100_PEAK * 0.4) / 86400, rel=1e-9)


def test_unknown_price_ranks_last_with_none() -> None:
    # tpu-v3 and gb300 have no catalog price: their cost is unknown, not 0, whatever the gain.
    rows = [_row("priced", gain=0.01), _row("tpu", gpu="tpu-v3", price="", gain=50, sigma=10),
            _row("gb", gpu="gb300", price="", gain=50, sigma=1)]
    comparison = compare_candidates(CompareSpec(candidates=rows))
    assert [r.name for r in comparison.candidates] == ["priced", "gb", "tpu"]  # P: 1.0 > Φ(5)
    for r in comparison.candidates[1:]:
        assert r.gain_per_dollar is None and r.net_gain_per_dollar is None
        assert r.dollar_cost_with_failures is None and r.usd_vs_top is None
    # an unknown cost leaves the top one's dollars unknown too when it is top
    assert comparison.candidates[0].gain_per_dollar is not None


def test_a_candidate_expected_to_lose_to_the_baseline_ranks_after_an_unpriced_go() -> None:
    # gain 0.4 over a baseline of 0.5 (net -0.1) was ranked above an unpriced go (net 0.3):
    # a negative net gain per dollar is still a number, unknown was ranked after every number
    rows = [_row("losing", gain=0.4, sigma=0.5), _row("unpriced", gpu="tpu-v3", price="",
                                                       gain=0.8, sigma=0.2),
            _row("best", gain=1.0, sigma=0.3)]
    comparison = compare_candidates(CompareSpec(candidates=rows, baseline_to_beat=0.5))
    assert [r.name for r in comparison.candidates] == ["best", "unpriced", "losing"]
    losing = _by_name(comparison)["losing"]
    assert losing.net_gain < 0 and losing.net_gain_per_dollar is not None


# The reviewer's repro: 70B on 1.4T tokens on 8 H100 takes about 4,360 days (over the
# 365-day plan limit, too_long) yet has the best gain per dollar (20 vs 10 per $1M at the
# catalog's H100 price); it ranked first and the relay asked "Run the top candidate…?".
TOO_LONG = {"name": "big", "params": "70B", "tokens": "1.4T", "gpu": "h100", "gpu_count": 8,
            "predicted_gain": 100, "gain_uncertainty": 1}
RUNNABLE = {"name": "small", "params": "7B", "tokens": "140B", "gpu": "h100", "gpu_count": 8,
            "predicted_gain": 0.5, "gain_uncertainty": 0.2}
# 7T parameters on one RTX 4090: fits at no layout (does_not_fit), 10 units of gain.
NO_FIT = {"name": "huge", "params": "7T", "tokens": "1T", "gpu": "rtx-4090", "gpu_count": 1,
          "predicted_gain": 10, "gain_uncertainty": 1}


def test_a_candidate_that_cannot_run_ranks_after_every_one_that_can() -> None:
    comparison = compare_candidates(CompareSpec(candidates=[TOO_LONG, RUNNABLE]))
    rows = _by_name(comparison)
    big, small = rows["big"], rows["small"]
    assert big.estimate.feasibility == "too_long" and big.wall_days > 365
    assert big.net_gain_per_dollar > small.net_gain_per_dollar  # it would have ranked first
    assert not big.can_run and small.can_run
    assert comparison.top == "small" and [r.name for r in comparison.candidates] == [
        "small", "big"]
    assert big.usd_vs_top > 0  # measured against the runnable top


def test_cannot_run_ranks_after_a_runnable_loser_and_an_unpriced_run() -> None:
    # A runnable candidate that loses to the baseline (net < 0) and one of unknown cost still
    # rank above every candidate that cannot run, does_not_fit, too_long or out of host RAM.
    ram = {"name": "ram", "preset": "llama-3.1-70b", "lora_rank": 16, "weights_bits": 4,
           "tokens": "50M", "gpu": "rtx-4090", "gpu_count": 1, "host_ram_gib": 16,
           "predicted_gain": 50.0, "gain_uncertainty": 0.1}
    rows = [NO_FIT, ram, TOO_LONG, _row("losing", gain=0.4, sigma=0.5),
            _row("unpriced", gpu="tpu-v3", price="", gain=0.8, sigma=0.2)]
    comparison = compare_candidates(CompareSpec(candidates=rows, baseline_to_beat=0.5))
    order = [r.name for r in comparison.candidates]
    assert order[:2] == ["unpriced", "losing"]
    assert set(order[2:]) == {"huge", "ram", "big"}
    causes = {r.name: r.cause for r in comparison.candidates}
    assert causes["huge"] == "does_not_fit" and causes["ram"] == "host_memory_does_not_fit"
    assert [r.can_run for r in comparison.candidates] == [True, True, False, False, False]


def test_the_reply_does_not_offer_a_candidate_that_cannot_run() -> None:
    from compute_budget.prompts import render_comparison

    text = render_comparison(compare_candidates(CompareSpec(candidates=[TOO_LONG, RUNNABLE])))
    assert "**Top: small**" in text and "**Top: big**" not in text
    assert "Candidates that cannot run as planned (they do not fit, or take longer than a plan " \
           "survives) rank after every one that can" in text
    # none can run: no top to launch, a re-plan instead
    stuck = compare_candidates(CompareSpec(candidates=[TOO_LONG, NO_FIT]))
    text = render_comparison(stuck)
    assert "**Top:" not in text
    assert "**No candidate can run as planned:** each does not fit in memory" in text


def test_the_table_gives_each_candidates_price_and_mfu() -> None:
    # An H100-vs-A100 comparison hinges on them: 7B at the prior is about 0.20 on H100 and
    # 0.33 on A100 (the catalog's calibrated priors), at $3.99 and $1.79 per GPU-hour.
    from compute_budget.prompts import render_comparison

    a100 = {**RUNNABLE, "name": "on-a100", "gpu": "a100"}
    given = _row("given")  # MFU 0.4 and $2/GPU-h given by the user
    comparison = compare_candidates(CompareSpec(candidates=[RUNNABLE, a100, given]))
    text = render_comparison(comparison)
    assert "| price | MFU |" in text
    for r in comparison.candidates:
        row = next(line for line in text.splitlines()
                   if line.startswith(f"| {r.rank} | {r.name} |"))
        price, mfu = row.split(" | ")[-3:-1]
        e = r.estimate
        if r.name == "given":
            assert (price, mfu) == ("$2.00/GPU-h (yours)", "0.40 (yours)")
            continue
        assert price == (f"${e.price.usd_per_gpu_hour:.2f}/GPU-h ({e.price.kind}, "
                         f"{e.price.as_of}, {e.price.label})")
        assert mfu == f"{e.mfu:.2f} (calibrated prior)"
    mfus = {r.name: r.estimate.mfu for r in comparison.candidates}
    assert mfus["small"] < mfus["on-a100"]  # the difference the table now shows


def test_ties_in_gain_per_dollar_go_to_the_likelier_win() -> None:
    rows = [_row("noisy", sigma=1.0), _row("sure", sigma=0.1), _row("noisier", sigma=2.0)]
    comparison = compare_candidates(CompareSpec(candidates=rows))
    assert [r.name for r in comparison.candidates] == ["sure", "noisy", "noisier"]
    per_dollar = {r.gain_per_dollar for r in comparison.candidates}
    assert len(per_dollar) == 1  # same run, same gain: a true tie


# --- verdicts and probabilities -----------------------------------------------------------


def test_each_verdict_equals_what_decide_gives(capsys: pytest.CaptureFixture[str]) -> None:
    rows = [_row("go", gain=2.0, sigma=0.3),
            _row("marginal", gain=0.7, sigma=0.4),
            _row("no-go", gain=0.1, sigma=0.1),
            _row("pricey", params="7B", tokens="1T", gpus=64, gain=2.0, sigma=0.3)]
    spec = CompareSpec(candidates=rows, baseline_to_beat=0.5, usd_per_unit_gain="$20k",
                       budget_usd=50_000)
    comparison = compare_candidates(spec)
    for r in comparison.candidates:
        src = next(row for row in rows if row["name"] == r.name)
        code = main(["decide", "--params", str(src["params"]), "--tokens", str(src["tokens"]),
                     "--gpu", "h100", "--gpus", str(src["gpu_count"]), "--mfu", "0.4",
                     "--price", "2", "--gain", str(src["predicted_gain"]),
                     "--uncertainty", str(src["gain_uncertainty"]), "--baseline", "0.5",
                     "--value-per-unit", "20000", "--budget-usd", "50000", "--json"])
        out, _ = capsys.readouterr()
        assert code == 0
        assert json.loads(out) == r.decision.model_dump(mode="json")
        assert r.verdict == json.loads(out)["verdict"]
    verdicts = {r.name: r.verdict for r in comparison.candidates}
    # 0.7 − 0.4 < 0.5 ≤ 0.7 + 0.4: noise; 0.1 + 0.1 < 0.5: below the baseline; pricey: 4.2e22
    # FLOPs = 29,475 device-hours = $58,950 nominal, over the $50k cap and above the $30k its
    # net gain of 1.5 is worth
    assert verdicts == {"go": "go", "marginal": "marginal", "no-go": "no-go", "pricey": "no-go"}
    pricey = _by_name(comparison)["pricey"]
    assert pricey.dollar_cost_with_failures == pytest.approx(
        _hand_cost_with_failures(7e9, 1e12, 0.4, 2), rel=1e-9)
    assert {f.cause for f in pricey.decision.findings} >= {"over_budget", "value_below_cost"}


@pytest.mark.parametrize(
    ("gain", "sigma", "baseline", "p"),
    [
        (1.0, 1.0, 0.0, 0.8413447460685429),  # Φ(1) (standard normal table)
        (1.5, 0.5, 0.5, 0.9772498680518208),  # Φ(2)
        (0.0, 0.5, 0.5, 0.15865525393145707),  # Φ(−1) = 1 − Φ(1)
        (0.7, 0.0, 0.5, 1.0),  # σ = 0: certain
        (0.3, 0.0, 0.5, 0.0),
    ],
)
def test_p_beats_baseline_golden_values(gain: float, sigma: float, baseline: float,
                                        p: float) -> None:
    rows = [_row("a", gain=gain, sigma=sigma), _row("b")]
    comparison = compare_candidates(CompareSpec(candidates=rows, baseline_to_beat=baseline))
    got = _by_name(comparison)["a"].p_beats_baseline
    assert got == pytest.approx(p, abs=1e-12)
    if sigma:
        assert got == pytest.approx(NormalDist().cdf((gain - baseline) / sigma), abs=1e-12)


# --- the best set within a pool -----------------------------------------------------------


def _brute_force(gains: list[float], days: list[float], pool: float) -> tuple[float, set[int]]:
    best, best_set = 0.0, set()
    for k in range(1, len(gains) + 1):
        for subset in itertools.combinations(range(len(gains)), k):
            if sum(days[i] for i in subset) <= pool:
                total = sum(gains[i] for i in subset)
                if total > best + 1e-12:
                    best, best_set = total, set(subset)
    return best, best_set


def test_knapsack_equals_brute_force_on_random_instances() -> None:
    # Whole device-days and pools dividing POOL_UNITS: the units are exact, so must the sets be.
    rng = random.Random(20240611)
    for _ in range(150):
        n = rng.randint(1, 10)
        pool = rng.choice([20, 40, 50, 80, 100])
        days = [float(rng.randint(1, 60)) for _ in range(n)]
        gains = [round(rng.uniform(-1, 5), 3) for _ in range(n)]
        chosen, total = best_set_in_pool(gains, days, pool)
        expected, _ = _brute_force(gains, days, pool)
        assert total == pytest.approx(expected, abs=1e-9)
        assert sum(days[i] for i in chosen) <= pool
        assert total == pytest.approx(sum(gains[i] for i in chosen), abs=1e-12)


def test_knapsack_with_fractional_days_is_exact_up_to_its_resolution() -> None:
    # Rounding each run's days up to a unit never overshoots the pool, and misses only sets
    # that fit with less than one unit of slack each: brute force in the pool less n units.
    rng = random.Random(7)
    for _ in range(100):
        n = rng.randint(2, 9)
        pool = rng.uniform(5, 500)
        days = [rng.uniform(0.01, 0.6) * pool for _ in range(n)]
        gains = [rng.uniform(0, 3) for _ in range(n)]
        chosen, total = best_set_in_pool(gains, days, pool)
        assert sum(days[i] for i in chosen) <= pool
        upper, _ = _brute_force(gains, days, pool)
        lower, _ = _brute_force(gains, days, pool * (1 - n / POOL_UNITS))
        assert lower - 1e-9 <= total <= upper + 1e-9


def test_knapsack_is_not_greedy() -> None:
    # Greedy by gain per device-day takes A (7/6) and then nothing fits; B + C give 10.
    chosen, total = best_set_in_pool([7.0, 5.0, 5.0], [6.0, 5.0, 5.0], 10.0)
    assert sorted(chosen) == [1, 2] and total == 10.0


def test_best_set_and_displacement_against_brute_force() -> None:
    # 1B params at MFU 0.4 on H100: 20B tokens = 3.51 device-days (6·N·T / peak / MFU).
    rows = [_row("t20", tokens="20B", gain=1.0), _row("t40", tokens="40B", gain=1.8),
            _row("t30", tokens="30B", gain=1.5), _row("t10", tokens="10B", gain=0.4),
            _row("t60", tokens="60B", gain=3.0), _row("weak", tokens="5B", gain=0.05, sigma=1),
            _row("below", tokens="5B", gain=0.1, sigma=0.01)]
    spec = CompareSpec(candidates=rows, pool_gpu_days=10, baseline_to_beat=0.2)
    comparison = compare_candidates(spec)
    res = _by_name(comparison)
    assert res["t20"].gpu_days == pytest.approx(6 * 1e9 * 20e9 / (H100_PEAK * 0.4) / 86400)
    assert res["t60"].pool_status == "exceeds_pool" and res["t60"].displaces is None
    assert res["below"].verdict == "no-go" and res["below"].pool_status == "no_go"
    eligible = [n for n, r in res.items() if r.pool_status in ("chosen", "left_out")]
    gains = [res[n].predicted_gain for n in eligible]
    days = [res[n].gpu_days for n in eligible]
    best, best_idx = _brute_force(gains, days, 10)
    assert comparison.best_set is not None and comparison.best_set_gpu_days is not None
    assert set(comparison.best_set) == {eligible[i] for i in best_idx}
    assert comparison.best_set_gain == pytest.approx(best)
    assert comparison.best_set_gpu_days == pytest.approx(sum(days[i] for i in best_idx))
    assert comparison.pool_gpu_days_left == pytest.approx(10 - comparison.best_set_gpu_days)
    assert res["t20"].pool_share == pytest.approx(res["t20"].gpu_days / 10)
    for name, r in res.items():
        if name in comparison.best_set:
            assert r.pool_status == "chosen" and r.displaces == [] and r.gain_forgone == 0
        elif r.displaces is not None:
            # forced in: the best of the others in what it leaves of the pool
            others = [i for i, n in enumerate(eligible) if n != name]
            kept, kept_idx = _brute_force([gains[i] for i in others], [days[i] for i in others],
                                          10 - r.gpu_days)
            assert r.gain_forgone == pytest.approx(best - (r.predicted_gain + kept))
            kept_names = {eligible[others[i]] for i in kept_idx}
            assert set(r.displaces) == set(comparison.best_set) - kept_names
    assert any(r.displaces for r in res.values())  # someone displaces something


def test_horizon_excludes_runs_that_cannot_finish() -> None:
    # 1B × 20B on 8 H100 at MFU 0.4: 0.44 days of wall time; 1B × 200B: 4.4 days.
    rows = [_row("quick", gain=1.0), _row("long", tokens="200B", gain=9.0)]
    comparison = compare_candidates(CompareSpec(candidates=rows, pool_gpu_days=1000,
                                                horizon_days=2))
    res = _by_name(comparison)
    assert res["long"].wall_days == pytest.approx(
        6 * 1e9 * 200e9 / (8 * H100_PEAK * 0.4) / 86400)
    assert res["long"].fits_horizon is False and res["quick"].fits_horizon is True
    assert res["long"].pool_status == "exceeds_horizon"
    assert res["long"].displaces is None and res["long"].gain_forgone is None
    assert comparison.best_set == ["quick"]
    # the same pool without the horizon takes both
    both = compare_candidates(CompareSpec(candidates=rows, pool_gpu_days=1000))
    assert both.best_set is not None and set(both.best_set) == {"quick", "long"}
    assert both.best_set_gain == 10.0


# --- parsing ------------------------------------------------------------------------------


def test_csv_and_json_read_the_same_and_empty_cells_are_not_given() -> None:
    text = "\n".join([
        "Name, Params , Tokens,GPU,GPUs,Predicted-Gain,gain_uncertainty,MFU,price",
        "a,1B,20B,h100,8,1,0.1,,",  # mfu and price not given: prior and catalog
        "b,1.5B,\"30,000,000,000\",a100,16,1.5,0.2,0.35,$1.10",
        "",
    ])
    rows = parse_candidates(text)
    assert rows[0] == {"name": "a", "params": "1B", "tokens": "20B", "gpu": "h100",
                       "gpu_count": "8", "predicted_gain": "1", "gain_uncertainty": "0.1"}
    from_json = parse_candidates(json.dumps([
        {"name": "a", "params": "1B", "tokens": 2e10, "gpu": "h100", "gpu_count": 8,
         "predicted_gain": 1, "gain_uncertainty": 0.1, "mfu": None},
        {"name": "b", "params": 1.5e9, "tokens": "30B", "gpu": "a100", "gpus": 16,
         "predicted_gain": 1.5, "gain_uncertainty": 0.2, "mfu": 0.35, "price": "$1.10"},
    ]))
    a, b = validate_candidates(rows)
    # "a100" is the catalog's 80 GB card
    assert (a.tokens, b.tokens, b.usd_per_gpu_hour, b.gpu) == (2e10, 3e10, 1.1, "a100-80gb")
    assert validate_candidates(from_json) == [a, b]
    comparison = compare_candidates(CompareSpec(candidates=rows))
    res = _by_name(comparison)
    assert res["a"].estimate.mfu_used.origin == "prior"
    assert res["a"].estimate.price.origin == "catalog"
    assert res["b"].estimate.mfu_used.origin == "user" and res["b"].estimate.mfu == 0.35


def test_comparison_is_json_and_round_trips() -> None:
    comparison = compare_candidates(CompareSpec(
        candidates=[_row("a"), _row("b", gpu="tpu-v3", price="")], pool_gpu_days="1K"))
    data = json.loads(comparison.model_dump_json())
    assert data["candidates"][1]["gain_per_dollar"] is None  # null, never 0
    assert data["pool_gpu_days"] == 1000
    assert Comparison.model_validate_json(comparison.model_dump_json()) == comparison


def test_a_candidate_is_a_run_spec() -> None:
    spec = CompareSpec(candidates=[_row("a") | {"preset": "llama-2-7b", "params": None},
                                   _row("b")])
    assert isinstance(spec.candidates[0], Candidate)
    assert spec.candidates[0].total_params == pytest.approx(6.74e9, rel=0.01)  # Llama 2 7B


@pytest.mark.parametrize(
    ("text", "field", "value"),
    [
        (HEADER + "\na,1B,20B,h100,8,1,0.1,,\nb,1B,20B,h100,8,1,0.1,,\nc,abc,20B,h100,8,1,0.1,,",
         "line 4, column params", "abc"),  # the file's lines: the header is line 1
        (HEADER + "\na,1B,20B,h100,8,1,0.1,,\nb,1B,20B,h100,8,lots,0.1,,",
         "line 3, column predicted_gain", "lots"),
        (HEADER + "\na,1B,20B,h100,8,1,0.1,,\nb,1B,20B,h100,8,1,-0.1,,",
         "line 3, column gain_uncertainty", "-0.1"),
        (HEADER + "\na,1B,20B,h100,8,1,0.1,,\nA,1B,20B,h100,8,1,0.1,,",
         "line 3, column name", "A"),
        (HEADER + "\na,1B,20B,h100,8,1,0.1,,\nb,1B,20B,h100,,1,0.1,,",
         "line 3, column gpu_count", None),
        (HEADER + "\na,1B,20B,h100,8,1,0.1,1.5,\nb,1B,20B,h100,8,1,0.1,,",
         "line 2, column mfu", "1.5"),
        (HEADER + ",tp\na,1B,20B,h100,8,1,0.1,,,3\nb,1B,20B,h100,8,1,0.1,,,",
         "line 2, column tp", 3),
        (HEADER + "\na,1B,20B,h100,8,1,0.1,,,extra\nb,1B,20B,h100,8,1,0.1,,",
         "line 2", None),
        (HEADER.replace("mfu", "mfu_guess") + "\na,1B,20B,h100,8,1,0.1,,\nb,1B,20B,h100,8,1,0.1,,",
         "line 1, column 8", "mfu_guess"),
        (HEADER + ",name\na,1B,20B,h100,8,1,0.1,,,x\nb,1B,20B,h100,8,1,0.1,,,y",
         "line 1, column 10", "name"),
        (HEADER + "\na,1B,20B,h100,8,1,0.1,,", "candidates", "1 candidate"),
        (HEADER + "".join(f"\nr{i},1B,20B,h100,8,1,0.1,," for i in range(51)),
         "candidates", "51 candidates"),
        ('[{"name": "a"}, 3]', "candidates[1]", 3),
        ('[{"name": "a", "gpu_count": 8, "flops": 1}, {}]', "candidates[0].flops", 1),
        ('[{"name": "a", "gpu_count": true, "params": "1B", "tokens": "2B", "gpu": "h100",'
         ' "predicted_gain": 1, "gain_uncertainty": 0}, {"name": "b"}]',
         "candidates[0].gpu_count", True),
        ('{"name": "a"}', "candidates", "dict"),
        ("[1,", "candidates", None),
    ],
)
def test_bad_tables_name_row_column_and_value(text: str, field: str, value: object) -> None:
    with pytest.raises(InputError) as caught:
        validate_candidates(parse_candidates(text))
    # every bad cell is named at once (MultipleInputError); this table's among them
    named = {e.field: e for e in getattr(caught.value, "errors", (caught.value,))}
    assert field in named, str(caught.value)
    if value is not None:
        assert named[field].value == value
    assert str(named[field]).startswith(f"{field}:")
    assert str(named[field]) in str(caught.value).splitlines()


def test_unknown_column_is_named_with_a_suggestion() -> None:
    text = HEADER.replace("gpu_count", "gpu_cnt") + "\na,1B,20B,h100,8,1,0.1,,\n"
    with pytest.raises(InputError,
                       match=r"unknown column 'gpu_cnt' \(did you mean `gpu_count`\?\)"):
        parse_candidates(text)


def test_bad_gpu_names_the_row_and_suggests() -> None:
    rows = [_row("a"), _row("b", gpu="h1000")]
    with pytest.raises(UnknownAcceleratorError) as caught:
        validate_candidates(rows)
    assert caught.value.field == "candidates[1].gpu" and caught.value.value == "h1000"
    assert "h100-sxm" in caught.value.suggestions
    # through the spec it reads the same, as the CLI and the server show it
    with pytest.raises(ValidationError) as wrapped:
        CompareSpec(candidates=rows)
    assert describe_error(wrapped.value).startswith("candidates[1].gpu: 'h1000'")


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"pool_gpu_days": 0}, "pool_gpu_days"),
        ({"pool_gpu_days": True}, "pool_gpu_days"),
        ({"horizon_days": -1}, "horizon_days"),
        ({"baseline_to_beat": math.nan}, "baseline_to_beat"),
        ({"budget": 5}, "budget"),
    ],
)
def test_bad_spec_fields_are_named(extra: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        CompareSpec(candidates=[_row("a"), _row("b")], **extra)
    assert describe_error(caught.value).startswith(f"{field}:")


def test_bad_fmt_and_a_single_candidate_through_the_spec() -> None:
    with pytest.raises(InputError, match="fmt"):
        parse_candidates("[]", fmt="yaml")  # type: ignore[arg-type]
    with pytest.raises(ValidationError) as caught:
        CompareSpec(candidates=[_row("a")])
    assert describe_error(caught.value).startswith("candidates: '1 candidate'")
    # fmt="csv" reads a table that would otherwise look like JSON
    with pytest.raises(InputError) as as_csv:
        parse_candidates('[{"name": "a"}]', fmt="csv")
    assert as_csv.value.field == "line 1, column 1"


def test_every_cause_has_words_in_the_comparison() -> None:
    # A candidate the host's CPU RAM stops (QLoRA of 70B streamed from 16 GiB of RAM: the
    # priced machine's) crashed the reply; each verdict cause must have a label in the table
    from typing import get_args

    from compute_budget.prompts import render_comparison
    from compute_budget.skill.advice.findings import Cause

    ram = {"name": "ram", "preset": "llama-3.1-70b", "lora_rank": 16, "weights_bits": 4,
           "tokens": "50M", "gpu": "rtx-4090", "gpu_count": 1, "host_ram_gib": 16,
           "predicted_gain": 1.0, "gain_uncertainty": 0.1}
    comparison = compare_candidates(CompareSpec(candidates=[ram, _row("small")]))
    causes = {r.name: r.cause for r in comparison.candidates}
    assert causes["ram"] == "host_memory_does_not_fit"
    assert "ram | no-go (needs more CPU RAM than the host has)" in render_comparison(comparison)
    template = (Path(__file__).parents[2] / "src/compute_budget/prompts/templates/compare.md.j2")
    text = template.read_text()
    assert [c for c in get_args(Cause) if f'"{c}":' not in text] == []


def test_a_candidate_costing_what_the_top_one_costs_reads_the_same() -> None:
    # it read "b $0 more"
    from compute_budget.prompts import render_comparison

    comparison = compare_candidates(CompareSpec(candidates=[_row("a"), _row("b", gain=0.5)]))
    assert "each run's dollars against the top one's: b the same." in render_comparison(
        comparison)


def test_a_budget_is_said_to_cap_each_run_not_the_set() -> None:
    # a reviewer read "$20k" as a cap on the set of runs; it caps each run alone
    from compute_budget.prompts import render_comparison

    rows = [_row("a"), _row("b", params="3B", tokens="60B", gain=2.0)]
    text = render_comparison(compare_candidates(CompareSpec(candidates=rows,
                                                            budget_usd=20_000)))
    assert "The budget of $20,000 caps each run alone, not the set: a pool of device-days caps " \
           "the set." in text
    assert "caps each run alone" not in render_comparison(
        compare_candidates(CompareSpec(candidates=rows)))


def test_a_pool_over_several_device_types_says_it_counts_them_alike() -> None:
    # "Running a100-mid displaces mid" read as if A100 and H100 device-days were one resource;
    # the best-set line now says the pool counts them alike (review helper-57)
    from compute_budget.prompts import render_comparison

    mixed = compare_candidates(CompareSpec(
        candidates=[_row("a"), _row("b", gpu="a100-80gb")], pool_gpu_days=1000))
    said = "The pool counts a device-day of each type (H100 SXM, A100 80GB SXM) as one"
    assert said in render_comparison(mixed)
    alike = compare_candidates(CompareSpec(candidates=[_row("a"), _row("b")], pool_gpu_days=1000))
    assert "The pool counts" not in render_comparison(alike)


def test_a_quantized_candidate_says_its_dequantisation_is_not_priced() -> None:
    # A QLoRA row costs what the LoRA row costs; the estimate says the 4-bit base's
    # dequantisation is not priced, and the comparison did not (review helper-56, finding 7)
    from compute_budget.prompts import render_comparison

    def tune(name: str, bits: int | None) -> dict[str, object]:
        row: dict[str, object] = {"name": name, "preset": "llama-3.1-8b", "tokens": "500M",
                                  "gpu": "a100-40gb", "gpu_count": 8, "predicted_gain": 2,
                                  "gain_uncertainty": 0.5, "lora_rank": 16, "kind": "fine-tune"}
        return row if bits is None else {**row, "weights_bits": bits}

    text = render_comparison(compare_candidates(CompareSpec(
        candidates=[tune("lora", None), tune("qlora", 4)])))
    assert "qlora: the dequantisation of its quantized base is not priced" in text
    plain = render_comparison(compare_candidates(CompareSpec(
        candidates=[tune("lora", None), tune("other", None)])))
    assert "dequantisation" not in plain


def test_a_candidate_priced_from_runs_on_another_generation_says_so() -> None:
    # compare read "0.08 (fitted to your runs)" for an A100 candidate fitted to H100 runs; the
    # other replies say the level was carried (review helper-63, finding 7)
    from compute_budget.prompts import render_comparison

    runs = [{"params": "7B", "tokens": "300B", "gpu": "h100", "gpu_count": 64,
             "gpu_hours": 29000},
            {"params": "3B", "tokens": "200B", "gpu": "h100", "gpu_count": 32, "gpu_hours": 8000}]
    text = render_comparison(compare_candidates(CompareSpec(candidates=[
        {**_row("a", gpu="a100-80gb", mfu=""), "calibration": runs},
        {**_row("b", mfu=""), "calibration": runs}])))
    assert "(carried from your runs on H100 SXM)" in text
    assert text.count("(fitted to your runs)") == 1  # b ran where its runs did


# --- the gain as the metric itself ---------------------------------------------------------


def test_a_candidate_takes_the_metric_pair_as_the_verdict_does() -> None:
    # SKILL.md step 3 offers metric_now/metric_expected for the gain; compare refused them as
    # unknown columns (review of the doors' wording, item 3). A loss from 2.10 to 2.05 is a
    # gain of 0.05, read_gain's ±(expected − now) with higher_is_better false.
    delta = _row("delta", gain=0.05, sigma=0.01)
    pair = {k: v for k, v in _row("pair", sigma=0.01).items() if k != "predicted_gain"} | {
        "metric_now": 2.10, "metric_expected": "2.05", "higher_is_better": "false"}
    rows = _by_name(compare_candidates(CompareSpec(candidates=[delta, pair])))
    assert rows["pair"].predicted_gain == pytest.approx(0.05)
    assert rows["pair"].decision.gain_source == "metric"
    assert rows["pair"].p_beats_baseline == pytest.approx(rows["delta"].p_beats_baseline)
    assert rows["pair"].verdict == rows["delta"].verdict
    text = HEADER.replace("predicted_gain", "metric_now,metric_expected,higher_is_better")
    from_csv = validate_candidates(parse_candidates(
        text + "\na,1B,20B,h100,8,2.10,2.05,false,0.01,0.4,2\nb,1B,20B,h100,8,55,57,,1,0.4,2"))
    assert [(c.metric_now, c.metric_expected, c.higher_is_better) for c in from_csv] == [
        (2.10, 2.05, False), (55, 57, True)]


@pytest.mark.parametrize(("cells", "field"), [
    ({"metric_now": 2.1}, "metric_expected"),  # half a pair
    ({"metric_now": 2.1, "metric_expected": 2.0, "predicted_gain": 0.1}, "predicted_gain"),
    ({}, "predicted_gain"),  # neither form
])
def test_a_gain_given_two_ways_or_half_a_pair_is_named(cells: dict[str, object],
                                                       field: str) -> None:
    row = {k: v for k, v in _row("b").items() if k != "predicted_gain"} | cells
    with pytest.raises(InputError) as caught:
        validate_candidates([_row("a"), row])
    assert caught.value.field == f"candidates[1].{field}", str(caught.value)


def test_a_missing_gain_is_named_beside_the_other_bad_cells() -> None:
    # the check of the gain runs once the fields are valid: a row without one and with a bad
    # device still names both in one error
    row = {k: v for k, v in _row("b", gpu="h1000").items() if k != "predicted_gain"}
    with pytest.raises(InputError) as caught:
        validate_candidates([_row("a"), row])
    assert [e.field for e in getattr(caught.value, "errors", ())] == [
        "candidates[1].gpu", "candidates[1].predicted_gain"]
