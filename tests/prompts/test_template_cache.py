"""The compiled-template cache (issue 9, fast start): compiling the Jinja templates was most of
a short command's time, so compiled templates are kept on disk, checked against their source,
never shared with another user, and never a reason for a reply to fail."""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jinja2 import Environment, PackageLoader

from compute_budget.prompts import render_estimate
from compute_budget.prompts.render import CACHE_ENV, environment, template_cache_dir
from compute_budget.skill import RunSpec, estimate_run

pytestmark = pytest.mark.slow  # 2 s of the quick set's minute (each test starts renders afresh)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    environment.cache_clear()
    yield tmp_path / "cache" / "templates"
    environment.cache_clear()


def _reply() -> str:
    spec = RunSpec.model_validate({"params": "7B", "tokens": "1T", "gpu": "h100",
                                   "gpu_count": 64})
    return render_estimate(estimate_run(spec))


def _never_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    def compile_(*args: object, **kwargs: object) -> None:
        raise AssertionError("a cached template was compiled again")

    monkeypatch.setattr(Environment, "compile", compile_)


def test_a_second_start_loads_compiled_templates(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _reply()
    entries = list(cache.iterdir())
    assert len(entries) >= 2  # the estimate template and the macros it imports
    assert (cache.stat().st_mode & 0o777) == 0o700
    environment.cache_clear()  # a new process: a new environment, the same directory
    _never_compile(monkeypatch)
    assert _reply() == first


def test_a_damaged_entry_is_compiled_again(cache: Path) -> None:
    first = _reply()
    for entry in cache.iterdir():
        entry.write_bytes(b"\x00garbage")
    environment.cache_clear()
    assert _reply() == first


def test_an_edited_template_is_not_served_from_the_cache(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Jinja keeps each entry with its source's checksum: a changed source is compiled anew."""
    first = _reply()
    real = PackageLoader.get_source

    def edited(self: PackageLoader, env: Environment, name: str) -> Any:
        source, filename, uptodate = real(self, env, name)
        return source + ("EDITED\n" if name == "estimate.md.j2" else ""), filename, uptodate

    monkeypatch.setattr(PackageLoader, "get_source", edited)
    environment.cache_clear()
    assert _reply() == first + "EDITED\n"


def test_off_or_a_directory_others_can_write_is_not_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, "off")
    assert template_cache_dir() is None
    shared = tmp_path / "shared"
    (shared / "templates").mkdir(parents=True)
    os.chmod(shared / "templates", 0o777)
    monkeypatch.setenv(CACHE_ENV, str(shared))
    assert template_cache_dir() is None
    os.chmod(shared / "templates", 0o700)
    assert template_cache_dir() == shared / "templates"


def test_an_unwritable_cache_still_renders(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(CACHE_ENV, str(blocker))
    environment.cache_clear()
    try:
        assert template_cache_dir() is None
        unwritable = _reply()
        monkeypatch.setenv(CACHE_ENV, "off")
        environment.cache_clear()
        assert unwritable == _reply()
    finally:
        environment.cache_clear()
