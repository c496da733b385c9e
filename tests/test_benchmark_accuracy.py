"""benchmarks/accuracy.py: the calibrated prior on runs it was not fitted to (grouped CV).

Issue 17's targets, under both groupings (one organisation, one model family held out at a
time): median |log10 error| ≤ 0.08, coverage ≥ 85%, median band width ≤ 2.5x. On the 114-row
calibration set the data miss the median error and the width under both groupings (0.117 and
2.90x with an organisation held out, 0.109 and 3.00x with a model family; coverage 72/81 = 89%
and 71/81 = 88% is met, with equal-tailed bands), so the benchmark says so and exits 1, and these
tests pin the
measured figures instead of asserting the targets (issue 17: do not tune on the held-out scores,
do not loosen the targets).
"""

from __future__ import annotations

import dataclasses

import pytest

from benchmarks.accuracy import (
    BY_FAMILY,
    BY_ORGANISATION,
    CALIBRATED,
    FLAT,
    METHODS,
    PEAK,
    TARGETS,
    AccuracyReport,
    accuracy_summary,
    main,
    render,
    run_benchmark,
)
from benchmarks.derive_priors import (
    PRIORS_PATH,
    derive,
    load_runs,
    main as derive_main,
    map_hardware,
    render as render_json,
)

pytestmark = pytest.mark.slow  # re-derives the prior once per held-out group

MEASURED = {
    # method: (runs, median |log10 error|, covered, median band width), on the runs the
    # derivation uses; `uv run python -m benchmarks.accuracy` prints them.
    BY_ORGANISATION: (81, 0.117, 72, 2.90),
    BY_FAMILY: (81, 0.109, 71, 3.00),
    FLAT: (81, 0.187, 31, 1.67),
}
"""The figures the benchmark measured on the calibration set of 2026-12-06 (114 rows; on the
107-row set, before the SmolLM, SmolLM2, Phi-3-small, Trillion-7B and Mamba-7B runs: 67/74 and
67/74 at 0.105 and 0.099, 3.12x and 3.11x; the 107 rows: the A800,
Paloma, Olmo 3, Pleias, OPT-175B, GLM-130B, RWKV-4 14B, MiniCPM-2B, LLaDA 8B, OpenLLaMA 7B,
StableLM 2, Lucie-7B, MPT-1b, mGPT, Bamba-9B and encoder rows added; Pythia out of the
derivation), with equal-tailed bands whose fast end stops at the fastest run the fit used (on the
101-row set: 62/69 and 61/69 at 2.71x and 2.68x; on the 97-row set: 59/64 and 57/64 at 2.65x; the
symmetric bands gave 55/64 covered at 2.79x and 2.69x)."""


def report() -> AccuracyReport:
    return run_benchmark()  # cached: computed once per session


def test_grouped_cv_figures_are_the_measured_ones() -> None:
    s = report().summary
    for method, (n, median_error, covered, width) in MEASURED.items():
        assert (s[method].n, round(s[method].median_error, 3), s[method].covered,
                round(s[method].median_width, 2)) == (n, median_error, covered, width), method


def test_the_targets_are_issue_17s_and_the_exit_code_says_they_are_missed() -> None:
    assert TARGETS == {"median_error": 0.08, "coverage": 0.85, "median_width": 2.5}
    rep = report()
    org, fam = (f"Calibrated prior, grouped CV: one {g} held out: "
                for g in ("organisation", "model family"))
    assert rep.missed == [f"{org}median error 0.117", f"{org}median band width 2.90x",
                          f"{fam}median error 0.109", f"{fam}median band width 3.00x"]
    printed: list[str] = []
    assert main(printed.append) == 1
    assert "**Missed** (the benchmark exits 1)" in printed[0]


def test_missed_names_each_target_each_grouping_misses() -> None:
    rep = report()
    n = rep.summary[BY_FAMILY].n
    good = dataclasses.replace(rep.summary[BY_FAMILY], median_error=0.05, covered=n,
                               median_width=2.0)
    met = dataclasses.replace(rep, summary={**rep.summary, BY_ORGANISATION: good,
                                            BY_FAMILY: good})
    assert met.missed == [] and "**Met.**" in render(met)
    bad = dataclasses.replace(good, covered=30, median_width=2.6)
    missed = dataclasses.replace(rep, summary={**rep.summary, BY_FAMILY: bad,
                                               BY_ORGANISATION: good}).missed
    assert len(missed) == 2 and f"coverage {30 / n:.0%}" in missed[0] and "2.60x" in missed[1]
    # a width that rounds onto the target at two decimals is printed with three, so the miss
    # does not read as met
    near = dataclasses.replace(good, median_width=2.5039)
    (line,) = dataclasses.replace(rep, summary={**rep.summary, BY_FAMILY: near,
                                                BY_ORGANISATION: good}).missed
    assert line.endswith("median band width 2.504x")


