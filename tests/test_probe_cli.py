"""Issue 20 at the command line: ``--probe FILE`` on estimate, decide, split and plan; the
``probe`` command's errors and its output file. (The measurement itself, with torch, is tested
in ``tests/probe/``.)"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from compute_budget.cli.output import write_probe
from compute_budget.skill import InputError
from tests.conftest import Cli

FIXTURE = str(Path(__file__).parent / "fixtures" / "probe_h100_llama-3.2-1b.json")
RUN = ("--preset", "llama-3.2-1b", "--tokens", "100B")


@pytest.mark.parametrize("argv", [
    ("estimate", *RUN, "--gpu", "h100-sxm", "--gpus", "8"),
    ("decide", *RUN, "--gpu", "h100-sxm", "--gpus", "8", "--gain", "1", "--uncertainty", "0.5"),
    ("split", "--budget-usd", "50000", "--gpu", "h100-sxm"),
    ("plan", *RUN, "--deadline-days", "10", "--gpu-types", "h100-sxm"),
])
def test_every_pricing_command_takes_the_probe(cli: Cli, argv: tuple[str, ...]) -> None:
    code, out, err = cli(*argv, "--probe", FIXTURE, "--json")
    assert code == 0, err
    text = json.dumps(json.loads(out))
    assert '"step_mfu": 0.42' in text and '"measured_at": "2026-12-01"' in text


def test_the_estimate_lines_say_measured(cli: Cli) -> None:
    code, out, err = cli("estimate", *RUN, "--gpu", "h100-sxm", "--gpus", "8", "--probe", FIXTURE)
    assert code == 0, err
    assert "- MFU: 0.42, measured on 1 × NVIDIA H100 80GB HBM3, 2026-12-01" in out
    assert "activations measured on 1 × NVIDIA H100 80GB HBM3" in out


def test_a_file_that_is_no_probe_is_named_without_its_contents(cli: Cli, tmp_path: Path) -> None:
    secret = tmp_path / "token.txt"
    secret.write_text("hf_SECRETTOKEN1234\n")
    code, _, err = cli("estimate", *RUN, "--gpu", "h100-sxm", "--gpus", "8",
                       "--probe", str(secret))
    assert code == 2 and "--probe" in err and "SECRET" not in err
    damaged = tmp_path / "probe.json"
    damaged.write_text(json.dumps({**json.loads(Path(FIXTURE).read_text()), "step_time_s": -1}))
    code, _, err = cli("estimate", *RUN, "--gpu", "h100-sxm", "--gpus", "8",
                       "--probe", str(damaged))
    assert code == 2 and "step_time_s" in err and "Traceback" not in err


def test_a_probe_of_another_device_is_refused_with_the_reason(cli: Cli) -> None:
    code, _, err = cli("estimate", *RUN, "--gpu", "a100", "--gpus", "8", "--probe", FIXTURE)
    assert code == 2
    assert "--probe" in err and "a probe prices only the device it ran on" in err


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None,
                    reason="torch is installed here: the probe would run")
def test_the_probe_without_its_extra_names_the_extra(cli: Cli) -> None:
    code, out, err = cli("probe", "--preset", "gpt2", "--seq-len", "128")
    assert code == 2 and out == ""
    assert "compute-budget[probe]" in err and "Traceback" not in err


@pytest.mark.parametrize(("flags", "words"), [
    (("--steps", "0"), "--steps: '0' is not allowed; must be ≥ 1"),
    (("--micro-batch", "0"), "--micro-batch: '0' is not allowed; must be ≥ 1"),
    (("--device", "gpu please"), "--device: 'gpu please' is not allowed; a torch device name"),
    (("--precision", "fp8"), "--precision: invalid choice: 'fp8'"),
])
def test_the_probe_commands_bad_flags_are_named(cli: Cli, flags: tuple[str, ...],
                                                words: str) -> None:
    """Checked before anything is built: no torch needed to hear what is wrong."""
    code, out, err = cli("probe", "--preset", "gpt2", "--seq-len", "128", *flags)
    assert code == 2 and out == "" and words in err and "Traceback" not in err


def test_the_probe_command_checks_its_model_first(cli: Cli) -> None:
    code, _, err = cli("probe", "--seq-len", "128")
    assert code == 2 and "a preset, a config or a Hugging Face model id" in err
    code, _, err = cli("probe", "--preset", "gpt2", "--seq-len", "4096")
    assert code == 2 and "--seq-len" in err


def test_the_probe_file_is_written_only_where_it_may_be(tmp_path: Path) -> None:
    text = Path(FIXTURE).read_text()
    out = tmp_path / "probe.json"
    write_probe(str(out), text)
    write_probe(str(out), text)  # an earlier probe's file is replaced
    assert json.loads(out.read_text())["format"] == "compute-budget-probe/1"
    other = tmp_path / "data.json"
    other.write_text('{"keep": true}')
    with pytest.raises(InputError, match=r"out: .* a new file or a probe file"):
        write_probe(str(other), text)
    assert other.read_text() == '{"keep": true}'
    write_probe(str(other), text, force=True)
    assert "compute-budget-probe/1" in other.read_text()
