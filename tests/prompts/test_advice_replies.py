# ruff: noqa: E501  (the snapshots hold rendered markdown verbatim)
"""The verdict and the alternatives as an assistant relays them (issue 16, item 5): kill
criteria that can kill, a budget line apart from them, a marginal run's trial with its stop
rule, the chance of a gain in plain words, and the different idea as one line under the table.
Regenerate with ``--inline-snapshot=fix`` after an intended change, then read the diff."""

from inline_snapshot import snapshot

from compute_budget import (
    RunSpec,
    ScalingPoint,
    decision_summary,
    estimate_run,
    fit_scaling_law,
    suggest_alternatives,
)
from compute_budget.prompts import render_alternatives, render_decision

# The stage-3 skill's worked example, with its own MFU and price.
WORKED = RunSpec(params="7B", tokens="100B", gpu="a100", gpu_count=8, mfu=0.4,
                 usd_per_gpu_hour=1.5)
FINE_TUNE = WORKED.model_copy(update={"kind": "fine-tune"})


def _section(reply: str, start: str, end: str) -> str:
    return reply[reply.index(start):reply.index(end)]


def test_a_marginal_fine_tune_tries_fewer_tokens_with_its_stop_rule() -> None:
    # "we score 55; it will reach 55.6 ± 0.7": marginal (0.6 < σ); 30% of 0.6 = 0.18 by 30B
    d = decision_summary(estimate_run(FINE_TUNE), None, 0.7, metric_now=55,
                         metric_expected=55.6, budget_usd=40_000)
    assert render_decision(d) == snapshot("""\
### Verdict: **MARGINAL** (fine-tune)

The net gain 0.6 ± 0.7 does not clear its uncertainty: 80% that it gives any gain, with $21,034 at stake.

| | |
|---|---|
| Gain used | 55 → 55.6 (higher is better): 0.6 ± 0.7 (1σ), over a baseline to beat of 0: net 0.6 |
| Chance it beats the baseline | 80% |
| Cost | $14,022 ($21,034 with failure budget), 9,348 GPU-h |
| Run as priced | 4096 tokens per sequence (assumed), micro-batch 1, bf16, ZeRO 1, TP 1 × PP 1, recompute none |
| Net gain per $1M | 42.8 units of your metric (28.5 with failures) |
| Budget | $40,000: within it |

Rule: go when gain − σ ≥ baseline and gain > σ (about 84% or more to beat the baseline); no-go when gain + σ < baseline (under 16%), when it does not fit, takes over a year, is worth less than it costs or exceeds the budget; marginal in between.

**Kill criteria** (if you launch it):
- Throughput at least 1,203 tokens/s per device (the slow end of the MFU band): below it, stop and fix before going on.
- By day 4.9: at least 4.08B tokens trained, at that floor.
- At 10B tokens (10% of them, about day 4.9): the metric above where it started: the low end of the gain, 0.6 − 0.7 = −0.1, allows no gain, so that is the only line the prediction draws. A run on course for the predicted 0.6 is at least 0.06 up by then. Measure on a checkpoint whose learning rate has decayed (or after a short cooldown).

Budget: about $1,411 spent by day 4.9 at the planned rate (4% of the budget): a pace to plan by, not a reason to stop.

**Next:**
- Try 30% of the tokens first (30B tokens, about $6,310 with the failure budget) and go on only if, by then, the metric is at least 0.18 above where it started (at least 55.18): 30% of the predicted 0.6, the least a run on course for it has made by 30% of its tokens, if its gains come no later than linearly in the tokens (learning curves flatten). Measure on a checkpoint whose learning rate has decayed (or after a short cooldown). Short of it, stop: the run is heading for less than predicted, and the other 70% of the cost is saved.
- What will the gain be used for (a paper, a deployment, a contract)?
- Price the cheaper alternatives for this kind of run.
""")


