
"""README examples are run: the first command's output and the library example's results."""

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from compute_budget.cli import main

README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def test_first_screen_shows_the_two_commands() -> None:
    first = _blocks("bash")[0].strip().splitlines()
    assert first[0].startswith("uv run compute-budget estimate ")
    assert first[1] == "uv run pytest"
    assert "pip install uv" in README.split("```")[0]


def test_first_command_output_matches_readme() -> None:
    command = _blocks("bash")[0].strip().splitlines()[0]
    argv = shlex.split(command)[3:]  # drop "uv run compute-budget"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    assert out.getvalue().strip() == _blocks("markdown")[0].strip()


def test_library_example_prints_what_readme_says() -> None:
    code = _blocks("python")[0]
    expected = [line[2:] for line in code.splitlines() if line.startswith("# ")]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue().strip().splitlines() == expected


def test_ci_runs_the_readme_test_commands() -> None:
    """CI runs the README's test command as it stands, then the slow and external tests."""
    ci = (Path(__file__).parent.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r'^"\$\{UV\[@\]\}" run pytest$', ci, flags=re.MULTILINE)
    assert '"${UV[@]}" run pytest -m "slow or external"' in ci
    assert "uv run pytest\n" in README and 'uv run pytest -m "slow or external"' in README


@pytest.mark.slow
def test_readme_accuracy_table_is_the_benchmarks() -> None:
    from benchmarks.accuracy import render, run_benchmark

    table = re.search(r"<!-- accuracy-summary -->\n(.*?)\n<!-- /accuracy-summary -->", README,
                      flags=re.DOTALL)
    assert table, "README lacks the accuracy summary"
    assert table.group(1).strip() in render(run_benchmark())


def test_readme_narayanan_example_prints_what_it_says() -> None:
    block = next(b for b in _blocks("bash") if "gpt3-175b" in b)
    command, _, comment = block.replace("\\\n", " ").partition("#")
    argv = shlex.split(command)[3:]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    days = re.search(r"([\d.]+) days", comment)
    assert days and f"({days.group(1)} days)" in out.getvalue()


def test_readme_spot_checks_of_two_large_runs() -> None:
    # README "How accurate it is": the size term brings the largest published runs inside
    # their bands (Llama 2 70B 1.6% under, Llama 3.1 405B 3.6% over its reported hours, on the
    # 114-row calibration set; 1.3% and 9.9% over on the 107-row set).
    from compute_budget import RunSpec, estimate_run

    assert "Llama 2 70B 1.6% under" in README and "Llama 3.1 405B 3.6% over" in README
    llama2 = estimate_run(RunSpec(params="70B", tokens="2T", gpu="a100", gpu_count=2048))
    assert abs(llama2.gpu_hours / 1_720_320 - 1 + 0.016) < 0.005  # Touvron et al. 2023, Table 2
    llama31 = estimate_run(RunSpec(params="405B", tokens="15.6T", gpu="h100", gpu_count=16384))
    assert abs(llama31.gpu_hours / 30.84e6 - 1 - 0.036) < 0.005  # Llama 3.1 model card
    for run, reported in ((llama2, 1_720_320), (llama31, 30.84e6)):
        low, high = run.gpu_hours_range
        assert low < reported < high


def test_readme_activation_table_is_the_measurement() -> None:
    from benchmarks.activation_table import render

    table = re.search(r"<!-- activation-table -->\n(.*?)\n<!-- /activation-table -->", README,
                      flags=re.DOTALL)
    assert table, "README lacks the measured-versus-formula table"
    assert table.group(1).strip() == render().strip()
