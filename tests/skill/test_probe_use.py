"""Issue 20 item 2: a probe's measurement in the estimate, the verdict, the split and the plan.

The probe file here (``tests/fixtures/probe_h100_llama-3.2-1b.json``) is hand-made in the
format ``compute-budget probe`` writes, not measured: Llama 3.2 1B on one H100 SXM at 4096
tokens, micro-batch 1, with numbers chosen to be checkable — 415.59 TFLOP/s (MFU 0.42 of the
catalog's 989.5), activations 1.10 × the formula's per layer, 3.5 GB of overhead. The torch side
that measures real ones is tested in ``tests/probe/``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from compute_budget.prompts import render_estimate, render_probe, render_split
from compute_budget.skill import (
    BudgetTableSpec,
    PlanSpec,
    ProbeResult,
    ProbeSpec,
    RunSpec,
    alternatives_for,
    budget_table,
    estimate_run,
    plan_run,
    probe_report,
)
from compute_budget.skill.advice.alternatives import AlternativesSpec

FIXTURE = Path(__file__).parent.parent / "fixtures" / "probe_h100_llama-3.2-1b.json"
PROBE: dict[str, Any] = json.loads(FIXTURE.read_text())
RUN: dict[str, Any] = {"preset": "llama-3.2-1b", "tokens": "100B", "gpu": "h100-sxm",
                       "gpu_count": 8}


def test_the_estimate_uses_the_measured_mfu_and_activations() -> None:
    plain = estimate_run(RunSpec(**RUN, seq_len=4096))
    probed = estimate_run(RunSpec(**RUN, probe=PROBE))
    used = probed.mfu_used
    assert used.origin == "measured" and plain.mfu_used.origin == "prior"
    # one device, no TP/PP/ZeRO-3 at this layout: the MFU is the measured one as is
    assert probed.memory is not None and probed.memory.tp == 1 and probed.memory.zero < 3
    assert probed.mfu == pytest.approx(415.59 / 989.5, rel=1e-6)
    assert used.probe is not None and used.probe.communication == pytest.approx(1.0)
    # restarts and evaluation are not in a measured step: the slow end stays the prior's low
    assert used.range == (pytest.approx(plain.mfu_used.prior.low), pytest.approx(probed.mfu))
    assert probed.gpu_hours == pytest.approx(plain.gpu_hours * plain.mfu / probed.mfu, rel=1e-6)
    measured = probed.memory.measured
    assert measured is not None and measured.activation_scale == pytest.approx(1.10, rel=1e-6)
    assert plain.memory is not None
    bytes_ = probed.memory.per_gpu_bytes
    assert bytes_.overhead == pytest.approx(3.5e9)  # no sharding at ZeRO 0: all of it
    assert bytes_.total == pytest.approx(bytes_.weights + bytes_.gradients + bytes_.optimizer
                                         + bytes_.activations + bytes_.overhead)
    layers = (bytes_.activations - probed.memory.logits_bytes) / (
        plain.memory.per_gpu_bytes.activations - plain.memory.logits_bytes)
    assert layers == pytest.approx(1.10, rel=1e-6)


def test_the_reply_says_measured_in_the_mfu_and_memory_lines() -> None:
    text = render_estimate(estimate_run(RunSpec(**RUN, probe=PROBE)))
    mfu = next(line for line in text.splitlines() if line.startswith("- MFU:"))
    memory = next(line for line in text.splitlines() if line.startswith("- Memory:"))
    assert "measured on 1 × NVIDIA H100 80GB HBM3, 2026-12-01" in mfu
    assert "not in it" in mfu and "prior" not in text.split("- MFU:")[0]
    assert "activations measured on 1 × NVIDIA H100 80GB HBM3" in memory and "×1.10" in memory
    full = render_estimate(estimate_run(RunSpec(**RUN, probe=PROBE)), detail="full")
    assert "compute-budget probe" in full and "0.0731 s" in full


def test_the_layouts_communication_is_still_modelled() -> None:
    """A probe on one device measures no collectives: TP's cost divides the measured MFU."""
    tp = estimate_run(RunSpec(**RUN, probe=PROBE, tp=2))
    assert tp.mfu_used.probe is not None
    assert tp.mfu_used.probe.communication > 1.01
    assert tp.mfu == pytest.approx(tp.mfu_used.probe.step_mfu / tp.mfu_used.probe.communication)


