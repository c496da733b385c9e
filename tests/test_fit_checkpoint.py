"""`fit` and `decide` give one loss check from one rule (the fit's kill_loss): a fit in compute
alone gives no level at a checkpoint, and says so; a fit that switched from the params and tokens
the points gave says why; a two-variable fit's checkpoint level carries the verdict's caveat; an
interval is never shown as a point it is not (review of 7a38f87, FINDINGS.md section 2).

The points come from Hoffmann et al. 2022 ("Chinchilla"), eq. 2 with their fit:
L(N, D) = E + A/N^α + B/D^β, E = 1.69, A = 406.4, B = 410.7, α = 0.34, β = 0.28."""

import json
import re
from pathlib import Path

import pytest

from tests.conftest import Cli

E, A, B, ALPHA, BETA = 1.69, 406.4, 410.7, 0.34, 0.28


def _chinchilla(n: float, d: float) -> float:
    return E + A / n**ALPHA + B / d**BETA


# The reviewer's /tmp/cbw/pts3.csv: six runs at 20 tokens per parameter, losses to 5 decimals.
PTS3 = """params,tokens,loss
20000000,400000000,4.63151
50000000,1000000000,3.91047
100000000,2000000000,3.48587
200000000,4000000000,3.14309
400000000,8000000000,2.86622
800000000,16000000000,2.64251
"""
TARGET = ("--target-params", "7B", "--target-tokens", "140B", "--baseline-loss", "2.3")
RUN = ("--params", "7B", "--tokens", "140B", "--gpu", "h100", "--gpus", "64")
NO_LEVEL = ("A fit in compute alone gives no level at a checkpoint: each small run was a "
            "complete run of its own size, and a checkpoint of this one (a larger model on "
            "fewer tokens) sits above their curve.")
DECAYED = ("measured on a checkpoint whose learning rate has decayed (or after a short "
           "cooldown), as the small runs' were")


def _grid(digits: int | None) -> str:
    """Fifteen runs, sizes 20M-320M each at 5, 20 and 80 tokens per parameter (N and D varied
    independently), on Hoffmann et al.'s fit; losses rounded to ``digits`` decimals."""
    rows = ["params,tokens,loss"]
    for n in (20e6, 40e6, 80e6, 160e6, 320e6):
        for r in (5, 20, 80):
            loss = _chinchilla(n, r * n)
            rows.append(f"{n:.0f},{r * n:.0f},{loss if digits is None else round(loss, digits)}")
    return "\n".join(rows) + "\n"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _bullet(out: str, start: str) -> str:
    (line,) = [x for x in out.splitlines() if x.startswith(start)]
    return line


def test_a_fit_in_compute_alone_gives_no_checkpoint_level_and_says_why(cli: Cli,
                                                                       tmp_path: Path) -> None:
    pts3 = _write(tmp_path, "pts3.csv", PTS3)
    # the healthy 7B run at 14B tokens: L(7B, 14B) = 2.465; fit said "above 2.39, stop"
    assert _chinchilla(7e9, 14e9) == pytest.approx(2.465, abs=5e-4)
    code, out, _ = cli("fit", "--points", str(pts3), *TARGET)
    assert code == 0 and out.startswith("### Scaling fit: loss = E + a·C^−b on 6 small runs")
    switched = _bullet(out, "- **Fitted in compute alone, not in L(N, D):**")
    assert "your runs give params and tokens, but the runs' tokens follow from their " \
           "parameters" in switched and "a larger model cannot be told from more tokens" \
           in switched
    check = _bullet(out, "- **Loss check for the long run, by its end:** loss at most ")
    assert NO_LEVEL in check and "Seven small runs or more" in check
    assert "at 10% of its" not in out and "2.39 – 2.39" not in out
    # the bar at the end lies above the generating law's loss at the run itself (2.1835)
    bar = float(re.search(r"at most ([\d.]+)", check).group(1))  # type: ignore[union-attr]
    assert bar > _chinchilla(7e9, 140e9)
    code, raw, _ = cli("fit", "--points", str(pts3), *TARGET, "--json")
    assert code == 0
    data = json.loads(raw)
    assert data["form"] == "compute" and data["notes"] == ["tokens_follow_params"]
    assert data["kill_loss"] is None
    # decide on the same points: the same rule, in the same words
    code, verdict, _ = cli("decide", *RUN, "--points", str(pts3), "--baseline-loss", "2.3")
    (end,) = [x for x in verdict.splitlines() if x.startswith("- By the end: loss at most ")]
    assert code == 0 and NO_LEVEL in end
    assert end.removeprefix("- By the end: ") == check.removeprefix(
        "- **Loss check for the long run, by its end:** ")
    assert "in compute alone (the runs' tokens follow from their parameters" in verdict


def test_a_two_variable_checkpoint_level_carries_the_verdicts_caveat(cli: Cli,
                                                                     tmp_path: Path) -> None:
    grid = _write(tmp_path, "grid.csv", _grid(4))  # to 4 decimals, as a log reports a loss
    code, raw, _ = cli("fit", "--points", str(grid), *TARGET, "--json")
    assert code == 0
    data = json.loads(raw)
    assert data["form"] == "params_tokens" and data["notes"] == []
    kill = data["kill_loss"]
    assert kill["tokens"] == pytest.approx(14e9)
    assert kill["expected"] == pytest.approx(_chinchilla(7e9, 14e9), abs=1e-3)
    code, out, _ = cli("fit", "--points", str(grid), *TARGET)
    assert code == 0
    check = _bullet(out, "- **Loss check for the long run:** at 14B tokens (10% of them, ")
    assert DECAYED in check and "past it, the run is off its curve: stop and look." in check
    code, verdict, _ = cli("decide", *RUN, "--points", str(grid), "--baseline-loss", "2.3")
    assert code == 0
    (kill_line,) = [x for x in verdict.splitlines() if x.startswith("- At 14B tokens")]
    assert DECAYED in kill_line
    # the same level and expectation, written the same way in both replies
    level = re.search(r"loss at most (\S+), the edge of the scaling fit's interval there "
                      r"\(it expects (\S+)\)", check)
    assert level is not None and level.group(0) in kill_line
    # an interval 0.0002 wide: its ends are written apart, never as one number
    assert level.group(1) != level.group(2)
    assert float(level.group(1)) == pytest.approx(kill["interval"][1], abs=1e-4)


def test_points_on_the_curve_give_no_level_rather_than_a_range_of_zero_width(
        cli: Cli, tmp_path: Path) -> None:
    # the same grid unrounded: no spare scatter to measure the noise by (exact_fit), so no
    # interval, and the loss check names no level at all
    exact = _write(tmp_path, "exact.csv", _grid(None))
    code, out, _ = cli("fit", "--points", str(exact), *TARGET)
    assert code == 0 and "**Uncertainty unknown:** the 15 points lie on the curve" in out
    check = _bullet(out, "- **Loss check for the long run:** at 14B tokens")
    assert check.endswith("the fit expects loss 2.465; without an interval there, no level "
                          "says the run is off its curve.")
    assert " – " not in check and "at most" not in check
