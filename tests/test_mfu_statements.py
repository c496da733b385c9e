"""Every MFU range a user reads comes from the calibration data, with its count of runs (issue 17).

Templates hold no literal MFU range (each is computed from the calibration table and worded by
a macro); SKILL.md and README quote MFU ranges only beside their source, and the numbers they
quote are the table's; the estimate says the prior is end to end and that a measured
throughput replaces it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from compute_budget import RunSpec, estimate_run
from compute_budget.prompts import render_estimate
from compute_budget.prompts.mcp_texts import prevalidate_text, procedure_text
from compute_budget.skill.hardware.mfu_table import load_mfu_priors

ROOT = Path(__file__).parent.parent
TEMPLATES = ROOT / "src" / "compute_budget" / "prompts" / "templates"
DOCS = {name: (ROOT / name).read_text(encoding="utf-8") for name in ("SKILL.md", "README.md")}

DECIMAL_RANGE = re.compile(r"(?<![\d.])0?\.\d+\s*[–-]\s*0?\.\d+(?![\d.])")
"""Two fractions joined by a dash: an MFU range when the sentence speaks of MFU."""
OPTIMISM = re.compile(r"\d+(\.\d+)?\s*[–-]\s*\d+(\.\d+)?x too optimistic")
"""How far the peak without MFU overstates throughput: an MFU range in disguise."""
SOURCES = ("published run", "calibration set", "Baseline", "the skill's")
"""What a sentence quoting an MFU range names as its source (the calibration set's published
runs; the flat baseline of the benchmark; the skill's flat prior for CNN-heavy models)."""


def _template_text(path: Path) -> str:
    """A template's literal text: expressions, statements and comments removed."""
    text = path.read_text(encoding="utf-8")
    return re.sub(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", " ", text, flags=re.DOTALL)


@pytest.mark.parametrize("path", sorted(TEMPLATES.rglob("*.j2")), ids=lambda p: p.name)
def test_templates_hold_no_literal_mfu_range(path: Path) -> None:
    literal = _template_text(path)
    assert not DECIMAL_RANGE.findall(literal), path.name
    assert not OPTIMISM.search(literal), path.name


def _units(text: str) -> list[str]:
    """Paragraphs, with each list item and each table its own unit."""
    units: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        current: list[str] = []
        for line in paragraph.splitlines():
            starts_item = re.match(r"\s*([-*]|\d+\.)\s", line) is not None
            table_edge = line.startswith("|") != bool(current and current[-1].startswith("|"))
            if current and (starts_item or table_edge):
                units.append("\n".join(current))
                current = []
            current.append(line)
        if current:
            units.append("\n".join(current))
    return [u for u in units if u.strip()]


@pytest.mark.parametrize("name", sorted(DOCS))
def test_docs_quote_mfu_ranges_only_beside_their_source(name: str) -> None:
    # Beside: in the same paragraph or list item; for a table (a reply's), in it or in the
    # few items that follow it (the reply's assumptions).
    units = _units(DOCS[name])
    unsourced = [
        unit for i, unit in enumerate(units)
        if (("MFU" in unit and DECIMAL_RANGE.search(unit)) or OPTIMISM.search(unit))
        and not any(source in "\n".join(units[i:i + 8] if unit.startswith("|") else [unit])
                    for source in SOURCES)
    ]
    assert unsourced == []


def _published_sentence() -> tuple[str, str]:
    """The range of every published run the derivation uses, and the optimism it implies, as
    the procedure words them."""
    seen = load_mfu_priors().observed()
    assert seen is not None and seen.scope == "all" and seen.spread == "middle_80"
    return (f"the middle 80% of the {seen.n_runs} published runs of the calibration set ran at "
            f"{seen.low:.2f}–{seen.high:.2f} of the BF16 dense peak end to end",
            f"{1 / seen.high:.1f}–{1 / seen.low:.1f}x too optimistic")


def test_skill_md_and_the_procedure_quote_the_published_runs() -> None:
    runs, optimism = _published_sentence()
    skill = " ".join(DOCS["SKILL.md"].split())
    assert runs in skill and optimism in skill
    for text in (procedure_text(), prevalidate_text()):
        flat = " ".join(text.split())
        assert runs in flat and optimism in flat


def test_the_near_peak_warning_quotes_the_runs_on_the_device_generation() -> None:
    est = estimate_run(RunSpec(params="7B", tokens="100B", gpu="h100", gpu_count=8, mfu=0.9))
    seen = load_mfu_priors().observed("hopper", "dense")
    assert seen is not None and seen.scope == "hopper"
    (warning,) = [w for w in est.warnings if w.code == "mfu_near_peak"]
    assert (warning.numbers["low"], warning.numbers["high"]) == (seen.low, seen.high)
    text = render_estimate(est, detail="short")
    assert (f"the middle 80% of the {seen.n_runs} published dense runs on Hopper ran at "
            f"{seen.low:.2f}–{seen.high:.2f}") in text
    assert f"{0.9 / seen.high:.1f}–{0.9 / seen.low:.1f}x too optimistic" in text


@pytest.mark.parametrize("detail", ["short", "full"])
def test_the_estimate_says_the_prior_is_end_to_end_and_what_replaces_it(detail: str) -> None:
    est = estimate_run(RunSpec(params="7B", tokens="100B", gpu="a100", gpu_count=8))
    seen = est.mfu_used.prior.observed
    assert seen is not None and seen.scope == "ampere"
    text = " ".join(render_estimate(est, detail=detail).split())
    assert "A measured throughput" in text and "replaces it" in text
    if detail == "full":
        assert "include restarts" in text and "evaluation" in text
        assert f"{seen.n_runs} published dense runs on Ampere ran at {seen.low:.2f}" in text
    else:  # the short reply says it in fewer words (an estimate reply stays near 1,500 chars)
        assert "End to end (restarts included); the runs on Ampere ran at " \
               f"{seen.low:.2f}–{seen.high:.2f} (middle 80% of {seen.n_runs})" in text


def test_a_borrowed_prior_quotes_the_runs_of_the_generation_it_is_borrowed_from() -> None:
    # MI300X has no run: its prior is Hopper's, and so is the range quoted beside it (it quoted
    # every generation's, 0.13-0.44 of 73, beside "borrowed from Hopper")
    est = estimate_run(RunSpec(params="7B", tokens="100B", gpu="mi300x", gpu_count=8))
    prior = est.mfu_used.prior
    seen = prior.observed
    assert prior.scope == "nearest" and prior.borrowed_from == "Hopper"
    assert seen is not None and seen.scope == "hopper" and seen.family == "dense"
    text = " ".join(render_estimate(est, detail="short").split())
    assert "a prior borrowed from Hopper (uncalibrated: no published runs on CDNA 3 (MI300))" \
        in text
    assert f"the runs on Hopper ran at {seen.low:.2f}–{seen.high:.2f}" in text
    full = " ".join(render_estimate(est, detail="full").split())
    assert f"{seen.n_runs} published dense runs on Hopper ran at" in full
    # a handful of runs, all quoted, are counted as runs: it read "0.09–0.26 (7)"
    moe = estimate_run(RunSpec(params="16B", active_params="2.5B", tokens="1T", gpu="mi300x",
                               gpu_count=4))
    few = moe.mfu_used.prior.observed
    assert few is not None and few.spread == "all" and few.family == "moe"
    assert (f"the MoE runs on Hopper ran at {few.low:.2f}–{few.high:.2f} ({few.n_runs} runs)"
            in " ".join(render_estimate(moe, detail="short").split()))


def test_a_pooled_prior_quotes_every_generation_s() -> None:
    est = estimate_run(RunSpec(params="7B", tokens="100B", gpu="tpu-v5p", gpu_count=8))
    prior = est.mfu_used.prior
    seen = prior.observed
    assert prior.scope == "pooled"
    assert seen is not None and seen.scope == "all" and seen.label is None
    text = " ".join(render_estimate(est, detail="short").split())
    assert f"the runs of the calibration set ran at {seen.low:.2f}" in text
    assert f"of {seen.n_runs})" in text
    full = " ".join(render_estimate(est, detail="full").split())
    assert f"{seen.n_runs} published dense runs of the calibration set ran at" in full


def test_observed_ranges_are_the_middle_80_percent_of_the_runs_used() -> None:
    table = load_mfu_priors()
    hopper = sorted(r.end_to_end_mfu for r in table.runs
                    if r.used and r.generation == "hopper" and r.family == "dense")
    seen = table.observed("hopper", "dense")
    assert seen is not None and seen.n_runs == len(hopper) >= 10 and seen.spread == "middle_80"
    assert hopper[0] <= seen.low < seen.high <= hopper[-1] and seen.highest == round(hopper[-1], 2)
    inside = [v for v in hopper if seen.low - 0.005 <= v <= seen.high + 0.005]
    assert len(inside) >= 0.7 * len(hopper)


def test_an_moe_run_is_told_its_prior_is_the_dense_one() -> None:
    # it read "a prior for MoE from 26 published runs on Hopper": the 26 are dense runs, and the
    # MoE runs support no ratio under grouped cross-validation (mfu_priors.json)
    est = estimate_run(RunSpec(preset="mixtral-8x7b", tokens="1T", gpu="h100", gpu_count=128))
    prior = est.mfu_used.prior
    assert est.mfu_used.family == "moe" and prior.scope == "generation"
    text = " ".join(render_estimate(est, detail="short").split())
    assert f"a prior from {prior.n_runs} published dense runs on Hopper (no MoE ratio" in text
    assert "a prior for MoE" not in text


def test_a_size_outside_the_calibrated_range_is_named_with_the_size_used() -> None:
    # a 10M model read "×0.57 for 135M active parameters": the size used, not the model's
    est = estimate_run(RunSpec(params="10M", tokens="1B", gpu="rtx-3090", gpu_count=1))
    prior = est.mfu_used.prior
    assert prior.params_clamped and prior.params is not None and prior.params > 1e8
    text = " ".join(render_estimate(est, detail="short").split())
    assert "for 10M active parameters taken as 135M (the size term stops" in text


def test_an_fp8_run_says_the_published_range_is_of_the_bf16_peak() -> None:
    # "MFU: 0.13 ... the runs on Hopper ran at 0.09-0.32": a share of the FP8 peak beside shares
    # of the BF16 peak
    est = estimate_run(RunSpec(params="7B", tokens="1T", gpu="h100", gpu_count=64,
                               precision="fp8"))
    text = " ".join(render_estimate(est, detail="short").split())
    seen = est.mfu_used.prior.observed
    assert seen is not None
    assert f"ran at {seen.low:.2f}–{seen.high:.2f} of the BF16 peak" in text
    bf16 = estimate_run(RunSpec(params="7B", tokens="1T", gpu="h100", gpu_count=64))
    assert "of the BF16 peak (" not in " ".join(render_estimate(bf16, detail="short").split())


def _l40s_replies(every: bool) -> dict[str, str]:
    """The replies that name the MFU prior of a run on L40S (Ada Lovelace: no published run):
    the estimate's and the relay's; with ``every``, the alternatives', the plan's and the
    comparison's too."""
    from compute_budget.tools.relay import relay

    run = {"params": "7B", "tokens": "100B", "gpu": "l40s", "gpu_count": 16}
    est = estimate_run(RunSpec(**run))
    relayed = relay("estimate_run_cost", est)
    assert relayed is not None
    replies = {"short": render_estimate(est), "full": render_estimate(est, detail="full"),
               "relay": relayed["mfu_source"]}
    if not every:
        return replies
    from compute_budget import (
        CompareSpec,
        PlanSpec,
        compare_candidates,
        plan_run,
        suggest_alternatives,
    )
    from compute_budget.prompts import render_alternatives, render_comparison, render_plan

    plan = plan_run(PlanSpec(params="7B", tokens="100B", deadline_days=60, gpus=["l40s"]))
    compared = compare_candidates(CompareSpec(candidates=[
        {**run, "name": name, "predicted_gain": gain, "gain_uncertainty": 0.3}
        for name, gain in (("ada", 1.0), ("ada-2", 0.5))]))
    return {**replies, "alternatives": render_alternatives(suggest_alternatives(RunSpec(**run))),
            "plan": render_plan(plan), "compare": render_comparison(compared)}


@pytest.mark.parametrize("every", [
    False, pytest.param(True, marks=pytest.mark.slow)])  # every door: about 2 s
def test_an_uncalibrated_device_is_said_to_be_one_in_the_same_words_everywhere(
        every: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # L40S (Ada Lovelace, no published run) read "a pooled prior" with no caveat in the
    # estimate, while alternatives marked MI300X and B300 "uncalibrated": every reply now says
    # it, in the words MfuPrior.uncalibrated decides (mfu_priors.json: no used run on Ada)
    from compute_budget.skill.hardware import mfu as mfu_module

    prior = estimate_run(RunSpec(params="7B", tokens="100B", gpu="l40s", gpu_count=16)
                         ).mfu_used.prior
    assert prior.scope == "pooled" and prior.runs_on_generation == 0 and prior.uncalibrated
    words = "uncalibrated: no published runs on Ada Lovelace"
    for name, text in _l40s_replies(every).items():
        assert words.lower() in " ".join(text.split()).lower(), name
    # one place decides: a scope no longer counted as uncalibrated is said so nowhere
    monkeypatch.setattr(mfu_module, "UNCALIBRATED_SCOPES", ())
    for name, text in _l40s_replies(every).items():
        assert "uncalibrated" not in text.lower(), name