def test_a_go_from_a_model_checks_the_metric_at_ten_percent_of_the_tokens() -> None:
    d = decision_summary(estimate_run(FINE_TUNE), 1.5, 1.2)
    assert _section(render_decision(d), "**Kill criteria**", "**Next:**") == snapshot("""\
**Kill criteria** (launch and watch):
- Throughput at least 1,203 tokens/s per device (the slow end of the MFU band): below it, stop and fix before going on.
- By day 4.9: at least 4.08B tokens trained, at that floor.
- At 10B tokens (10% of them, about day 4.9): the metric at least 0.03 above where it started, 10% of the low end of the gain, 1.5 − 1.2 = 0.3. Short of it, the run is heading for less than that low end, if its gains come no later than linearly in the tokens (learning curves flatten). A run on course for the predicted 1.5 is at least 0.15 up by then. Measure on a checkpoint whose learning rate has decayed (or after a short cooldown).

Budget: about $1,411 spent by day 4.9 at the planned rate: a pace to plan by, not a reason to stop.

""")


def test_a_fit_in_compute_alone_sets_the_bar_at_the_end() -> None:
    # complete small runs at 20 tokens per parameter on Hoffmann et al.'s L(N, D)
    points = [ScalingPoint(compute=120 * n * n,
                           loss=1.69 + 406.4 / n**0.34 + 410.7 / (20 * n) ** 0.28)
              for n in (20e6, 40e6, 80e6, 160e6, 320e6, 640e6)]
    fit = fit_scaling_law(points, target_params=1e9, target_tokens=20e9, baseline_loss=2.7)
    spec = RunSpec(params="1B", tokens="20B", gpu="a100", gpu_count=8, mfu=0.4,
                   usd_per_gpu_hour=1.5)
    d = decision_summary(estimate_run(spec), fit.predicted_gain, fit.gain_uncertainty, fit=fit)
    assert _section(render_decision(d), "**Kill criteria**", "**Next:**") == snapshot("""\
**Kill criteria** (launch and watch):
- Throughput at least 6,552 tokens/s per device (the slow end of the MFU band): below it, stop and fix before going on.
- After 3.36 h: at least 634M tokens trained, at that floor.
- By the end: loss at most 2.581, the edge of the scaling fit's interval at this run (it expects 2.58). A fit in compute alone gives no level at a checkpoint: each small run was a complete run of its own size, and a checkpoint of this one (a larger model on fewer tokens) sits above their curve. Give each small run's parameters and tokens (seven runs or more, sizes and token counts varied independently) for a level at a checkpoint.

Budget: about $40.32 spent in the first 3.36 h at the planned rate: a pace to plan by, not a reason to stop.

""")


def test_alternatives_of_a_fine_tune_with_its_gain() -> None:
    report = suggest_alternatives(FINE_TUNE, predicted_gain=0.6, gain_uncertainty=0.7)
    assert render_alternatives(report) == snapshot("""\
### Cheaper alternatives to fine-tuning: 7B params × 100B tokens on 8 × A100 80GB SXM

Original: $14,022 ($21,034 with failure budget), 48.7 days, 9,348 GPU-h.

| alternative | what changes | days | GPU-h | cost | saving |
|---|---|---|---|---|---|
| Fewer tokens first | 30B tokens (30% of the plan) first; stop unless the eval metric has moved by at least 0.18 by then (30% of the predicted gain 0.6). Learning curves flatten, so a run that will reach its gain has made at least that share of it by then, if its gains come no later than linearly in the tokens (compare at a checkpoint whose learning rate has decayed); going on costs the rest of the plan | 14.6 | 2,804 | $4,207 | $9,816 (70%) if it stops |
| LoRA instead of a full fine-tune | rank 16 on every linear layer (42.4M trainable params); needs 39.0 GiB per device at ZeRO 0, TP 1 × PP 1 × DP 8, recompute none, micro-batch 1 (up to 2 fit). LoRA learns less and forgets less than full training (Biderman et al. 2024, "LoRA Learns Less and Forgets Less"): compare both on a slice first | 32.8 | 6,289 | $9,433 | $4,589 (33%) |
| Other hardware | same FLOPs on 8 × MI300X at $2.59/GPU-h (on-demand, 2026-10; gpu-mi300x8-1536gb of 8 devices), MFU 0.40 (uncalibrated: no published runs on CDNA 3 (MI300); your MFU carried over) | 11.6 | 2,231 | $5,778 | $8,244 (59%); uncalibrated: from no saving ($10,306 more) to $8,244 |
| Other hardware | same FLOPs on 8 × GB200 (per GPU in NVL72) at $10.50/GPU-h (on-demand, 2026-09; 2 × GB200 NVL72 instance (4 devices each)), MFU 0.40 (uncalibrated: too few published runs on Blackwell; your MFU carried over) | 6.08 | 1,167 | $12,250 | $1,772 (13%); uncalibrated: from no saving ($37,557 more) to $1,772 |

A different idea: the same money buys about 3.3 of the fewer-tokens runs above; spend it on another experiment instead if one promises more gain per dollar (the compare tool ranks candidate runs by it).

Each row uses the same MFU source as the original (yours) and the same failure budget; saving is against the nominal cost.

Other hardware is compared at on-demand prices only (devices without an on-demand quote are left out); your run is priced at the rate you gave. An uncalibrated device has too few published training runs (or none) for a prior of its own: its MFU is borrowed from other hardware, so its saving may be none.
""")


