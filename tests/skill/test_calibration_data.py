"""The calibration set of published runs (issue 17, item 2): every row parses, names a device the
catalog has, cites a public reference and says how its GPU-hours were got; derived hours agree
with the devices × days they were derived from; and the classes the issue asks for are counted.

The issue asks for at least 80 runs covering small MoEs, AMD, TPU v3–v5, A800/H800 and encoders.
All are there (107 rows, 2026-12-06), AMD with three runs that publish their hours (AMD-Llama-135m
on MI250, an HPLT v2 ablation and a Paloma 1B baseline on MI250X) beside Instella-3B and
AMD-OLMo-1B, which publish none; A800 with Skywork-13B, Tele-FLM and FLM-101B's three stages;
encoder–decoders with AlexaTM 20B and UL2 20B; TPU v4 with PaLM, GLaM, UL2 and OpenLLaMA
7B. No run on MI300X, TPU v5 or H20 publishes its time yet.
"""

from __future__ import annotations

import csv
import re
from importlib import resources
from pathlib import Path

import pytest

from compute_budget.skill.hardware.catalog import Accelerator, get_accelerator

CSV = Path(str(resources.files("compute_budget.skill").joinpath("data/calibration_runs.csv")))
COLUMNS = ["model", "params", "active_params", "tokens", "hardware", "gpu_count", "gpu_hours",
           "days", "reported_mfu", "reported_tflops_per_gpu", "reported_flops", "dollar_cost",
           "source", "gpu_hours_basis", "assumptions"]
NUMERIC = ["params", "active_params", "tokens", "gpu_count", "gpu_hours", "days", "reported_mfu",
           "reported_tflops_per_gpu", "reported_flops", "dollar_cost"]


def _rows() -> list[dict[str, str]]:
    with CSV.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == COLUMNS
        return list(reader)


def _number(cell: str) -> float | None:
    return float(cell) if cell.strip() else None


def devices(hardware: str) -> list[Accelerator]:
    """The catalog devices a row's hardware text names (several for a mixed fleet)."""
    t = hardware.lower()
    keys = [f"tpu-v{m}" for m in re.findall(r"tpu\s*v(\d+[a-z]?)", t)]
    for word, key in (("v100", "v100"), ("a800", "a800"), ("h800", "h800"), ("h200", "h200"),
                      ("gh200", "gh200"), ("b200", "b200"), ("mi300x", "mi300x"),
                      ("mi325x", "mi325x")):
        if re.search(rf"(?<![a-z]){word}\b", t):
            keys.append(key)
    if "a100" in t:
        keys.append("a100-40gb" if re.search(r"40\s*g", t) else "a100-80gb")
    if re.search(r"(?<!g)h100", t):
        keys.append("h100-pcie" if "pcie" in t else "h100-sxm")
    for model in re.findall(r"mi250x?", t)[:1]:
        keys.append(f"{model}-gcd" if "gcd" in t else model)
    return [get_accelerator(k) for k in dict.fromkeys(keys)]


def test_every_row_parses() -> None:
    rows = _rows()
    assert len(rows) >= 107
    names = [r["model"] for r in rows]
    assert len(names) == len(set(names)), "model names are unique"
    for row in rows:
        values = {c: _number(row[c]) for c in NUMERIC}
        assert values["params"] is not None and values["params"] > 0, row["model"]
        active = values["active_params"]
        assert active is None or 0 < active <= values["params"], row["model"]
        for column, value in values.items():
            assert value is None or value > 0, (row["model"], column)  # unknown is blank, not 0
        mfu = values["reported_mfu"]
        assert mfu is None or mfu < 1, row["model"]


def test_every_row_names_a_catalog_device_or_says_it_is_not_stated() -> None:
    for row in _rows():
        found = devices(row["hardware"])
        assert found or "not stated" in row["hardware"].lower(), row["model"]


def test_every_source_is_a_public_reference() -> None:
    """A web address (a model card, a blog), or a paper: a quoted title or arXiv id with a year."""
    year = re.compile(r"\b(19|20)\d\d\b")
    address = re.compile(r"[a-z0-9-]+\.[a-z]{2,}/", re.IGNORECASE)
    paper = re.compile(r"'[^']{8,}'|arXiv", re.IGNORECASE)
    for row in _rows():
        source = row["source"]
        assert address.search(source) or (paper.search(source) and year.search(source)), (
            row["model"])
        assert "109-" not in source and ".csv" not in source, row["model"]


