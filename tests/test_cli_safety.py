"""The command line under hostile or careless use (issue 18): no abbreviated flags, duplicate
names refused, ``--plot`` writes only a new file or one it drew (atomically), a closed stdout
ends quietly."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from tests.conftest import Cli

pytestmark = pytest.mark.adversarial

POINTS = "compute,loss\n1e17,3.52\n1e18,3.11\n1e19,2.83\n1e20,2.64\n"


@pytest.fixture
def points(tmp_path: Path) -> Path:
    path = tmp_path / "points.csv"
    path.write_text(POINTS)
    return path


def test_an_abbreviated_flag_is_not_taken_for_the_full_one(cli: Cli) -> None:
    code, _, err = cli("estimate", "--params", "7B", "--tok", "1T", "--gpu", "h100",
                       "--gpus", "8")
    assert code == 2 and "unrecognized arguments: --tok 1T" in err


def test_an_mcp_argument_name_is_pointed_to_its_flag(cli: Cli) -> None:
    # An assistant that used the MCP tools types their argument names; the CLI names the flag.
    code, out, err = cli("decide", "--preset", "llama-3.1-8b", "--tokens", "1T", "--gpu", "h100",
                         "--gpus", "64", "--predicted-gain", "2", "--gain-uncertainty", "1",
                         "--usd-per-unit-gain", "1e5")
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith("error: compute-budget decide: unrecognized arguments: "
                           "--predicted-gain 2 --gain-uncertainty 1 --usd-per-unit-gain 1e5")
    for hint in ("--predicted-gain is --gain here", "--gain-uncertainty is --uncertainty here",
                 "--usd-per-unit-gain is --value-per-unit here",
                 "`compute-budget decide --help` lists its flags"):
        assert hint in line, hint
    code, _, err = cli("estimate", "--params", "7B", "--tokens", "1T", "--gpu", "h100",
                       "--gpu-count=8")
    assert code == 2 and "--gpu-count is --gpus here" in err


def test_a_near_miss_names_the_flag_and_a_stray_word_gets_no_guess(cli: Cli) -> None:
    code, _, err = cli("estimate", "--params", "7B", "--tok", "1T", "--gpu", "h100", "--gpus",
                       "8")
    assert code == 2 and "(--tok: did you mean --tokens?)" in err
    code, _, err = cli("estimate", "--params", "7B", "--tokens", "1T", "--gpu", "h100",
                       "--gpus", "8", "--zzz", "stray")
    assert code == 2 and "unrecognized arguments: --zzz stray;" in err and "mean" not in err


@pytest.mark.parametrize("available", ["h100=8,h100=512", "h100=8,H100=64"])
def test_a_device_named_twice_in_available_is_refused(cli: Cli, available: str) -> None:
    code, _, err = cli("plan", "--params", "7B", "--tokens", "1T", "--deadline-days", "30",
                       "--available", available)
    assert code == 2 and "--available" in err and "twice" in err


def _plot(cli: Cli, points: Path, target: Path, *extra: str) -> tuple[int, str]:
    code, _, err = cli("fit", "--points", str(points), "--target-compute", "1e21",
                       "--plot", str(target), *extra)
    return code, err


@pytest.mark.slow  # about 1 s: the quick set keeps its minute on two cores
def test_plot_writes_a_new_file_and_overwrites_its_own(cli: Cli, points: Path,
                                                       tmp_path: Path) -> None:
    target = tmp_path / "fit.png"
    assert _plot(cli, points, target) == (0, "")
    first = target.read_bytes()
    assert first.startswith(b"\x89PNG\r\n\x1a\n") and b"compute-budget" in first[:4096]
    assert _plot(cli, points, target) == (0, "")  # its own picture: overwritten
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp left


def test_plot_refuses_another_file_unless_forced(cli: Cli, points: Path,
                                                 tmp_path: Path) -> None:
    data = tmp_path / "results.png"
    data.write_text("my results")
    code, err = _plot(cli, points, data)
    assert code == 2 and err.startswith("error: --plot: ") and "--force" in err
    assert data.read_text() == "my results"
    assert _plot(cli, points, data, "--force") == (0, "")
    assert data.read_bytes().startswith(b"\x89PNG")


def test_plot_never_follows_a_symlink(cli: Cli, points: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    link = tmp_path / "fit.png"
    link.symlink_to(victim)
    code, err = _plot(cli, points, link)
    assert code == 2 and "symbolic link" in err
    assert _plot(cli, points, link, "--force") == (0, "")
    assert victim.read_text() == "keep me" and not link.is_symlink()


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_plot_refuses_what_is_not_a_regular_file(cli: Cli, points: Path, tmp_path: Path,
                                                 kind: str) -> None:
    target = tmp_path / "fit.png"
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    code, err = _plot(cli, points, target, "--force")  # not even with --force
    assert code == 2 and "regular file" in err


class _ClosedPipe(io.StringIO):
    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def fileno(self) -> int:
        return self._fd


def test_a_closed_stdout_ends_quietly(monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    from compute_budget.cli import main

    read, write = os.pipe()
    try:
        monkeypatch.setattr("sys.stdout", _ClosedPipe(write))
        assert main(["gpus"]) == 1
    finally:
        os.close(read)
        os.close(write)
    assert capsys.readouterr().err == ""


SECRET = "tok_SECRET-0123456789abcdef"


@pytest.mark.parametrize(("name", "content"), [
    ("shadow", f"root:{SECRET}:19000:0:99999:7:::\n"),
    ("creds.txt", f"name,params\n{SECRET},7B\n"),
    ("environ", f"HOME=/root\x00API_TOKEN={SECRET}\x00"),
    ("points.json", '{"points": [' + f'"{SECRET}"' + "]}"),
    ("bad.json", f'[{{"compute": 1e17, "loss": "{SECRET}"}}'),
    ("deep.json", "[" * 100_000),
    ("digits.csv", "compute,loss\n1e17," + "9" * 5000 + "\n"),
    ("cell.csv", "compute,loss\n1e17," + SECRET + "x" * 900_000 + "\n"),
])
@pytest.mark.parametrize("command", ["fit", "compare"])
def test_a_data_file_is_never_shown_in_an_error(cli: Cli, tmp_path: Path, name: str,
                                                content: str, command: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    argv = (["fit", "--points", str(path), "--target-compute", "1e21"] if command == "fit"
            else ["compare", str(path)])
    code, out, err = cli(*argv)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and "(contents not shown)" in err
    assert str(path) in err and "Traceback" not in err
    assert SECRET not in err and "root:" not in err and "HOME=" not in err


def test_a_symlink_to_a_secret_shows_nothing_of_it(cli: Cli, tmp_path: Path) -> None:
    secret = tmp_path / "key"
    secret.write_text(f"{SECRET}\n")
    link = tmp_path / "points.json"
    link.symlink_to(secret)
    code, _, err = cli("fit", "--points", str(link), "--target-compute", "1e21")
    assert code == 2 and SECRET not in err and SECRET[:8] not in err


def test_every_unknown_column_is_named_by_its_place(cli: Cli, tmp_path: Path) -> None:
    # The header's names are the file's text, so the CLI hides them; it said "columns: unknown
    # column …" once for a header with three, naming none. Each is now placed, with the known
    # column closest to it (ours, not the file's) and the list of columns once.
    path = tmp_path / "runs.csv"
    path.write_text(f"name,params,tokens,gpu,gpus,gain,sigma,{SECRET}\na,7B,1T,h100,8,2,1,x\n")
    code, out, err = cli("compare", str(path))
    assert code == 2 and out == "" and SECRET not in err
    # by the file's line and the column's place from 1 (it said columns[6], 0-based)
    assert "line 1, column 7: unknown column …; line 1, column 8: unknown column …" in err
    assert "column 6:" not in err  # gain: decide's flag for predicted_gain
    assert err.count("the columns are name, params") == 1
    path.write_text("name,params,tokens,gpu,gpu_cnt,gain,uncertainty\na,7B,1T,h100,8,2,1\n")
    code, _, err = cli("compare", str(path))
    assert code == 2 and "line 1, column 5: unknown column … (did you mean `gpu_count`?)" in err


def test_a_count_given_to_plan_as_gpus_is_pointed_to_its_count_flags(cli: Cli) -> None:
    # plan's gpus field lists device types (--gpu-types); "--gpus 64" there means a count, and
    # the hint "--gpus is --gpu-types here" sent the user to the wrong flag (review helper-57)
    code, out, err = cli("plan", "--params", "7B", "--tokens", "1T", "--deadline-days", "30",
                         "--gpus", "64")
    assert code == 2 and out == ""
    assert "(--gpus: device types are --gpu-types here, counts --max-gpus or --available)" in err
    code, _, err = cli("plan", "--params", "7B", "--tokens", "1T", "--deadline-days", "30",
                       "--gpu", "h100")
    assert code == 2 and "(--gpu is --gpu-types here)" in err


def test_a_value_and_a_formula_are_not_renamed_as_flags(cli: Cli) -> None:
    # the naming of fields as flags rewrote the user's own value ("--gpu: '--seq-len' is not
    # allowed") and formulas ("6·--target-params·--target-tokens") (review helper-63, finding 4)
    code, _, err = cli("estimate", "--params", "7B", "--tokens", "1T", "--gpu", "seq_len",
                       "--gpus", "8")
    assert code == 2 and err.startswith("error: --gpu: 'seq_len' is not allowed; unknown")
    code, _, err = cli("fit", "--target-compute", "1e21", "--target-params", "1B",
                       "--target-tokens", "20B")
    assert code == 2 and "6 × target params × target tokens (1.2e+20)" in err
    assert err.startswith("error: --target-compute: ")