def test_alternatives_without_a_price_say_what_is_unknown() -> None:
    report = suggest_alternatives(RunSpec(params="7B", tokens="100B", gpu="h800", gpu_count=8,
                                          mfu=0.4))
    reply = render_alternatives(report)
    small = next(line for line in reply.splitlines() if line.startswith("| Smaller scale"))
    assert small.endswith("| unknown | unknown in dollars; 75% fewer GPU-h |")
    assert "A different idea: the same GPU-hours buy about 4 smaller-scale runs" in reply
    assert "Savings in dollars are unknown where a price is unknown." in reply
    priced = render_alternatives(suggest_alternatives(WORKED))
    assert "unknown" not in priced


def test_a_verdict_without_kill_criteria_does_not_point_at_them() -> None:
    # A bare cost (estimate_run_cost: no tokens, no wall-time band) gets no kill criteria, so
    # its next steps do not say "with the kill criteria above"; the trial still has its rule.
    from compute_budget import estimate_run_cost

    cost = estimate_run_cost(7e9, 1e11, 8, 312, 0.4, 1.50)
    for kind, gain in (("pretrain", 0.5), ("pretrain", 2.0), ("fine-tune", 0.5)):
        reply = render_decision(decision_summary(cost, gain, 0.7, kind=kind))
        assert "**Kill criteria**" not in reply and "kill criteria above" not in reply, kind
    reply = render_decision(decision_summary(cost, 0.5, 0.7, kind="fine-tune"))
    assert "Try 30% of the tokens first (about $6,310 with the failure budget) and go on only" \
           " if, by then, the metric is at least 0.15 above where it started" in reply


def test_a_no_go_below_a_zero_baseline_names_no_cheaper_option() -> None:
    # gain -1 ± 0.3 against the default baseline 0: there is no cheaper option to point to
    e = estimate_run(FINE_TUNE)
    alone = render_decision(decision_summary(e, -1.0, 0.3))
    assert "does not spend" not in alone and "cheaper option" not in alone
    assert "the run gives no gain: do not spend on it as planned" in alone
    against = render_decision(decision_summary(e, 1.0, 0.3, 2.0))
    assert "The cheaper option already gives more" in against


def test_a_marginal_gain_at_or_below_the_baseline_is_not_sent_to_a_study() -> None:
    # a pretraining run at -0.01 ± 0.01 over 0: "2 runs ... would bring σ under the net gain"
    # cannot make it a go (a run from a model still tries 30% of its tokens first)
    e = estimate_run(FINE_TUNE.model_copy(update={"kind": "pretrain"}))
    d = decision_summary(e, -0.01, 0.01)
    codes = [s.code for s in d.next_steps]
    assert d.verdict == "marginal" and "no_expected_gain" in codes
    assert not {"small_study", "run_is_the_experiment", "fewer_tokens_first"} & set(codes)
    assert "Its expected gain is not above the baseline" in render_decision(d)
    above = decision_summary(e, 0.01, 0.02)
    assert "no_expected_gain" not in [s.code for s in above.next_steps]
