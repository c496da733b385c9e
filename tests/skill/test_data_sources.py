"""The packaged data cites public references only (issue 16): no source string names a file of
ours (a path such as ``109-gpu-pricing/vendors.json`` means nothing to a user and cannot be
checked), and no row points into the internal ``109-…`` receipts folders."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

DATA = Path(str(resources.files("compute_budget.skill").joinpath("data")))
PATH = re.compile(r"(?<![\w./:-])(?:[\w.-]+/)+[\w.-]+\.(?:json|csv|py)\b")
"""A relative path with at least one ``/`` ending in .json, .csv or .py."""
RECEIPTS = re.compile(r"\b109-[a-z]")
"""The receipts folders (``109-gpu-pricing/…``)."""


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, f"{where}[{i}]")


def _packaged_strings() -> Iterator[tuple[str, str]]:
    for path in sorted(DATA.iterdir()):
        if path.suffix == ".json":
            yield from _strings(json.loads(path.read_text(encoding="utf-8")), path.name)
        elif path.suffix == ".csv":
            with path.open(encoding="utf-8", newline="") as f:
                for n, row in enumerate(csv.DictReader(f), 2):
                    for column, cell in row.items():
                        yield f"{path.name}:{n}:{column}", cell or ""


def internal_files(text: str) -> list[str]:
    """The internal file paths ``text`` names: a relative path that is not a web address
    (whose first part is a host such as ``huggingface.co``), or a receipts folder."""
    found = [m for m in PATH.findall(text) if "." not in m.split("/")[0]]
    return found + RECEIPTS.findall(text)


def test_the_data_folder_holds_the_catalog_and_the_calibration() -> None:
    names = {p.name for p in DATA.iterdir()}
    assert {"accelerators.json", "mfu_priors.json", "calibration_runs.csv"} <= names
    assert sum(1 for _ in _packaged_strings()) > 500


def test_no_packaged_string_names_an_internal_file() -> None:
    named = [(where, internal_files(text)) for where, text in _packaged_strings()
             if internal_files(text)]
    assert named == []


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("as transcribed in the table (109-gpu-pricing/vendors.json, read 2026-11-09)",
         ["109-gpu-pricing/vendors.json", "109-g"]),
        ("see data/calibration_runs.csv", ["data/calibration_runs.csv"]),
        ("see src/compute_budget/skill/planning/budget_table.py", [
            "src/compute_budget/skill/planning/budget_table.py"]),
        ("the 109-gpu-pricing folder", ["109-g"]),
    ],
)
def test_the_check_finds_an_internal_file(text: str, found: list[str]) -> None:
    assert internal_files(text) == found


@pytest.mark.parametrize(
    "text",
    [
        "runpod.io/pricing, Secure Cloud, read 2026-11-09 (secondary transcription)",
        "huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json",
        "https://example.org/data/prices.csv",
        "NVIDIA H100 page (nvidia.com/en-us/data-center/h100)",
        "compute-budget calibration set calibration_runs.csv, 2026-12-01",
        "1,109-GPU cluster",
    ],
)
def test_the_check_passes_a_public_reference(text: str) -> None:
    assert internal_files(text) == []
