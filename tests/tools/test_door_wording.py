"""Each door names arguments its own way (a CLI user's review): the command line its flags
(``--flash-attention``, ``--experts-per-token``, ``--price``), an assistant the tool's arguments
(``flash_attention``, ``experts_per_token``, ``usd_per_gpu_hour``). The review found the
arguments' names in the CLI's replies, errors and help; each case here is checked at both doors.
"""

import argparse
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from compute_budget.cli import build_parser, main
from compute_budget.cli.parser import flag_names
from compute_budget.prompts import arg, naming
from compute_budget.prompts.naming import CLI_RENAMED, cli_flag
from compute_budget.skill.errors import rename_fields
from tests.conftest import Cli

pytestmark = pytest.mark.anyio

MOE = {"params": "47B", "active_params": "13B", "tokens": "1T", "gpu": "h100", "gpu_count": 64}
MOE_FLAGS = ["--params", "47B", "--active-params", "13B", "--tokens", "1T", "--gpu", "h100",
             "--gpus", "64"]
GEMMA = {"preset": "gemma-2-9b", "gpu": "a100", "gpu_count": 8}
RUNS = [{"params": "7B", "tokens": "100B", "gpu": "h100", "gpu_hours": 20000},
        {"params": "7B", "tokens": "200B", "gpu": "h100", "gpu_hours": 41000},
        {"params": "13B", "tokens": "100B", "gpu": "h100", "gpu_hours": 38000}]
COMMANDS = ("estimate", "decide", "alternatives", "memory", "split", "compare", "fit", "optimal",
            "plan", "gpus", "params", "probe")


async def _call(client: Client, tool: str, arguments: dict[str, Any],
                error: bool = False) -> str:
    result = await client.call_tool(tool, arguments)
    text = "\n".join(block.text for block in result.content)  # type: ignore[union-attr]
    assert result.is_error == error, text
    return text


def _help(command: str, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    return " ".join(capsys.readouterr().out.split())  # argparse wraps lines


def test_a_moe_whose_experts_were_derived_asks_for_the_flags(cli: Cli) -> None:
    code, out, _ = cli("estimate", *MOE_FLAGS)
    assert code == 0
    assert ("assumed from --params and --active-params (give --experts and "
            "--experts-per-token)") in out
    assert "experts_per_token" not in out and "active_params" not in out
    code, out, _ = cli("memory", "--params", "47B", "--active-params", "13B", "--gpu", "h100",
                       "--gpus", "8")
    assert code == 0 and "both assumed (give --experts and --experts-per-token)" in out
    assert "experts_per_token" not in out and "active_params" not in out


async def test_an_assistant_is_asked_for_the_arguments_of_a_moe(client: Client) -> None:
    text = await _call(client, "estimate_run_cost", MOE)
    assert "assumed from params and active_params (give experts and experts_per_token)" in text
    assert "--experts" not in text
    text = await _call(client, "estimate_memory", {"params": "47B", "active_params": "13B",
                                                   "gpu": "h100", "gpu_count": 8})
    assert "both assumed (give experts and experts_per_token)" in text
    assert "(or layers, hidden and heads)" in text and "--experts" not in text


def test_memory_names_the_attention_and_stack_flags(cli: Cli) -> None:
    code, out, _ = cli("memory", "--preset", "gemma-2-9b", "--gpu", "a100", "--gpus", "8")
    assert code == 0
    assert "(set --flash-attention to count FlashAttention-2, which keeps none)" in out
    assert "Choose the other stack with `--stack`." in out
    assert "flash_attention" not in out and "stack setting" not in out


async def test_memory_names_the_attention_and_stack_arguments(client: Client) -> None:
    text = await _call(client, "estimate_memory", GEMMA)
    assert "(set flash_attention to count FlashAttention-2, which keeps none)" in text
    assert "Choose the other stack with `stack`." in text
    assert "--flash-attention" not in text and "--stack" not in text


def test_the_defaults_used_are_flags_at_the_command_line(cli: Cli) -> None:
    code, out, _ = cli("estimate", *MOE_FLAGS, "--detail", "full")
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("- Defaults used: "))
    assert line.startswith("- Defaults used: --mfu=0.213 (calibrated prior); --price=3.99 "
                           "(catalog); --precision=bf16 (device default); --seq-len=4096")
    assert "--zero/--tp/--pp/--ep/--recompute/--offload=searched" in line
    assert not re.search(r"(?<!-)\b(mfu|usd_per_gpu_hour|seq_len)=", line)