def test_grouped_cv_beats_the_flat_baseline_under_both_groupings() -> None:
    s = report().summary
    for method in (BY_ORGANISATION, BY_FAMILY):
        assert s[method].median_error < s[FLAT].median_error
        assert s[method].coverage > s[FLAT].coverage
        assert s[method].mean_error < s[PEAK].mean_error
        # the width target is missed on the 114-row set (2.90x and 3.00x; 3.12x and 3.11x on
        # the 107-row set; 2.71x and 2.68x on
        # the 101-row set, before the slow Lucie-7B and mGPT runs; coverage 91% and 91%, 84% on
        # the 95-row set): pinned in MEASURED; here only that they stay within 30% of the
        # width target and two points of the coverage
        assert s[method].median_width <= TARGETS["median_width"] * 1.3
        assert s[method].coverage >= TARGETS["coverage"] - 0.02


def test_held_out_runs_outside_the_band_are_not_all_on_the_slow_side() -> None:
    # The equal-tailed band leaves out at most 7.5% of held-out runs on each side. With the
    # symmetric ×/÷ band of the same width every miss was slower than its slow end (9 of 64:
    # 14%, the over-budget surprise, on the 97-row set); now 5 of 81 under both groupings
    # (Pleias 3B, OPT-175B, RWKV-4 14B, Lucie-7B, mGPT), on the 114-row set.
    used = [r for r in report().results if r.run.used]
    for method in (BY_ORGANISATION, BY_FAMILY):
        slow = [r.run.name for r in used if not r.estimates[method].covered
                and r.estimates[method].gpu_hours < r.reported_gpu_hours]
        assert len(slow) / len(used) <= 0.075, (method, slow)


def test_held_out_figures_are_no_better_than_in_sample() -> None:
    s = report().summary
    for method in (BY_ORGANISATION, BY_FAMILY):
        assert s[method].mean_error >= s[CALIBRATED].mean_error


def test_a_held_out_organisation_is_in_none_of_its_fold_s_priors() -> None:
    runs = load_runs()
    fold = derive([r for r in runs if r.group("organisation") != "Meta"])
    meta = {r.name for r in runs if r.group("organisation") == "Meta"}
    assert not meta & {name for entry in fold.priors for name in entry.runs}
    assert not meta & {r.name for r in fold.runs}


def test_rendered_report_has_both_groupings_the_baselines_and_the_splits() -> None:
    text = render(report())
    for label in ("grouped CV: one organisation held out", "grouped CV: one model family held "
                  "out", "in-sample", "peak FLOP/s, no MFU", "flat MFU 0.4, band 0.3–0.5",
                  "## By hardware generation", "## By architecture class", "| Hopper |",
                  "| MoE |", "## Candidate forms", "## Per run", "## Skipped rows",
                  "End-to-end MFU of the runs used"):
        assert label in text, label
    assert text.count("\n| ") > len(report().results)  # a row per usable run, and more


def test_the_device_count_left_out_of_the_prior_shows_no_trend_in_the_held_out_error() -> None:
    # derive_priors leaves cluster size out; the benchmark prints why. On the 114-row set 57 used
    # runs give a device count, and their held-out error moves by +0.011 to +0.012 in log10 per
    # tenfold more devices (correlation +0.04 to +0.05): a
    # factor of 1.06 from 8 to 1,024 devices, far inside the band.
    text = render(report())
    section = text.split("## Not modelled: cluster size")[1].split("\n## ")[0]
    rows = [line.split(" | ") for line in section.splitlines()
            if line.startswith("| by ")]
    assert [row[0] for row in rows] == ["| by organisation", "| by family"]
    for row in rows:
        runs, slope, corr = int(row[1]), float(row[2]), float(row[3].rstrip(" |"))
        assert runs == 57 and abs(slope) < 0.05 and abs(corr) < 0.2


def test_per_generation_and_per_class_splits_cover_every_usable_run() -> None:
    rep = report()
    n = len(rep.results)
    for split in (rep.by_generation, rep.by_class):
        assert sum(by_method[FLAT].n for by_method in split.values()) == n
        assert all(set(by_method) == set(METHODS) for by_method in split.values())
    assert {"ampere", "hopper"} <= set(rep.by_generation)
    assert {"dense", "moe"} <= set(rep.by_class)


def test_summary_function_for_callers() -> None:
    assert set(accuracy_summary()) == set(METHODS)


def test_packaged_priors_are_the_derivation_of_the_benchmark_copy() -> None:
    assert report().packaged_priors_current
    assert PRIORS_PATH.read_text(encoding="utf-8") == render_json(derive(load_runs()))
    assert derive_main(["--check"]) == 0


def test_every_usable_run_is_estimated_and_the_rest_are_skipped_with_a_reason() -> None:
    runs = load_runs()
    rep = report()
    assert len(rep.results) + len(rep.table.skipped) == len(runs)
    assert all(s.reason for s in rep.table.skipped)


