"""`compute-budget compare FILE` (issue 10): candidates side by side from a CSV or JSON file."""

import json
import os
from pathlib import Path

import pytest

from tests.conftest import Cli

CSV = """name,params,tokens,gpu,gpu_count,predicted_gain,gain_uncertainty
bigger-model,13B,260B,h100,64,2.0,0.8
more-data,7B,500B,h100,64,1.5,0.4
distill,3B,300B,a100,32,0.8,0.3
"""


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "candidates.csv"
    path.write_text(CSV)
    return path


def test_json_is_the_comparison_with_the_ranked_candidates(cli: Cli,
                                                           table: Path) -> None:
    code, out, err = cli("compare", str(table), "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    rows = data["candidates"]
    assert data["top"] == rows[0]["name"]
    # distill runs on A100s at $1.79/h against the H100's $3.99 (catalog 2026-12-01): first
    assert [r["name"] for r in rows] == ["distill", "bigger-model", "more-data"]
    ratios = [r["gain_per_dollar"] for r in rows]
    assert ratios == sorted(ratios, reverse=True)
    for r in rows:  # the ratio is the gain over the cost with the failure budget
        assert r["gain_per_dollar"] == pytest.approx(
            r["predicted_gain"] / r["dollar_cost_with_failures"])
        assert r["verdict"] in ("go", "marginal", "no-go")


def test_the_same_candidates_as_json_give_the_same_ranking(
        cli: Cli, table: Path, tmp_path: Path) -> None:
    lines = CSV.strip().splitlines()
    header = lines[0].split(",")
    items = [dict(zip(header, line.split(","), strict=True)) for line in lines[1:]]
    path = tmp_path / "candidates.json"
    path.write_text(json.dumps(items))
    _, from_json, _ = cli("compare", str(path), "--json")
    _, from_csv, _ = cli("compare", str(table), "--json")
    assert json.loads(from_json) == json.loads(from_csv)


def test_markdown_with_a_pool_names_the_best_set(cli: Cli,
                                                 table: Path) -> None:
    code, out, _ = cli("compare", str(table), "--pool-gpu-days", "2000",
                       "--horizon-days", "30")
    assert code == 0
    assert out.startswith("### 3 candidate runs, ranked by gain per dollar")
    assert "**Best use of the pool (2,000 device-days within 30 days):** distill, " \
           "bigger-model, a total gain of 2.8" in out
    assert "Running **more-data** displaces bigger-model" in out


def test_a_bad_cell_names_its_row_and_column(cli: Cli,
                                             tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_text(CSV.replace("7B,500B", "-7B,500B"))
    code, out, err = cli("compare", str(path))
    assert (code, out) == (2, "")
    # the file's line (the header is line 1), not the 0-based candidates[1] (item 7)
    assert err.startswith("error: line 3, column params: ")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a FIFO")
def test_a_fifo_or_a_missing_file_is_refused_at_once(cli: Cli,
                                                     tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    code, _, err = cli("compare", str(fifo))
    assert code == 2 and "not a regular file" in err and err.startswith("error: FILE: ")
    code, _, err = cli("compare", str(tmp_path / "missing.csv"))
    assert code == 2 and err.startswith("error: FILE: ")


def test_with_a_baseline_the_ranking_is_by_net_gain(cli: Cli,
                                                    tmp_path: Path) -> None:
    """A cheap run whose gain (0.3) is below the baseline (0.5) has the best gross gain per
    dollar but a negative net one: it ranks last, as its no-go verdict says."""
    path = tmp_path / "c.csv"
    path.write_text("name,params,tokens,gpu,gpu_count,predicted_gain,gain_uncertainty\n"
                    "cheap-small,1B,20B,h100,8,0.3,0.1\nbig,13B,260B,h100,64,2.0,0.5\n")
    _, out, _ = cli("compare", str(path), "--json")
    gross = {r["name"]: r["gain_per_dollar"] for r in json.loads(out)["candidates"]}
    assert gross["cheap-small"] > gross["big"]
    _, out, _ = cli("compare", str(path), "--baseline", "0.5", "--json")
    rows = json.loads(out)["candidates"]
    assert [r["name"] for r in rows] == ["big", "cheap-small"]
    assert rows[1]["net_gain_per_dollar"] < 0 and rows[1]["verdict"] == "no-go"


def test_json_with_a_pool_gives_the_best_set(cli: Cli, table: Path) -> None:
    """``--json`` prints the whole Comparison (review 2, finding 6: it printed the bare list,
    without the best set the markdown names)."""
    code, out, _ = cli("compare", str(table), "--pool-gpu-days", "2000", "--horizon-days", "30",
                       "--json")
    assert code == 0
    data = json.loads(out)
    assert {"candidates", "top", "best_set", "best_set_gain", "best_set_gpu_days",
            "pool_gpu_days_left", "pool_gpu_days", "horizon_days"} <= set(data)
    # the same best set the markdown names (test_markdown_with_a_pool_names_the_best_set)
    assert data["best_set"] == ["distill", "bigger-model"]
    rows = {r["name"]: r for r in data["candidates"]}
    assert data["best_set_gain"] == pytest.approx(sum(rows[n]["predicted_gain"]
                                                      for n in data["best_set"]))  # 0.8 + 2.0
    assert data["best_set_gpu_days"] == pytest.approx(sum(rows[n]["gpu_days"]
                                                          for n in data["best_set"]))
    assert data["pool_gpu_days_left"] == pytest.approx(2000 - data["best_set_gpu_days"])


# Review 2, finding 3: a QLoRA candidate (4-bit base) from a CSV file was refused.
QLORA = """\
name,preset,tokens,gpu,gpu_count,predicted_gain,gain_uncertainty,lora_rank,weights_bits,seq_len
qlora70,llama-3-70b,20M,rtx-4090,1,1.0,0.3,16,4,2048
lora8,llama-3-8b,20M,rtx-4090,1,0.8,0.3,16,16,2048
"""


def test_a_qlora_candidate_reads_from_csv_as_from_json(cli: Cli, tmp_path: Path) -> None:
    csv_path = tmp_path / "c.csv"
    csv_path.write_text(QLORA)
    code, from_csv, err = cli("compare", str(csv_path), "--json")
    assert (code, err) == (0, "")
    lines = QLORA.strip().splitlines()
    header = lines[0].split(",")
    items = [{k: (int(v) if k in ("gpu_count", "lora_rank", "weights_bits", "seq_len")
                  else float(v) if k.endswith(("gain", "uncertainty")) else v)
              for k, v in zip(header, line.split(","), strict=True)} for line in lines[1:]]
    assert items[0]["weights_bits"] == 4
    json_path = tmp_path / "c.json"
    json_path.write_text(json.dumps(items))
    _, from_json, _ = cli("compare", str(json_path), "--json")
    assert json.loads(from_csv) == json.loads(from_json)
    rows = {r["name"]: r for r in json.loads(from_csv)["candidates"]}
    # a 70B base in 16 bits does not fit one 24 GB card; at 4 bits it does (QLoRA)
    assert rows["qlora70"]["can_run"] and rows["qlora70"]["verdict"] == "go"
    _, sixteen, _ = cli("compare", str(_written(tmp_path, QLORA.replace(",16,4,", ",16,16,"))),
                        "--json")
    assert not {r["name"]: r for r in json.loads(sixteen)["candidates"]}["qlora70"]["can_run"]


def _written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "other.csv"
    path.write_text(text)
    return path


def test_every_bad_cell_of_every_candidate_in_one_error(cli: Cli, tmp_path: Path) -> None:
    """Review 1, finding 7: only the first bad argument was named; four are named at once."""
    path = tmp_path / "c.json"
    path.write_text(json.dumps(BAD_CANDIDATES))
    code, out, err = cli("compare", str(path))
    assert (code, out) == (2, "") and "Traceback" not in err
    lines = err.removeprefix("error: ").splitlines()
    assert {line.split(": ")[0] for line in lines} == set(BAD_FIELDS)
    for line in lines:
        field = line.split(": ")[0]
        assert f"{field}: {BAD_FIELDS[field]} is not allowed; " in line, line
    assert "did you mean 'rtx-6000-ada'" in err and "`compute-budget gpus`" in err


BAD_CANDIDATES = [
    {"name": "a", "params": "1B", "tokens": "20B", "gpu": "A6000 Ada", "gpu_count": 0,
     "predicted_gain": 1, "gain_uncertainty": 0.5, "usd_per_gpu_hour": -1},
    {"name": "b", "params": "1B", "tokens": "20B", "gpu": "h100", "gpu_count": 1,
     "predicted_gain": 1, "gain_uncertainty": -0.5},
]
BAD_FIELDS = {"candidates[0].gpu": "'A6000 Ada'", "candidates[0].gpu_count": "0",
              "candidates[0].usd_per_gpu_hour": "-1",
              "candidates[1].gain_uncertainty": "-0.5"}


def test_a_file_keeps_the_words_of_a_table(cli: Cli, tmp_path: Path) -> None:
    # the CLI's file is a table: a missing cell is a value in its column, the count is of data
    # rows (the MCP list names the candidate instead: tests/tools/test_compare_errors_mcp.py)
    path = tmp_path / "c.csv"
    path.write_text(CSV.replace(",1.5,0.4", ",,0.4"))
    code, _, err = cli("compare", str(path))
    assert code == 2 and "line 3, column predicted_gain: required but missing; a value in " \
                         "this column (the " \
                         "expected gain in your metric as a delta, higher is better; or " \
                         "metric_now and metric_expected)" in err, err
    path.write_text(CSV.splitlines()[0] + "\n" + CSV.splitlines()[1] + "\n")
    code, _, err = cli("compare", str(path))
    assert code == 2 and "from 2 to 50 candidates (data rows" in err, err


def test_a_csv_row_is_named_by_its_line_in_the_file(cli: Cli, tmp_path: Path) -> None:
    # a blank line before the header and one between rows: the line a reader counts, 1-based
    # (candidates[1] was the second data row, the file's 5th line here; item 7)
    lines = CSV.replace("7B,500B", "-7B,500B").splitlines()
    path = tmp_path / "c.csv"
    path.write_text("\n" + "\n\n".join(lines[:2]) + "\n" + "\n".join(lines[2:]) + "\n")
    code, _, err = cli("compare", str(path))
    assert code == 2 and err.startswith("error: line 5, column params: '-7B' is not allowed"), err
