"""Replies mended after the reviews of 2026-12-07 (helpers 56 and 57, using the MCP tools and
the CLI as users do).

The fastest plan says when its devices span machines whose network is not modelled, as the
cheapest does: 152 × L4 for a QLoRA of Llama-3.1-8B are 38 g6.12xlarge of 4, and the
structured plan carried the pcie_cluster note while neither the text nor the relay said it
(review helper-56, finding 6)."""

from __future__ import annotations

from compute_budget import RunSpec, estimate_run
from compute_budget.prompts import render_estimate, render_plan
from compute_budget.skill import PlanSpec, plan_run
from compute_budget.tools.relay import relay


def test_the_fastest_plan_names_its_unmodelled_network() -> None:
    report = plan_run(PlanSpec(preset="llama-3.1-8b", tokens="500M", lora_rank=16,
                               weights_bits=4, deadline_days=7, gpus=["l4", "t4"]))
    fast, cheap = report.fastest[0], report.plans[0]
    assert fast.accelerator == "L4" and fast.gpu_count > 8 and "pcie_cluster" in fast.notes
    assert "pcie_cluster" not in cheap.notes  # 4 × L4: one g6.12xlarge
    text = render_plan(report)
    fastest = next(line for line in text.splitlines() if line.startswith("**Fastest"))
    assert fastest.endswith("Its devices span machines whose network is not modelled: ask the "
                            "seller what joins them.")
    told = relay("plan_run", report)
    assert told is not None
    assert told["headline"].endswith("(over machines whose network is not modelled).")


def test_the_slow_end_names_its_cost_and_the_budget_it_breaks() -> None:
    # 70B x 2T in 30 days under $3M: the cheapest, 936 MI300X, takes 61.6 days at the MFU band's
    # slow end; the markdown said "about 1,928 devices would meet it even there, at about the same
    # cost", where that cost, about twice the plan's, is over the budget (review helper-57)
    report = plan_run(PlanSpec(params="70B", tokens="2T", deadline_days=30, budget_usd=3e6))
    cheap = report.plans[0]
    worst = cheap.estimate.dollar_cost_with_failures_range[1]
    assert cheap.gpu_count_for_slow_end is not None
    assert cheap.dollar_cost_with_failures is not None
    assert worst > 3e6 > cheap.dollar_cost_with_failures
    said = f"; at that MFU the run costs about ${worst:,.0f} with the failure budget, over the " \
           "$3,000,000 budget."
    assert said in render_plan(report)
    told = relay("plan_run", report)
    assert told is not None and told["slow_end"].endswith(said)


def test_a_flat_prior_names_its_source_and_the_flop_count_it_assumes() -> None:
    # "MFU: 0.15, the skill's flat prior." gave no source, and 6·N·D, a transformer's count,
    # was applied to a CNN without a word (review helper-57, finding 6)
    text = render_estimate(estimate_run(RunSpec(params="7B", tokens="1T", gpu="h100",
                                                gpu_count=8, family="cnn")))
    assert ("MFU: 0.15, the skill's flat prior for a CNN-heavy model, 0.10–0.20 (the "
            "compute-budget skill's stage-3 rule of thumb") in text
    assert "- FLOPs: 6·N per token, a transformer's count; a CNN-heavy model's depend" in text
    dense = render_estimate(estimate_run(RunSpec(params="7B", tokens="1T", gpu="h100",
                                                 gpu_count=8)))
    assert "- FLOPs: 6·N per token" not in dense


def test_an_under_trained_named_model_is_asked_for_its_kind() -> None:
    # Qwen3-14B on 2B tokens without a kind was warned as an under-trained pre-training run
    # (a 1.22B model on 24.3B tokens would do better), the advice of a run from scratch given
    # to what is most likely a fine-tune (review helper-56, finding 3)
    spec = {"preset": "qwen3-14b", "tokens": "2B", "gpu": "a100-40gb", "gpu_count": 8}
    asked = render_estimate(estimate_run(RunSpec(**spec)))
    assert "the default kind: give the kind (fine-tune, continued-pretrain) if it tunes" in asked
    given = render_estimate(estimate_run(RunSpec(**spec, kind="pretrain")))
    assert "tokens per parameter: under-trained" in given and "the default kind" not in given


def test_the_relay_of_a_flat_prior_says_what_its_flops_assume() -> None:
    # the relay read "the skill's flat prior for CNN-heavy model (…)" with no word on 6·N per
    # token (review helper-63, finding 9)
    told = relay("estimate_run_cost", estimate_run(RunSpec(params="7B", tokens="1T", gpu="h100",
                                                           gpu_count=8, family="snn")))
    assert told is not None
    assert told["mfu_source"].startswith("0.15, the skill's flat prior for a spiking (SNN) model")
    assert "its FLOPs are 6·N per token, a transformer's count" in told["mfu_source"]


def test_the_default_failure_budget_says_it_is_a_rule_of_thumb() -> None:
    # a CLI reviewer (2026-12-08): the ×1.5 in bold had no source beyond "a failed or repeated
    # run"; its source is the stage-3 compute-budget skill ("assume 1.5× nominal cost to cover
    # a re-run", ../shared/seeds), a rule of thumb and not a measured rate
    spec = RunSpec(params="7B", tokens="100B", gpu="a100", gpu_count=8)
    text = " ".join(render_estimate(estimate_run(spec), detail="full").split())
    assert "The default ×1.5 is a planning rule of thumb" in text and "give yours" in text
    given = spec.model_copy(update={"failure_budget": 1.2})
    text = " ".join(render_estimate(estimate_run(given), detail="full").split())
    assert "Failure budget: ×1.20" in text and "rule of thumb" not in text