async def test_the_defaults_used_are_arguments_for_an_assistant(client: Client) -> None:
    text = await _call(client, "estimate_run_cost", {**MOE, "detail": "full"})
    assert "Defaults used: mfu=0.213 (calibrated prior); usd_per_gpu_hour=3.99 (catalog)" in text
    assert "zero/tp/pp/ep/recompute/offload=searched" in text and "--price" not in text


@pytest.mark.parametrize(("flags", "arguments", "said", "meant"), [
    (["--ep", "3"], {"ep": 3}, "error: --ep: 3 is not allowed; a divisor of the --experts (64 "
     "derived from --params and --active-params: give --experts)",
     "ep: 3 is not allowed; a divisor of the experts (64 derived from params and active_params: "
     "give experts)"),
    (["--layers", "32", "--hidden", "4096", "--heads", "30"],
     {"layers": 32, "hidden": 4096, "heads": 30},
     "error: --heads: 30 is not allowed; a divisor of --hidden (4096)",
     "heads: 30 is not allowed; a divisor of hidden (4096)"),
    (["--model", "../../etc/passwd"], {"model": "../../etc/passwd"},
     "a Hub id, not a file: give a local config.json as --config;",
     "a Hub id, not a file: give a local config.json as config;"),
])
async def test_errors_name_flags_at_the_command_line_and_arguments_over_mcp(
        cli: Cli, client: Client, flags: list[str], arguments: dict[str, Any], said: str,
        meant: str) -> None:
    code, _, err = cli("estimate", *MOE_FLAGS, *flags)
    assert code == 2 and said in err, err
    text = await _call(client, "estimate_run_cost", {**MOE, **arguments}, error=True)
    assert meant in text and "--" not in text.replace("no '--'", ""), text


def test_runs_with_a_given_mfu_name_the_file_and_both_flags(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "good.csv"
    path.write_text("params,tokens,gpu,gpu_hours\n" + "".join(
        f"{r['params']},{r['tokens']},{r['gpu']},{r['gpu_hours']}\n" for r in RUNS))
    code, _, err = cli("estimate", "--params", "7B", "--tokens", "1T", "--gpu", "h100", "--gpus",
                       "8", "--calibration", str(path), "--mfu", "0.3")
    assert code == 2 and err == (
        f"error: --calibration: {str(path)!r} is not allowed; not together with --mfu: your runs "
        "adjust the prior, which a given MFU replaces; give one or the other\n")


async def test_runs_with_a_given_mfu_name_both_arguments(client: Client) -> None:
    text = await _call(client, "estimate_run_cost", {
        "params": "7B", "tokens": "1T", "gpu": "h100", "gpu_count": 8, "mfu": 0.3,
        "calibration": RUNS}, error=True)
    assert ("calibration: '3 runs' is not allowed; not together with mfu: your runs adjust the "
            "prior, which a given MFU replaces; give one or the other") in text


def test_plan_help_reads_like_the_other_commands(capsys: pytest.CaptureFixture[str]) -> None:
    text = _help("plan", capsys)
    assert "[--price USD]" in text and "[--params N]" in text and "[--model ORG/NAME]" in text
    assert "USD_PER_GPU_HOUR" not in text and "PARAMS" not in text
    assert "not together with --mfu" in text and "within_budget" not in text
    assert "with --hidden and --heads" in text and "at most --params" in text


def test_no_help_shows_an_argument_name(capsys: pytest.CaptureFixture[str]) -> None:
    for command in COMMANDS:
        text = _help(command, capsys)
        # a metavar is short (N, USD), never the argument's name upper-cased
        assert not re.search(r"--[a-z-]+ [A-Z]+_[A-Z_]+\b", text), command
        words = set(re.findall(r"(?<![\w.`/-])[a-z]+(?:_[a-z0-9]+)+\b", text))
        columns = {"gpu_count", "predicted_gain", "gain_uncertainty", "metric_now",
                   "metric_expected", "higher_is_better"}  # compare's FILE's
        values = {"d_in", "d_out", "flash_attention_2"}  # a formula's; transformers' choice
        assert not words - values - (columns if command == "compare" else set()), (
            command, words)
    assert "give --mfu" in _help("split", capsys)


def test_every_flag_a_help_names_is_one_its_command_takes(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # split's --calibration help said "not with --mfu or --achieved-tflops"; split has no such
    # flag. A flag of another command is named in backticks (`--probe FILE` of estimate).
    monkeypatch.setenv("COLUMNS", "100000")  # argparse wraps no flag over two lines
    for command in COMMANDS:
        text = re.sub(r"`[^`]*`", "", _help(command, capsys))
        named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text))
        parser = build_parser(command)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        taken = {f for a in sub.choices[command]._actions for f in a.option_strings}
        assert named <= taken, (command, named - taken)