def test_gpu_hours_state_how_they_were_got() -> None:
    for row in _rows():
        basis = row["gpu_hours_basis"].strip()
        if row["gpu_hours"].strip():
            assert basis and basis != "none", row["model"]
        else:
            assert basis == "none", row["model"]


def test_derived_hours_are_the_devices_times_the_days() -> None:
    """A basis of the form 'derived (N x D d x 24)' must reproduce the GPU-hours."""
    checked = 0
    pattern = re.compile(r"derived.*?\((\d[\d,]*) x ~?([\d.]+) d x 24")
    for row in _rows():
        match = pattern.search(row["gpu_hours_basis"])
        if not match:
            continue
        count, days = float(match.group(1).replace(",", "")), float(match.group(2))
        assert float(row["gpu_hours"]) == pytest.approx(count * days * 24, rel=0.01), row["model"]
        checked += 1
    assert checked >= 31


def _classes(rows: list[dict[str, str]]) -> dict[str, int]:
    counts = {"small_moe": 0, "moe": 0, "amd": 0, "amd_with_hours": 0, "tpu": 0, "a800_h800": 0,
              "encoder": 0, "blackwell": 0}
    encoder = re.compile(r"bert|electra|\bt5\b|-t5|bart|ul2|xlnet|encoder", re.IGNORECASE)
    for row in rows:
        params, active = float(row["params"]), _number(row["active_params"])
        if active is not None and active < params:
            counts["moe"] += 1
            counts["small_moe"] += active < 1.5e9
        keys = {d.key for d in devices(row["hardware"])}
        amd = any(k.startswith("mi") for k in keys)
        counts["amd"] += amd
        counts["amd_with_hours"] += amd and _number(row["gpu_hours"]) is not None
        counts["tpu"] += any(k.startswith("tpu") for k in keys)
        counts["a800_h800"] += bool(keys & {"a800", "h800"})
        counts["blackwell"] += bool(keys & {"b200"})
        counts["encoder"] += bool(encoder.search(row["model"]))
    return counts


def test_the_classes_covered_today() -> None:
    counts = _classes(_rows())
    assert counts["moe"] >= 13
    assert counts["small_moe"] >= 3  # OLMoE-1B-7B (1.3B active), Granite 3.0 1B-A400M, 3B-A800M
    assert counts["tpu"] >= 6  # Gopher, Chinchilla, PaLM, GLaM, XLNet, GPT-J
    assert counts["amd"] >= 4  # + Instella-3B and AMD-OLMo-1B (no hours published: not scored)
    # XLNet-Large, RoBERTa-Large, DeBERTa x3, ELECTRA-Small, UL2 20B, MosaicML BERT-Base (and
    # AlexaTM 20B, an encoder–decoder by its lineage, not its name)
    assert counts["encoder"] >= 8
    # Baichuan 2, DeepSeek LLM 67B, V2, V3, Skywork-13B, Tele-FLM, FLM-101B's three stages
    assert counts["a800_h800"] >= 9
    assert counts["blackwell"] >= 1  # Olmo Hybrid 7B on B200


def test_the_issue_target_is_met_in_rows_encoders_and_tpu_runs() -> None:
    rows = _rows()
    counts = _classes(rows)
    assert len(rows) >= 80
    assert counts["encoder"] >= 3 and counts["tpu"] >= 5


def test_the_issue_amd_target_is_met_with_runs_that_can_be_scored() -> None:
    # AMD-Llama-135m (AMD-AIG-AIMA/AMD-LLM README: 6 days on 4 x 4 MI250), the HPLT v2
    # English ablation (arXiv:2503.10267 Appendix I: 11,008 GPU hours on 128 MI250X GCDs) and
    # Ai2's Paloma 1B C4 baseline (its card: 64 MI250X for 2 days).
    assert _classes(_rows())["amd_with_hours"] >= 3
