"""Grouped cross-validation of the MFU prior: who is a sibling of whom, the conformal band, the
forward choice of terms (issue 17, item 1)."""

from __future__ import annotations

import math

import pytest

from benchmarks.calibration_groups import (
    LINEAGES,
    architecture_class,
    fallback_family,
    group_of,
    lineage,
)
from benchmarks.grouped_cv import MIN_CLASS_RUNS, band_factors, choose_bands, choose_form
from benchmarks.prior_table import COVERAGE, FORMS, Form
from benchmarks.published_runs import load_runs
from compute_budget.skill.hardware.mfu_table import load_mfu_priors


@pytest.mark.parametrize(("names", "family", "organisation"), [
    (["Llama 2 7B", "Llama 2 13B", "Llama 2 34B", "Llama 2 70B"], "Llama 2", "Meta"),
    (["Llama 3 8B", "Llama 3.1 405B", "Llama 3.2 1B"], "Llama 3", "Meta"),
    (["LLaMA-1 7B", "LLaMA-1 65B"], "LLaMA-1", "Meta"),
    (["Phi-3-mini 3.8B (Apr 2024)", "Phi-3-medium 14B", "Phi-3.5-mini 3.8B",
      "Phi-3.5-MoE (16x3.8B)"], "Phi-3", "Microsoft"),
    (["Falcon-7B", "Falcon-40B", "Falcon-180B"], "Falcon", "TII"),
    (["Pythia 1B", "Pythia 12B"], "Pythia", "EleutherAI"),
    (["Llama 4 Scout (17Bx16E)", "Llama 4 Maverick (17Bx128E)"], "Llama 4", "Meta"),
])
def test_siblings_share_a_family_and_an_organisation(names: list[str], family: str,
                                                      organisation: str) -> None:
    for name in names:
        assert (group_of(name, "family"), group_of(name, "organisation")) == (
            family, organisation), name


@pytest.mark.parametrize(("name", "organisation", "family"), [
    ("Gopher 280B", "Google", "Gopher"),
    ("PaLM 540B", "Google", "PaLM"),
    ("Chameleon 7B", "Meta", "Chameleon"),
    ("BloombergGPT 50.6B", "Bloomberg", "BloombergGPT"),  # not BigScience's BLOOM
    ("BLOOM 176B", "BigScience", "BLOOM"),
    ("MPT-7B", "Databricks", "MPT"),
    ("DBRX", "Databricks", "DBRX"),
    ("DeepSeek LLM 67B", "DeepSeek", "DeepSeek LLM"),
    ("DeepSeek-V2", "DeepSeek", "DeepSeek-V2"),
    ("TinyLlama 1.1B", "SUTD StatNLP", "TinyLlama"),  # not Meta's
    ("StarCoderBase 15.5B", "BigCode", "StarCoderBase"),
])
def test_organisations_hold_several_families(name: str, organisation: str, family: str) -> None:
    assert group_of(name, "organisation") == organisation
    assert group_of(name, "family") == family


def test_a_row_no_lineage_matches_is_grouped_by_its_name() -> None:
    entry = lineage("InternLM2 20B")
    assert not entry.matched
    assert (entry.family, entry.organisation) == ("InternLM2", "InternLM")
    assert fallback_family("Foo-Bar 1.3B (Apr 2024)").family == "Foo-Bar"
    assert lineage("Qwen2.5-72B").family == "Qwen2.5" and lineage("Qwen2.5-72B").matched


def test_every_row_of_the_calibration_set_has_a_lineage() -> None:
    # A row added without one still works (grouped by its name); the benchmark lists it, and
    # this test asks for its organisation in LINEAGES.
    unmatched = [r.name for r in load_runs() if not lineage(r.name).matched]
    assert unmatched == []
    assert len({entry.pattern for entry in LINEAGES}) == len(LINEAGES)


@pytest.mark.parametrize(("name", "params", "active", "expected"), [
    ("Llama 2 7B", 7e9, None, "dense"),
    ("DeepSeek-V2", 236e9, 21e9, "moe"),
    ("T5-XXL 11B", 11e9, None, "encoder"),
    ("BERT-Large 340M", 3.4e8, None, "encoder"),
    ("RoBERTa-large 355M", 3.55e8, None, "encoder"),
])
def test_architecture_class(name: str, params: float, active: float | None,
                            expected: str) -> None:
    assert architecture_class(name, params, active) == expected