def test_baselines_are_what_they_say() -> None:
    for r in report().results:
        peak, flat = r.estimates[PEAK], r.estimates[FLAT]
        assert peak.width == 1
        assert flat.gpu_hours == pytest.approx(peak.gpu_hours / 0.4)
        assert flat.width == pytest.approx(0.5 / 0.3)


@pytest.mark.parametrize(("text", "key"), [
    ("TPU v3", "tpu-v3"),
    ("A100-80GB (RSC 400W cap + production cluster 350W cap)", "a100-80gb"),
    ("A100-40GB (64 x p4d.24xlarge)", "a100-40gb"),
    ("A800", "a800"),
    ('H100-80GB (SXM, 700W)', "h100-sxm"),
    ("H100 (3.2Tbps InfiniBand)", "h100-sxm"),
    ("H800 (FP8 mixed precision)", "h800"),
    ("V100 (FP16)", "v100"),
    ("TPU v4", "tpu-v4"),
    ("TPU v5p", "tpu-v5p"),
    ("Cloud TPU v5e (v5litepod)", "tpu-v5e"),
    ("MI250X (Frontier)", "mi250x"),
    ("MI250X GCDs (LUMI)", "mi250x-gcd"),
    ("MI250 (4 nodes x 4 modules)", "mi250"),  # AMD-Llama-135m: the MI250, not the MI250X
    ("MI250 GCDs", "mi250-gcd"),
    ("MI300X", "mi300x"),
    ("B200 (64 HGX B200, Lambda)", "b200"),
])
def test_hardware_text_maps_to_the_catalog(text: str, key: str) -> None:
    acc, reason = map_hardware(text)
    assert acc is not None and acc.key == key and reason is None


@pytest.mark.parametrize("text", ["TPU v3/TPU v4", "(GPU type not stated in blog; AWS-built "
                                  "cluster)", "Cerebras CS-2", "H100 + A100"])
def test_unknown_or_mixed_hardware_is_skipped(text: str) -> None:
    acc, reason = map_hardware(text)
    assert acc is None and reason


def test_calibration_rows_say_how_their_gpu_hours_were_derived() -> None:
    runs = load_runs()
    assert len(runs) >= 50
    for run in runs:
        assert run.gpu_hours_basis in ("reported", "none") or run.gpu_hours_basis.startswith(
            ("derived", "upper bound")), run.name
    generations = {r.accelerator.generation for r in runs if r.usable and r.accelerator}
    assert {"volta", "ampere", "hopper", "tpu-v3", "tpu-v4"} <= generations
    # Snowflake Arctic's GPU-hours are only an upper bound: skipped. GLM-130B's calendar window
    # (May 6 - July 3 2022) is the run itself (its README: pretraining "lasted 60 days"): used.
    table = report().table
    assert any(s.name == "Snowflake Arctic" and "upper bound" in s.reason for s in table.skipped)
    assert any(r.name == "GLM-130B" and r.used for r in table.runs)


def test_readme_prose_quotes_the_measured_figures() -> None:
    from pathlib import Path

    readme = " ".join((Path(__file__).parent.parent / "README.md").read_text(
        encoding="utf-8").split())
    rep = report()
    table = rep.table
    org, fam = rep.summary[BY_ORGANISATION], rep.summary[BY_FAMILY]
    seen = table.observed()
    assert seen is not None
    for figure in (
        f"{len(rep.runs)} rows",
        f"from ÷ {table.band_factor:g} to × {table.band_high_factor:g} that covers 85%",
        f"×{10 ** table.size_slope:.2f} per tenfold more",
        f"(÷ {table.pooled_band_factor:g} to × {table.pooled_band_high_factor:g},",
        f"median error {org.median_error:.3f} (×{10 ** org.median_error:.2f})",
        f"coverage ({org.coverage:.0%}) and width ({org.median_width:.2f}x)",
        f"({fam.median_error:.3f}, {fam.coverage:.0%}, {fam.median_width:.2f}x",
        f"the middle 80% of the {seen.n_runs} published runs of the calibration set ran at "
        f"{seen.low:.2f}–{seen.high:.2f}",
    ):
        assert figure in readme, figure
    # the terms the README names: the MoE ratio was kept by a hair on the 97- to 107-row sets
    # and is left out on the 114-row set (it was left out on the 95-row set too), and the README
    # says which, with the held-out errors that decided it
    assert table.form == ("generation", "size") and table.moe_ratio == 1.0
    assert "Those two terms are the ones" in readme
    scores = {frozenset(s.terms): s for s in table.form_scores}
    with_moe = scores[frozenset({"generation", "size", "moe_ratio"})]
    without = scores[frozenset({"generation", "size"})]
    assert (f"error {with_moe.organisation_error:g} with it against "
            f"{without.organisation_error:g} without by organisation") in readme
    assert with_moe.organisation_error > without.organisation_error
    assert with_moe.family_error > without.family_error