def test_sharded_states_take_their_share_of_the_overhead() -> None:
    zero3 = estimate_run(RunSpec(**RUN, probe=PROBE, zero=3))
    assert zero3.memory is not None and zero3.memory.per_gpu_bytes.overhead is not None
    assert zero3.memory.per_gpu_bytes.overhead < 3.5e9 / 4


@pytest.mark.parametrize(("change", "words"), [
    ({"gpu": "a100"}, "a probe prices only the device it ran on"),
    ({"seq_len": 2048}, "probe again at seq_len 2048"),
    ({"recompute": "full"}, "probe again at recompute full"),
    ({"preset": "llama-3.2-3b"}, "probe the same model"),
    ({"mfu": 0.3}, "not together with mfu"),
    ({"precision": "fp8"}, "probe at the run's precision"),
])
def test_a_probe_of_another_run_is_refused(change: dict[str, Any], words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        RunSpec(**{**RUN, "probe": PROBE, **change})


def test_the_probe_sets_the_context_and_recomputation_left_out() -> None:
    spec = RunSpec(**RUN, probe=PROBE)
    assert spec.seq_len == 4096 and spec.recompute == "none"
    assert RunSpec(**RUN, probe=json.dumps(PROBE)).probe == spec.probe  # its JSON text


@pytest.mark.parametrize(("bad", "field"), [
    ({"format": "compute-budget-probe/0"}, "probe.format"),
    ({"mfu": 0.9}, "mfu is not achieved_tflops / peak_tflops"),
    ({"memory": {**PROBE["memory"], "overhead_bytes": 10**14}}, "exceed peak_bytes"),
])
def test_a_damaged_probe_file_is_named(bad: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError, match=field):
        RunSpec(**RUN, probe={**PROBE, **bad})


def test_alternatives_elsewhere_carry_the_mfu_not_the_measurement() -> None:
    report = alternatives_for(AlternativesSpec(**RUN, probe=PROBE, kind="fine-tune"))
    assert report.original.mfu_used.origin == "measured"
    others = [a for a in report.alternatives if a.kind in ("other_hardware", "lora")]
    assert others
    for row in others:
        assert row.estimate is not None and row.estimate.mfu_used.origin == "user"
        assert row.estimate.mfu_used.probe is None


def test_the_split_prices_every_size_at_the_measured_mfu() -> None:
    table = budget_table(BudgetTableSpec(budget_usd=50_000, gpu="h100-sxm", probe=PROBE))
    assert table.rate_basis == "gpu_with_probe"
    assert table.mfu_used is not None and table.mfu_used.origin == "measured"
    assert table.mfu_used.range[1] == pytest.approx(415.59 / 989.5, rel=1e-6)
    assert "measured on 1 × NVIDIA H100 80GB HBM3" in render_split(table)
    with pytest.raises(ValidationError, match="a probe prices only the device it ran on"):
        BudgetTableSpec(budget_usd=50_000, gpu="a100", probe=PROBE)


def test_the_plan_takes_a_probe_for_its_one_device_type() -> None:
    report = plan_run(PlanSpec(preset="llama-3.2-1b", tokens="100B", deadline_days=10,
                               gpus=["h100-sxm"], probe=PROBE))
    assert report.plans and report.plans[0].estimate.mfu_used.origin == "measured"
    with pytest.raises(ValidationError, match="only with a single accelerator type"):
        PlanSpec(preset="llama-3.2-1b", tokens="100B", deadline_days=10, probe=PROBE)


def test_the_probe_report_sets_the_measurement_beside_the_prior_and_formula() -> None:
    report = probe_report(ProbeSpec(preset="llama-3.2-1b", seq_len=4096),
                          ProbeResult.model_validate(PROBE), file="probe.json")
    assert report.prior is not None and report.prior.generation == "hopper"
    assert report.activation_scale == pytest.approx(1.10, rel=1e-6)
    text = render_probe(report)
    assert "| Step time | 0.0731 s" in text and "416 TFLOP/s" in text
    assert "the measured 0.42 replaces it" in text and "`--probe probe.json`" in text
    assert f"(calibration set of {report.prior_as_of})" in text and report.prior_as_of
    assert "Not measured on one device" in text


def test_the_probe_report_says_when_the_priors_fast_end_is_held() -> None:
    # The same measurement, as if taken on an A100, priced for a 70B model: the Ampere prior's
    # fast end (central × its band's fast factor) passes the fastest published run, so the
    # range it quotes ends at that cap and the reply says why; at 1B it does not.
    a100 = {**PROBE, "device": {**PROBE["device"], "name": "NVIDIA A100-SXM4-80GB",
                                "accelerator": "a100-80gb"},
            "achieved_tflops": 140.4, "peak_tflops": 312.0, "mfu": 140.4 / 312.0}
    big = probe_report(ProbeSpec(preset="llama-2-70b", seq_len=4096),
                       ProbeResult.model_validate(a100))
    assert big.prior is not None and big.prior.fast_end_cap is not None
    assert big.prior.high == pytest.approx(big.prior.fast_end_cap)
    text = render_probe(big)
    assert (f"{big.prior.high:.2f}), end to end from" in text
            and "keeps the prior's low. The MFU band's fast end is held at "
            f"{big.prior.fast_end_cap:.2f}, the fastest published run end to end.\n"
            "- Activations:" in text)
    small = probe_report(ProbeSpec(preset="llama-3.2-1b", seq_len=4096),
                         ProbeResult.model_validate(a100))
    assert small.prior is not None and small.prior.fast_end_cap is None
    assert "keeps the prior's low.\n- Activations:" in render_probe(small)


def test_the_stack_is_the_code_the_probe_ran() -> None:
    """A probe measured transformers: on 64 devices (where the default stack would be megatron)
    the run is sized on the hf stack with the measured activations; a run that asks for
    megatron keeps the formula's activations and still adds the measured overhead."""
    many = estimate_run(RunSpec(**{**RUN, "gpu_count": 64}, probe=PROBE, tp=2))
    assert many.memory is not None and many.memory.stack == "hf"
    assert many.memory.measured is not None and many.memory.measured.applied
    assert many.memory.measured.activation_scale == pytest.approx(1.10, rel=1e-6)
    megatron = estimate_run(RunSpec(**{**RUN, "gpu_count": 64}, probe=PROBE, tp=2,
                                    stack="megatron"))
    plain = estimate_run(RunSpec(**{**RUN, "gpu_count": 64}, seq_len=4096, tp=2,
                                 stack="megatron"))
    assert megatron.memory is not None and plain.memory is not None
    assert megatron.memory.measured is not None and not megatron.memory.measured.applied
    assert megatron.memory.per_gpu_bytes.activations == pytest.approx(
        plain.memory.per_gpu_bytes.activations)
    assert megatron.memory.per_gpu_bytes.overhead is not None
    assert "the probe measured transformers" in render_estimate(megatron)


def test_the_probe_report_on_an_uncalibrated_device_says_the_prior_is_borrowed() -> None:
    # The same measurement as if taken on a B200: Blackwell has too few published runs, so
    # the prior is Hopper's and the reply must not call it calibrated on this device.
    b200 = {**PROBE, "device": {**PROBE["device"], "name": "NVIDIA B200", "accelerator": "b200"}}
    report = probe_report(ProbeSpec(preset="llama-3.2-1b", seq_len=4096),
                          ProbeResult.model_validate(b200))
    assert report.prior is not None and report.prior.uncalibrated
    text = render_probe(report)
    assert "the calibrated prior on this device" not in text
    assert ("- MFU: the prior on this device, borrowed from Hopper (uncalibrated: too few "
            "published runs on Blackwell), is " in text)
    h100 = render_probe(probe_report(ProbeSpec(preset="llama-3.2-1b", seq_len=4096),
                                     ProbeResult.model_validate(PROBE)))
    assert "- MFU: the calibrated prior on this device is " in h100