def test_architecture_column_wins_when_the_csv_has_one() -> None:
    row = {"architecture": "encoder-decoder"}
    assert architecture_class("Mystery 3B", 3e9, None, row) == "encoder"


def test_band_factors_are_the_equal_tailed_split_conformal_quantiles() -> None:
    # n = 20 residuals -0.20 … -0.01 and 20 of 0.005 … 0.10: on each side the ⌈41 × 0.925⌉ =
    # 38th smallest of 40 is kept. Slow side: 0.18 → ÷ 10^0.18 = 1.514, rounded up to 1.52; fast
    # side: 0.09 → × 10^0.09 = 1.230, rounded up to 1.24.
    slow = [-i / 100 for i in range(1, 21)]
    fast = [i / 200 for i in range(1, 21)]
    assert math.ceil(41 * (1 - (1 - COVERAGE) / 2)) == 38
    band = band_factors(slow + fast)
    assert (band.down, band.up) == (1.52, 1.24)
    mirrored = band_factors([-r for r in slow + fast])
    assert (mirrored.down, mirrored.up) == (1.24, 1.52)
    # The band covers 85% of them or more, and is narrower than the symmetric one (×/÷ 1.52).
    covered = [-math.log10(band.down) <= r <= math.log10(band.up) for r in slow + fast]
    assert sum(covered) / len(covered) >= COVERAGE
    # All on one side: the other end stays at the central (a factor of 1).
    assert band_factors(fast).down == 1.0
    # Too few for a conformal band (fewer than MIN_CLASS_RUNS): the one that covers them all.
    assert MIN_CLASS_RUNS == 13
    few = band_factors([0.05, -0.3, 0.1])
    assert few.down == pytest.approx(math.ceil(10 ** 0.3 * 100) / 100)
    assert few.up == pytest.approx(math.ceil(10 ** 0.1 * 100) / 100)


def _residuals(errors: dict[str, float]) -> dict[Form, dict[str, list[tuple[object, float]]]]:
    """Synthetic held-out residuals: one per form, the same under both groupings."""
    return {form: {g: [(None, errors.get("+".join(form.terms), 0.5))]
                   for g in ("organisation", "family")} for form in FORMS}


def test_forward_selection_adds_only_terms_that_help_under_both_groupings() -> None:
    scores = _residuals({"": 0.20, "generation": 0.10, "size": 0.15, "moe_ratio": 0.19,
                         "generation+size": 0.09, "generation+moe_ratio": 0.11,
                         "generation+size+moe_ratio": 0.095})
    assert choose_form(scores).terms == ("generation", "size")  # type: ignore[arg-type]
    flat = _residuals({"": 0.10})
    assert choose_form(flat).terms == ()  # type: ignore[arg-type]


def test_packaged_table_records_the_forms_it_chose_among() -> None:
    table = load_mfu_priors()
    kept = [s for s in table.form_scores if s.kept]
    assert len(table.form_scores) == len(FORMS) and len(kept) == 1
    assert kept[0].terms == table.form
    assert table.coverage_target == COVERAGE
    if "size" not in table.form:
        assert table.size_slope == 0
    if "moe_ratio" not in table.form:
        assert table.moe_ratio == 1


@pytest.mark.slow
def test_packaged_bands_cover_85_percent_of_held_out_runs_under_both_groupings() -> None:
    from benchmarks.grouped_cv import score_forms

    runs = load_runs()
    table = load_mfu_priors()
    form = Form(*(t in table.form for t in ("generation", "size", "moe_ratio")))
    scores = score_forms(runs)
    bands = choose_bands(runs, form, scores)
    assert (bands.dense.down, bands.dense.up, bands.pooled.down, bands.pooled.up) == (
        table.band_factor, table.band_high_factor, table.pooled_band_factor,
        table.pooled_band_high_factor)
    for wider in (bands.moe, bands.pooled):
        assert wider.down >= bands.dense.down and wider.up >= bands.dense.up
    for grouping, residuals in scores[form].items():
        band = {"dense": bands.dense, "moe": bands.moe}
        covered = [-math.log10(band[run.family].down) - 1e-9 <= r
                   <= math.log10(band[run.family].up) + 1e-9 for run, r in residuals]
        assert sum(covered) / len(covered) >= COVERAGE, grouping
        # Each end leaves out at most half the rest (plus the conformal rounding of one run).
        slow = sum(r < -math.log10(band[run.family].down) - 1e-9 for run, r in residuals)
        assert slow / len(residuals) <= (1 - COVERAGE) / 2, grouping