def test_the_reply_names_the_flag_the_parser_gives_each_argument() -> None:
    # arg() at the CLI, outside a command (a library caller): CLI_RENAMED and the hyphens agree
    # with every command's own flags, but for plan's --budget and split's --sizes
    parser = build_parser(None)
    own = {("plan", "budget_usd"): "--budget", ("split", "params"): "--sizes"}
    inverted = {"must_fit", "list_presets"}
    renamed = set()
    for command in COMMANDS:
        for field, flag in flag_names(parser, command).items():
            if not flag.startswith("--") or field in inverted:
                continue
            assert (own.get((command, field)) or cli_flag(field)) == flag, (command, field)
            if flag != "--" + field.replace("_", "-") and (command, field) not in own:
                renamed.add(field)
    assert renamed == set(CLI_RENAMED)
    assert (arg("usd_per_gpu_hour"), arg("gpu_count"), arg("zero/tp")) == (
        "--price", "--gpus", "--zero/--tp")
    with naming(None):
        assert (arg("usd_per_gpu_hour"), arg("zero/tp")) == ("usd_per_gpu_hour", "zero/tp")
    with naming({"budget_usd": "--budget"}):
        assert (arg("budget_usd"), arg("flash_attention")) == ("--budget", "--flash-attention")


@pytest.mark.parametrize(("text", "renamed"), [
    ("a divisor of hidden (4096)", "a divisor of --hidden (4096)"),
    ("Decoder layers, with hidden and heads (optional).",
     "Decoder layers, with --hidden and --heads (optional)."),
    ("a multiple of tp × pp = 8", "a multiple of --tp × --pp = 8"),
    ("not with zero 0: give zero 1, 2 or 3 (or leave zero unset)",
     "not with --zero 0: give --zero 1, 2 or 3 (or leave --zero unset)"),
    # English words stay words; a formula keeps its names; a column is not a flag's prefix
    ("give a config or preset for the layers", "give a config or preset for the layers"),
    ("6·params·tokens = flops", "6·params·tokens = flops"),
    ("(with gpu-count)", "(with gpu-count)"),
    ("Price, with gpu. With gpu, the MFU", "Price, with --gpu. With --gpu, the MFU"),
])
def test_errors_and_help_name_plain_fields_as_flags_only_where_they_name_them(
        text: str, renamed: str) -> None:
    flags = flag_names(build_parser("memory"), "memory") | {"tokens": "--tokens"}
    assert rename_fields(text, flags) == renamed



def test_opposite_flags_missing_files_and_the_no_flag_s_help(
        cli: Cli, capsys: pytest.CaptureFixture[str]) -> None:
    # a CLI reviewer's finds (2026-12-08): "--offload --no-offload" read "argument --no-offload:
    # given more than once"; a missing probe file asked for "a readable CSV or JSON file" and
    # said its contents were not shown; --no-flash-attention's help described the kernels it
    # turns off
    run = ["estimate", "--params", "7B", "--tokens", "1T", "--gpu", "h100", "--gpus", "8"]
    code, _, err = cli(*run, "--offload", "--no-offload")
    assert code == 2 and "--offload and --no-offload say opposite things; give one" in err
    code, _, err = cli(*run, "--offload", "--offload")
    assert code == 2 and "argument --offload: given more than once; give it once" in err
    code, _, err = cli(*run, "--probe", "/no/such/probe.json")
    assert code == 2 and "'/no/such/probe.json' cannot be read; give a readable JSON file" in err
    assert "contents not shown" not in err and "CSV" not in err
    text = _help("memory", capsys)
    assert "--no-flash-attention Count eager attention, which stores the s×s" in text
