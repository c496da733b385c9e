"""Every reply template, snapshot-tested on fixed inputs (inline-snapshot).

Regenerate after an intended change with ``uv run pytest --inline-snapshot=fix``, then read the
diff: these are the words users see.
"""

import pytest
from inline_snapshot import snapshot
from jinja2 import UndefinedError

from compute_budget import (
    BudgetTableSpec,
    MemorySpec,
    RunSpec,
    budget_table,
    decision_summary,
    estimate_memory,
    estimate_run,
    get_accelerator,
    suggest_alternatives,
)
from compute_budget.prompts import (
    render,
    render_accelerators,
    render_alternatives,
    render_decision,
    render_estimate,
    render_memory,
    render_split,
)
from compute_budget.prompts.render import fmt_count, fmt_flops, fmt_hours, fmt_num, fmt_usd

# The stage-3 skill's worked example, with its own MFU and price.
WORKED = RunSpec(params="7B", tokens="100B", gpu="a100", gpu_count=8, mfu=0.4,
                 usd_per_gpu_hour=1.5)


def test_estimate_template() -> None:
    assert render_estimate(estimate_run(WORKED), detail="full") == snapshot("""\
### Run estimate: 7B params × 100B tokens on 8 × A100 80GB SXM (bf16)

| | estimate | range (MFU 0.40 – 0.16) |
|---|---|---|
| Compute | 4.20 × 10²¹ FLOPs | |
| Wall time | 1,169 h (48.7 days) | 1,169 – 2,885 h (48.7 – 120 days) |
| GPU-hours | 9,348 GPU-h | 9,348 – 23,082 GPU-h |
| Cost | $14,022 | $14,022 – $34,623 |
| Cost with failure budget (×1.50) | **$21,034** | $21,034 – $51,935 |
| Energy | 5,833 kWh, 2.80 t CO2e | 5,833 – 14,403 kWh |

**Assumptions**
- Compute: 6 × parameters = 4.20 × 10¹⁰ FLOPs per token (2 forward + 4 backward per parameter; Kaplan et al. 2020). Attention and the LM head are not counted separately: give a config or preset for them.
- Peak: 312 TFLOP/s dense bf16 per device (the device's default training precision). Source (catalog of 2026-12-01): NVIDIA A100 datasheet: BF16 312 dense / 624 sparse; 80GB HBM2e 2,039 GB/s (SXM; PCIe 80GB is 1,935 GB/s). No FP8.
- MFU: 0.40, given by you. For comparison, the dense prior is 0.16–0.49; the range above spans both.
- Price: $1.50 per GPU-hour, given by you.
- Failure budget: ×1.50 on top of the nominal cost, for a failed or repeated run. The default ×1.5 is a planning rule of thumb (half the run again; the stage-3 compute-budget skill this tool grew from), not a measured failure rate: give yours.
- Throughput implied: 125 TFLOP/s and 2,971 tokens/s per device. An MFU or throughput measured over good steps is an upper bound on end-to-end speed: restarts, evaluation and stalls come on top.
- Energy: 400 W per device (NVIDIA A100 datasheet (via glennklockwood.com processor notes and a cloud provider's spec table): the 80GB SXM4 part has the 40GB part's power, 400 W maximum (PCIe 80GB: 300 W); an upper bound, devices only), PUE 1.56 (Uptime Institute Global Data Center Survey 2024: operators reported an average annual PUE of 1.56 for their largest data center (confirmed in Statista's summary of the survey; Uptime Intelligence Update 221 gives 1.58 for 2023 and 1.55-1.59 every year since 2020)), 0.480 kg CO2e/kWh (Ember Global Electricity Review 2024: the CO2 intensity of global power generation was 480 gCO2/kWh in 2023, down from 486 in 2022 (confirmed in a summary of the review; Statista, citing Ember, gives 481 g/kWh for 2023). Ember counts lifecycle emissions in CO2 equivalents). The board power at its maximum for the whole run overstates what devices draw on average; host CPUs, network and storage are not counted, nor the failure budget's re-runs.
- Defaults used: --mfu-convention=6n (default); --precision=bf16 (device default); --seq-len=4096 (default); --failure-budget=1.5 (default); --kind=pretrain (default); --stack=hf (default for this run); --pue=1.56 (default); --grid-kg-co2-per-kwh=0.48 (default); --zero/--tp/--pp/--recompute/--offload=searched (memory check).
- Memory: 61.2 GiB of 80.0 GiB per device at ZeRO 1, TP 1 × PP 1 × DP 8, recompute none, micro-batch 1, the cheapest layout that fits; shape guessed from N. The memory tool has the breakdown.

**Next:** what gain should this run produce (in your metric, higher is better: accuracy points, or a loss reduction as a positive number), how uncertain is it (±1σ), and what does the cheapest alternative already give? With those, the verdict weighs the gain against the cost.
""")


def test_estimate_template_with_prior_catalog_price_and_warning() -> None:
    spec = RunSpec(params="47B", active_params="13B", tokens="1T", gpu="h100", gpu_count=64,
                   peak_tflops=1979)
    assert render_estimate(estimate_run(spec), closing=False, detail="full") == snapshot("""\
### Run estimate: 47B params (13B active) × 1T tokens on 64 × H100 SXM (bf16)

| | estimate | range (MFU 0.32 – 0.11) |
|---|---|---|
| Compute | 7.80 × 10²² FLOPs | |
| Wall time | 803 h (33.5 days) | 531 – 1,614 h (22.1 – 67.2 days) |
| GPU-hours | 51,400 GPU-h | 34,001 – 103,286 GPU-h |
| Cost | $205,088 | $135,664 – $412,110 |
| Cost with failure budget (×1.50) | **$307,632** | $203,495 – $618,165 |
| Energy | 56,129 kWh, 26.9 t CO2e | 37,129 – 112,788 kWh |

**Assumptions**
- Compute: 6 × active parameters = 7.80 × 10¹⁰ FLOPs per token (2 forward + 4 backward per parameter; Kaplan et al. 2020). Attention and the LM head are not counted separately: give a config or preset for them.
- Peak: 1,979 TFLOP/s bf16 per device (the device's default training precision). Source: given by you
- MFU: 0.21 — a prior, not a measurement. The Hopper dense prior for MoE (26 published runs, 0.21 at 10B active parameters, ×1.35 per tenfold more (one slope fitted across generations)) at the active parameters with no MoE ratio (the 8 published MoE runs, on Hopper and TPU v4, do not support one under grouped cross-validation), with a band of ÷ 2.02 to × 1.51. It is end to end: the published runs' GPU-hours include restarts, evaluation and downtime, so it sits below the MFU of good steps; the 7 published MoE runs on Hopper ran at 0.09–0.26 of the BF16 dense peak. Source: compute-budget calibration set calibration_runs.csv: 114 published training runs from papers, model cards and technical reports, GPU-hours as reported or derived from device count × duration as each row says, 2026-12-06. Family moe inferred (fewer active than total parameters). A measured throughput (achieved TFLOP/s from a one-step benchmark) or MFU replaces it.
- Price: $3.99 per GPU-hour, on-demand, as of 2026-11 (runpod.io/pricing, Secure Cloud (RunPod-operated, per-second billing, no commitment), read 2026-11-09 (secondary transcription in github.com/datareceipts/data-receipts, GPU pricing vendors table); Community Cloud lists the same GPU lower). Prices differ 2–4x between providers and commitments: give yours to replace it.
- Failure budget: ×1.50 on top of the nominal cost, for a failed or repeated run. The default ×1.5 is a planning rule of thumb (half the run again; the stage-3 compute-budget skill this tool grew from), not a measured failure rate: give yours. Routine restarts and downtime are already inside the end-to-end MFU prior.
- Throughput implied: 422 TFLOP/s and 5,404 tokens/s per device. The prior is a median of published runs, so half of them ran slower; a first run on a new system usually lands in the slower half of the range.
- Energy: 700 W per device (NVIDIA H100 page (nvidia.com/en-us/data-center/h100), H100 SXM column: max thermal design power up to 700 W (configurable); an upper bound, devices only), PUE 1.56 (Uptime Institute Global Data Center Survey 2024: operators reported an average annual PUE of 1.56 for their largest data center (confirmed in Statista's summary of the survey; Uptime Intelligence Update 221 gives 1.58 for 2023 and 1.55-1.59 every year since 2020)), 0.480 kg CO2e/kWh (Ember Global Electricity Review 2024: the CO2 intensity of global power generation was 480 gCO2/kWh in 2023, down from 486 in 2022 (confirmed in a summary of the review; Statista, citing Ember, gives 481 g/kWh for 2023). Ember counts lifecycle emissions in CO2 equivalents). The board power at its maximum for the whole run overstates what devices draw on average; host CPUs, network and storage are not counted, nor the failure budget's re-runs.
- Defaults used: --mfu=0.213 (calibrated prior); --price=3.99 (catalog); --precision=bf16 (device default); --seq-len=4096 (default); --failure-budget=1.5 (default); --kind=pretrain (default); --stack=megatron (default for this run); --pue=1.56 (default); --grid-kg-co2-per-kwh=0.48 (default); --zero/--tp/--pp/--ep/--recompute/--offload=searched (memory check).
- Memory: 71.9 GiB of 80.0 GiB per device at ZeRO 2, TP 1 × PP 1 × DP 64, EP 64, recompute none, micro-batch 1, the cheapest layout that fits; shape guessed from N; 64 experts, top-8, assumed from --params and --active-params (give --experts and --experts-per-token). The memory tool has the breakdown. EP 64: the smallest of 1/2/4/8/16/32/64 that fits at the least cost; expert parallelism's all-to-all of the tokens is not modelled.

**Check these:**
- ⚠ The peak 1979 TFLOP/s is twice the dense bf16 peak of H100 SXM (989.5 TFLOP/s): it looks like the datasheet's 2:4-sparsity figure, which dense training never reaches. Time and cost would be 2x too optimistic.
""")


def test_estimate_template_unknown_price() -> None:
    spec = RunSpec(params="1B", tokens="20B", gpu="tpu-v3", gpu_count=16)
    assert render_estimate(estimate_run(spec), closing=False, detail="full") == snapshot("""\
### Run estimate: 1B params × 20B tokens on 16 × TPU v3 (per chip) (bf16)

| | estimate | range (MFU 0.35 – 0.10) |
|---|---|---|
| Compute | 1.20 × 10²⁰ FLOPs | |
| Wall time | 85.1 h (3.55 days) | 48.5 – 175 h (2.02 – 7.28 days) |
| Chip-hours | 1,362 chip-h | 777 – 2,794 chip-h |
| Cost | unknown: no price for TPU v3 (per chip) in the catalog | give a price per chip-hour |
| Chip-hours with failure budget (×1.50) | 2,043 chip-h | |
| Energy | 557 kWh, 267 kg CO2e | 317 – 1,142 kWh |

**Assumptions**
- Compute: 6 × parameters = 6.00 × 10⁹ FLOPs per token (2 forward + 4 backward per parameter; Kaplan et al. 2020). Attention and the LM head are not counted separately: give a config or preset for them.
- Peak: 123 TFLOP/s dense bf16 per device (the device's default training precision). Source (catalog of 2026-12-01): cloud.google.com/tpu/docs/v3: 'Peak compute per chip 123 teraflops (bf16)', 'HBM2 capacity and bandwidth 32 GiB, 900 GBps' (2 TensorCores per chip; 16 GiB each, as in the Gopher paper). Patterson et al. 2021 Table 4 also uses 123 TFLOPS per chip.
- MFU: 0.20 — a prior, not a measurement. Uncalibrated: too few published runs on TPU v3 (2 dense, fewer than the 3 a generation needs for a prior of its own), so this is the pooled one: end-to-end MFU (6·N·T ÷ reported GPU-hours ÷ BF16 dense peak) of the 73 published dense runs pooled across Ampere, Hopper, CDNA 2 (MI250, MI250X), TPU v3, Volta, TPU v4 and Blackwell: 0.27 at 10B active parameters, ×1.35 per tenfold more (one slope fitted across generations), with a band of ÷ 2.06 to × 1.75 that covers 85% of the published runs held out one organisation or model family at a time with one level for every generation. It is end to end: the published runs' GPU-hours include restarts, evaluation and downtime, so it sits below the MFU of good steps; the 2 published dense runs on TPU v3 ran at 0.30–0.31 of the BF16 dense peak. Source: compute-budget calibration set calibration_runs.csv: 114 published training runs from papers, model cards and technical reports, GPU-hours as reported or derived from device count × duration as each row says, 2026-12-06. Family dense inferred (no active parameter count below the total; an encoder or encoder–decoder (BERT, RoBERTa, T5) takes family encoder). A measured throughput (achieved TFLOP/s from a one-step benchmark) or MFU replaces it.
- Price: unknown for TPU v3 (per chip); dollars are not estimated rather than guessed.
- Failure budget: ×1.50 on top of the nominal cost, for a failed or repeated run. The default ×1.5 is a planning rule of thumb (half the run again; the stage-3 compute-budget skill this tool grew from), not a measured failure rate: give yours. Routine restarts and downtime are already inside the end-to-end MFU prior.
- Throughput implied: 24.5 TFLOP/s and 4,080 tokens/s per device. The prior is a median of published runs, so half of them ran slower; a first run on a new system usually lands in the slower half of the range.
- Energy: 262 W per device (cloud.google.com/tpu/docs/v3: 'Measured min/mean/max power 123/220/262 W' per chip; the measured maximum is used (mean 220 W); an upper bound, devices only), PUE 1.56 (Uptime Institute Global Data Center Survey 2024: operators reported an average annual PUE of 1.56 for their largest data center (confirmed in Statista's summary of the survey; Uptime Intelligence Update 221 gives 1.58 for 2023 and 1.55-1.59 every year since 2020)), 0.480 kg CO2e/kWh (Ember Global Electricity Review 2024: the CO2 intensity of global power generation was 480 gCO2/kWh in 2023, down from 486 in 2022 (confirmed in a summary of the review; Statista, citing Ember, gives 481 g/kWh for 2023). Ember counts lifecycle emissions in CO2 equivalents). The board power at its maximum for the whole run overstates what devices draw on average; host CPUs, network and storage are not counted, nor the failure budget's re-runs.
- Defaults used: --mfu=0.199 (pooled prior; uncalibrated: too few published runs on TPU v3); --price=unknown (no catalog price); --precision=bf16 (device default); --seq-len=4096 (default); --failure-budget=1.5 (default); --kind=pretrain (default); --stack=megatron (default for this run); --pue=1.56 (default); --grid-kg-co2-per-kwh=0.48 (default); --zero/--tp/--pp/--recompute/--offload=searched (memory check).
- Memory: 19.9 GiB of 32.0 GiB per device at ZeRO 0, TP 1 × PP 1 × DP 16, recompute none, micro-batch 1 (up to 2 fit), the cheapest layout that fits; shape guessed from N. The memory tool has the breakdown.
""")


def test_memory_template() -> None:
    spec = MemorySpec(params="7B", gpu_count=8, gpu="a100-40gb", zero=2, layers=32, hidden=4096,
                      heads=32, seq_len=2048)
    assert render_memory(estimate_memory(spec)) == snapshot("""\
### Memory per device: 7B params on 8 × A100 40GB SXM

**Fits**: 35.8 GiB of 40.0 GiB per device (0.17 GiB under the 90% usable) at ZeRO 2, TP 1 × PP 1 × DP 8, recompute none, micro-batch 1. The cheapest layout that fits among those tried (recompute none/selective/full, TP 1/2/4/8, PP 1, CPU offload as a last resort; kept as you set: ZeRO 2); it costs no speed. Fewest devices it fits on: 1 × A100 40GB SXM with CPU offload, 4 without.

| component | per device | |
|---|---|---|
| Weights | 13.0 GiB | 2 bytes × 7B parameters |
| Gradients | 1.63 GiB | 2 bytes × 7B trainable / 8 (ZeRO-2) |
| Optimizer state | 9.78 GiB | 12 bytes × 7B trainable / 8 (ZeRO-2): fp32 master weights, momentum and variance (4 + 4 + 4 bytes) |
| Activations | 11.4 GiB | sequence 2048, micro-batch 1, recompute none, FlashAttention |
| **Total** | **35.8 GiB** | of 40.0 GiB (90% usable: the runtime context, communication buffers and fragmentation take the rest) |

**Assumptions**
- Layout: the knobs you left unset, cheapest first: ZeRO 1–2 are free, then what costs least speed (ZeRO 3's communication, recomputation's extra FLOPs, TP's communication, PP's bubble once TP is at its largest), offload last; micro-batch 1 unless you set one.
- Model states: mixed precision, 16-bit weights and gradients; optimizer bytes per parameter from Rajbhandari et al. 2020 (ZeRO), Sec. 3: K = 12 for mixed-precision Adam. ZeRO shards over the data-parallel degree (devices / (TP·PP)), after Rajbhandari et al. 2020.
- Shape: 32 layers, hidden 4096, 32 heads, gated MLP of 11008; given (layers, hidden, heads); Llama layout assumed for the rest.
- Activations: what the Hugging Face transformers (SDPA attention) stack keeps for the backward pass, term by term from the shape, calibrated against measured transformers models; no s×s attention scores. Choose the other stack with `--stack`. Framework buffers are not counted; check with a one-step run.

**Check these:**
- ⚠ no config: the layer layout (gated MLP of 8h/3, multi-head attention) is assumed; give a config or preset for exact activations.
""")


def test_memory_template_does_not_fit() -> None:
    spec = MemorySpec(params="70B", gpu_count=8, gpu="h100", tp=8, pp=1, zero=0, optimizer="sgd")
    assert render_memory(estimate_memory(spec)) == snapshot("""\
### Memory per device: 70B params on 8 × H100 SXM

**Does not fit** on 8 × H100 SXM at any layout tried (recompute none/selective/full; kept as you set: ZeRO 0, TP 8, PP 1): the most frugal, ZeRO 0, TP 8 × PP 1 × DP 1, SP, recompute full, micro-batch 1, needs 98.8 GiB per device of 72.0 GiB usable. The layout values you set bind. What would fit: 8 × H200 SXM (141 GiB, `h200`; as many as now); LoRA of rank 16 instead of a full fine-tune; letting the search choose the ZeRO stage, TP, PP instead of the values you set, with CPU offload.

| component | per device | |
|---|---|---|
| Weights | 16.3 GiB | 2 bytes × 70B parameters / 8 model-parallel ranks |
| Gradients | 16.3 GiB | 2 bytes × 70B trainable / 8 model-parallel ranks |
| Optimizer state | 65.2 GiB | 8 bytes × 70B trainable / 8 model-parallel ranks: fp32 master weights and momentum (4 + 4 bytes) |
| Activations | 0.96 GiB | sequence 4096, micro-batch 1, recompute full, FlashAttention; of which 0.15 GiB at the loss (vocabulary 32000, assumed) |
| **Total** | **98.8 GiB** | of 80.0 GiB (90% usable: the runtime context, communication buffers and fragmentation take the rest) |

**Assumptions**
- Layout: the knobs you left unset, cheapest first: ZeRO 1–2 are free, then what costs least speed (ZeRO 3's communication, recomputation's extra FLOPs, TP's communication, PP's bubble once TP is at its largest), offload last; micro-batch 1 unless you set one.
- Model states: mixed precision, 16-bit weights and gradients; optimizer bytes per parameter from SGD with momentum under mixed precision (fp32 master copy + one fp32 buffer). ZeRO shards over the data-parallel degree (devices / (TP·PP)), after Rajbhandari et al. 2020.
- Shape: 71 layers, hidden 9088, 71 heads, gated MLP of 24320; guessed from N with GPT-3 proportions (N ≈ 12·L·h², h ≈ 128·L, head size 128; Brown et al. 2020, Table 2.1) and a Llama layer (gated MLP of 8h/3).
- Activations: what the Hugging Face transformers (SDPA attention) stack keeps for the backward pass, term by term from the shape, calibrated against measured transformers models; no s×s attention scores; plus 10·s·b·V/t bytes at the loss (fp32 log-softmax, bf16 logits and their fp32 gradient). Choose the other stack with `--stack`. Framework buffers are not counted; check with a one-step run.

**Check these:**
- ⚠ the model shape was guessed from N; give a config or preset (or --layers, --hidden and --heads) for exact activations.
""")


def test_a_near_miss_does_not_print_its_need_and_the_usable_memory_alike() -> None:
    m = estimate_memory(MemorySpec(params="70B", gpu_count=8, gpu="h100", tp=8, pp=1, zero=0,
                                   optimizer="sgd"))
    assert m.gpu_memory_bytes is not None
    usable = m.usable_fraction * m.gpu_memory_bytes
    for over, text in ((1.0004, "72.029 GiB per device of 72.000 GiB usable"),
                       (1.02, "73.4 GiB per device of 72.0 GiB usable")):
        missed = m.model_copy(update={"per_gpu_bytes": m.per_gpu_bytes.model_copy(
            update={"total": usable * over})})
        assert text in render_memory(missed)


def test_verdict_template_go_with_benefit() -> None:
    d = decision_summary(estimate_run(WORKED), 2.0, 0.5, 1.0, benefit="the paper's main claim")
    assert render_decision(d) == snapshot("""\
### Verdict: **GO**

The net gain 1 ± 0.5 clears its uncertainty: 98% that it beats the baseline, < 1% that it gives no gain at all.

| | |
|---|---|
| Gain used | 2 ± 0.5 (1σ), over a baseline to beat of 1: net 1 |
| Chance it beats the baseline | 98% (> 99% that it gives any gain at all) |
| Cost | $14,022 ($21,034 with failure budget), 9,348 GPU-h |
| Run as priced | 4096 tokens per sequence (assumed), micro-batch 1, bf16, ZeRO 1, TP 1 × PP 1, recompute none |
| Net gain per $1M | 71.3 units of your metric (47.5 with failures) |

Rule: go when gain − σ ≥ baseline and gain > σ (about 84% or more to beat the baseline); no-go when gain + σ < baseline (under 16%), when it does not fit, takes over a year, is worth less than it costs or exceeds the budget; marginal in between.

**Kill criteria** (launch and watch):
- Throughput at least 1,203 tokens/s per device (the slow end of the MFU band): below it, stop and fix before going on.
- By day 4.9: at least 4.08B tokens trained, at that floor.
- By the end: the metric at least 1.5 above today's, the low end of the gain, 2 − 0.5 = 1.5. No level at a checkpoint follows from the gain alone: a run from scratch starts far behind the model it is to beat. Small runs, given as points, turn the gain into a loss curve with a level to reach at a checkpoint.

Budget: about $1,411 spent by day 4.9 at the planned rate: a pace to plan by, not a reason to stop.

**Next:**
- Launch it, with the kill criteria above.

Tied to: the paper's main claim.
""")


def test_verdict_template_no_go_with_value_and_budget() -> None:
    d = decision_summary(estimate_run(WORKED), 0.3, 0.2, 1.0, usd_per_unit_gain=1000,
                         budget_usd=20_000)
    assert render_decision(d) == snapshot("""\
### Verdict: **NO-GO**

Even the optimistic gain 0.5 (gain + σ) is below the 1 the cheaper option already gives: the chance that it beats it is < 1%.

| | |
|---|---|
| Gain used | 0.3 ± 0.2 (1σ), over a baseline to beat of 1: net −0.7 |
| Chance it beats the baseline | < 1% (93% that it gives any gain at all) |
| Cost | $14,022 ($21,034 with failure budget), 9,348 GPU-h |
| Run as priced | 4096 tokens per sequence (assumed), micro-batch 1, bf16, ZeRO 1, TP 1 × PP 1, recompute none |
| Net gain per $1M | −49.9 units of your metric (−33.3 with failures) |
| Value of the net gain | −$700 at $1,000 per unit; expected net value −$21,734 |
| Budget | $20,000: the cost with the failure budget is $1,034 over it |

Rule: go when gain − σ ≥ baseline and gain > σ (about 84% or more to beat the baseline); no-go when gain + σ < baseline (under 16%), when it does not fit, takes over a year, is worth less than it costs or exceeds the budget; marginal in between.

**Next:**
- At this size the gain is not worth its cost.
- The cheaper option already gives more: spend the money there.
- Price the cheaper alternatives for this kind of run.
""")


def test_alternatives_template() -> None:
    assert render_alternatives(suggest_alternatives(WORKED)) == snapshot("""\
### Cheaper alternatives to 7B params × 100B tokens on 8 × A100 80GB SXM

Original: $14,022 ($21,034 with failure budget), 48.7 days, 9,348 GPU-h.

| alternative | what changes | days | GPU-h | cost | saving |
|---|---|---|---|---|---|
| Smaller scale | 3.5B params × 50B tokens from scratch: same tokens per parameter, ¼ of the FLOPs; the gap you are testing usually shows at this scale | 12.2 | 2,337 | $3,506 | $10,517 (75%) |
| Shorter run first | 30B tokens (30% of the plan), then decide on the rest from its curve | 14.6 | 2,804 | $4,207 | $9,816 (70%) |
| Other hardware | same FLOPs on 8 × MI300X at $2.59/GPU-h (on-demand, 2026-10; gpu-mi300x8-1536gb of 8 devices), MFU 0.40 (uncalibrated: no published runs on CDNA 3 (MI300); your MFU carried over) | 11.6 | 2,231 | $5,778 | $8,244 (59%); uncalibrated: from no saving ($10,306 more) to $8,244 |
| Other hardware | same FLOPs on 8 × GB200 (per GPU in NVL72) at $10.50/GPU-h (on-demand, 2026-09; 2 × GB200 NVL72 instance (4 devices each)), MFU 0.40 (uncalibrated: too few published runs on Blackwell; your MFU carried over) | 6.08 | 1,167 | $12,250 | $1,772 (13%); uncalibrated: from no saving ($37,557 more) to $1,772 |

A different idea: the same money buys about 4 smaller-scale runs; spend it on another experiment instead if one promises more gain per dollar (the compare tool ranks candidate runs by it).

Each row uses the same MFU source as the original (yours) and the same failure budget; saving is against the nominal cost.

Other hardware is compared at on-demand prices only (devices without an on-demand quote are left out); your run is priced at the rate you gave. An uncalibrated device has too few published training runs (or none) for a prior of its own: its MFU is borrowed from other hardware, so its saving may be none.
""")


def test_split_template_lesson() -> None:
    assert render_split(budget_table(BudgetTableSpec(budget_flops=6.0256e14, flops_per_sec=1e12))) == snapshot("""\
### Budget split: 6.03 × 10¹⁴ FLOPs

Every row spends the same compute: tokens D = C / (6·N). Time at 1.00 × 10¹² FLOP/s sustained: your machine's rate.

| parameters N | tokens D = C / 6N | tokens per parameter | seconds | hours |
|---|---|---|---|---|
| 100K | 1B | 10,043 | 603 | 0.167 |
| 1M | 100M | 100.4 | 603 | 0.167 |
| 10M | 10M | 1.004 | 603 | 0.167 |
| 100M | 1M | 0.01004 | 603 | 0.167 |
| **2.24M** | **44.8M** | **20** (Chinchilla) | 603 | 0.167 |

A bigger model sees fewer tokens for the same budget. About 20 tokens per parameter was compute-optimal in Hoffmann et al. 2022 ("Chinchilla"); that is a fit to their data and setup, not a law for every setting.
""")


def test_split_template_dollars() -> None:
    split = budget_table(BudgetTableSpec(budget_usd=50_000, gpu="h100", gpu_count=8,
                                   params=["1B", "3B", "7B"]))
    assert render_split(split) == snapshot("""\
### Budget split: $50,000 on 8 × H100 SXM

**Best size at the median MFU (0.20): 6.98B parameters on 139B tokens** (20 tokens per parameter, Hoffmann et al. 2022).

**Within $50,000 even at the slow end (MFU 0.09): 4.8B parameters on 96B tokens**: 21.6 days and $24,841 with the failure budget at the median MFU.

Each row spends 5.86 × 10²¹ FLOPs at the MFU prior for its size. The bold row, rounded down to fit, spends 5.82 × 10²¹.

| parameters | tokens | tokens per parameter | days (median – slow end) | nominal cost | with ×1.50 failure budget (median – slow end) | over $50,000? | fits |
|---|---|---|---|---|---|---|---|
| 1B | 977B | 977.1 | 56.0 – 113 | $42,919 | $64,379 – $129,605 | yes | yes |
| 3B | 326B | 108.6 | 48.7 – 98.5 | $37,311 | $55,966 – $113,218 | yes | yes |
| 7B | 140B | 19.94 | 43.5 – 88.4 | $33,333 | $50,000 – $101,546 | at slow end | yes |
| **6.98B** | **139B** | **19.91** | 43.2 – 87.7 | $33,099 | $49,648 – $100,831 | at slow end | yes |

**Assumptions** (full detail: every source)
- Devices: 8, given by you; the count sets the days, not the dollars.
- MFU: 0.20 (0.10 – 0.30) at 6.98B parameters (each size has its own), a prior from 26 published runs on Hopper, calibrated 2026-12-06; give a measured one.
- Price: $3.99/GPU-h on-demand, 2026-11 (runpod.io/pricing); give yours.
""")


def test_split_template_names_the_cost_of_fitting() -> None:
    # 100B on 8 × A100 fits only with CPU offload under a ×1.34 layout (recompute full ×4/3,
    # ZeRO-3 beyond what it needs at scale, the offloaded step at the compute-optimal batch;
    # tests/skill/test_split.py): issue 16 puts it in the row's days and cost, as the run
    # estimate does. The 1B row needs nothing.
    split = budget_table(BudgetTableSpec(budget_usd="$300k", gpu="a100", params=["1B", "100B"]))
    text = render_split(split)
    rows = [line for line in text.splitlines() if line.startswith("| 1")]
    assert rows[0].endswith("| yes |")
    assert rows[1].endswith("| yes, with CPU offload, its layout ×1.34 in the days and cost |")
    # The suggested size (17.6B) needs full recomputation to fit: its bold row says what it
    # costs, and the MFU line says the prior is divided by it.
    assert split.ratio_split.fit_slowdown == pytest.approx(4 / 3, rel=0.01)
    bold = next(line for line in text.splitlines() if line.startswith("| **"))
    assert bold.endswith("| yes, its layout ×1.33 in the days and cost |")
    assert "÷ 1.33 for that size's layout on these devices" in text
    full = render_split(split, detail="full")
    assert "CPU offload's host step is priced at the compute-optimal batch" in full
    assert "not estimated" not in full


def test_accelerators_template() -> None:
    table = render_accelerators([get_accelerator("h100"), get_accelerator("a10g")],
                                show_sources=True)
    assert table == snapshot("""\
### Accelerator catalog (compiled 2026-12-01)

Dense peaks (NVIDIA's sparse datasheet figures halved); "unknown" where no source gives a figure. Default prices are the newest dated on-demand quote (reserved and spot quotes where the catalog has them, by price kind); give your own to replace them. Where a seller rents the device only in machines of fixed sizes (named beside the price), a run of several devices is priced in the machine that holds them, all of its devices paid.

| name | device | BF16 TFLOP/s | FP16 TFLOP/s | FP8 TFLOP/s | memory | bandwidth | default price |
|---|---|---|---|---|---|---|---|
| `h100-sxm` or `h100` | H100 SXM | 989.5 | 989.5 | 1,979 | 80 GiB | 3.35 TB/s | $3.99/h (on-demand, 2026-11) |
| `a10g` | A10G (AWS G5) | unknown | unknown | unknown | 24 GiB | 0.600 TB/s | $1.01/h (on-demand, 2026-01; g5.xlarge of 1, $1.42 in g5.12xlarge of 4, $2.04 in g5.48xlarge of 8) |

**Sources**
- H100 SXM: NVIDIA H100 page (nvidia.com/en-us/data-center/h100), H100 SXM column: 'BFLOAT16 Tensor Core 1,979 teraFLOPS*', 'FP8 Tensor Core 3,958 teraFLOPS*' (*with sparsity), 80GB, 3.35 TB/s, up to 700 W. NVIDIA NGC DGXC benchmarking page states dense peaks 'H100 FP8 is 1979 TFLOPS and for H100 BF16 is 989 TFLOPS'. Price $4.92/h: reserved, 2025-01, AWS Capacity Blocks pricing page. Price $3.99/h: on-demand, 2026-11, runpod.io/pricing, Secure Cloud (RunPod-operated, per-second billing, no commitment), read 2026-11-09 (secondary transcription in github.com/datareceipts/data-receipts, GPU pricing vendors table); Community Cloud lists the same GPU lower.

- A10G (AWS G5): AWS-only variant of the A10. Baseten blog 'NVIDIA A10 vs A10G for ML model inference': same 24 GB GDDR6 / 600 GB/s as A10, but lower tensor throughput than the A10 (the A10 'prioritizes tensor compute, while the A10G has a higher CUDA core performance'). No vendor datasheet with an A10G dense tensor TFLOPS figure was found in this pass, so the peaks stay unknown: give peak_tflops, or use 'a10' (BF16 125 dense) as an upper bound. Price $1.01/h: on-demand, 2026-01, aws.amazon.com/ec2/pricing/on-demand, us-east-1 Linux, g5.xlarge (1x A10G, 4 vCPU, 16 GiB) $1.006/h, as compiled from instances.vantage.sh in github.com/tsaol/aws-gpu (data/g5_instances.js, updated 2026-01-21; secondary). Price $1.42/h: on-demand, 2026-01, aws.amazon.com/ec2/pricing/on-demand, us-east-1 Linux, g5.12xlarge (4x A10G, 48 vCPU, 192 GiB) $5.672/h, as compiled from instances.vantage.sh in github.com/tsaol/aws-gpu (data/g5_instances.js, updated 2026-01-21; secondary). Price $2.04/h: on-demand, 2026-01, aws.amazon.com/ec2/pricing/on-demand, us-east-1 Linux, g5.48xlarge (8x A10G, 192 vCPU, 768 GiB) $16.288/h, as compiled from instances.vantage.sh in github.com/tsaol/aws-gpu (data/g5_instances.js, updated 2026-01-21; secondary).
""")


def test_templates_are_strict() -> None:
    with pytest.raises(UndefinedError):
        render("estimate", closing=True)


@pytest.mark.parametrize(
    ("func", "value", "text"),
    [
        (fmt_flops, 4.2e21, "4.20 × 10²¹"),
        (fmt_flops, 9.999e20, "1.00 × 10²¹"),
        (fmt_count, 7e9, "7B"),
        (fmt_count, 1.5e12, "1.5T"),
        (fmt_count, 3.5e8, "350M"),
        (fmt_usd, 14022.4, "$14,022"),
        (fmt_usd, 1.5, "$1.50"),
        (fmt_usd, None, "unknown"),
        (fmt_num, 1168.54, "1,169"),
        (fmt_num, 48.689, "48.7"),
        (fmt_num, 0.0123, "0.0123"),
        (fmt_num, None, "unknown"),
        # durations in hours read in their own unit (a 1M-token run on 64 H100 read "1.72e-04 h")
        (fmt_hours, 57.2, "57.2 h"),
        (fmt_hours, 0.155, "9.30 min"),
        (fmt_hours, 1.72e-4, "0.619 s"),
        (fmt_hours, None, "unknown"),
    ],
)
def test_number_formats(func, value, text) -> None:
    assert func(value) == text


def test_estimate_template_short_by_default() -> None:
    text = render_estimate(estimate_run(WORKED))
    assert len(text) <= 1500  # issue 9: an estimate reply at most 1,500 characters
    # the same with the MFU prior (its end-to-end sentence) and the closing question
    priored = WORKED.model_copy(update={"mfu": None, "usd_per_gpu_hour": None})
    assert len(render_estimate(estimate_run(priored))) <= 1500
    assert text == snapshot("""\
### Run estimate: 7B params × 100B tokens on 8 × A100 80GB SXM (bf16)

| | estimate | range (MFU 0.40 – 0.16) |
|---|---|---|
| Compute | 4.20 × 10²¹ FLOPs | |
| Wall time | 1,169 h (48.7 days) | 1,169 – 2,885 h (48.7 – 120 days) |
| GPU-hours | 9,348 GPU-h | 9,348 – 23,082 GPU-h |
| Cost | $14,022 | $14,022 – $34,623 |
| Cost with failure budget (×1.50) | **$21,034** | $21,034 – $51,935 |
| Energy | 5,833 kWh, 2.80 t CO2e | 5,833 – 14,403 kWh |

**Assumptions** (full detail: every source, the breakdowns)
- Peak: 312 TFLOP/s dense bf16 (NVIDIA A100 datasheet, 2020).
- MFU: 0.40, given by you; the range's slow end, 0.16, is the published runs' low, as a speed measured over steps leaves out restarts and evaluation.
- Sequence: 4096 tokens (assumed: give yours).
- Price: $1.50/GPU-h, given by you.
- Energy: 400 W per device (datasheet maximum; an upper bound, devices only), PUE 1.56 (industry average, Uptime Institute survey 2024), 0.480 kg CO2e/kWh (world average, Ember 2023).
- Memory: fits, 61.2 GiB of 80.0 GiB at ZeRO 1, TP 1 × PP 1 × DP 8, recompute none, micro-batch 1 (shape guessed from N).

**Next:** what gain should this run produce (in your metric, higher is better: accuracy points, or a loss reduction as a positive number), how uncertain is it (±1σ), and what does the cheapest alternative already give? With those, the verdict weighs the gain against the cost.
""")


def test_estimate_says_when_the_fast_end_is_held_at_the_fastest_published_run() -> None:
    # 70B on A100: the prior's × 1.4 would reach past 0.51, the fastest published run end to
    # end; the range stops there, and both replies say why (the full one in the MFU's basis).
    big = RunSpec(params="70B", tokens="2T", gpu="a100", gpu_count=512)
    est = estimate_run(big)
    cap = est.mfu_used.prior.fast_end_cap if est.mfu_used.prior else None
    assert cap is not None and est.mfu_used.range[1] == cap
    sentence = f"The MFU band's fast end is held at {cap:.2f}, the fastest published run end to end."
    short, full = render_estimate(est), render_estimate(est, detail="full")
    assert sentence in short and sentence in full
    small = render_estimate(estimate_run(RunSpec(params="7B", tokens="2T", gpu="a100",
                                                 gpu_count=512)), detail="full")
    assert "fast end is held" not in small


def test_the_hf_stack_says_it_recomputes_before_tensor_parallelism() -> None:
    # LoRA of 70B on 64 H100 (hf, the default for LoRA): full recomputation (x1.49) where TP 4
    # without it would fit; the reply says why and names the stack that weighs TP by cost
    hf = estimate_memory(MemorySpec(preset="llama-3.1-70b", lora_rank=16, gpu="h100",
                                    gpu_count=64))
    assert hf.stack == "hf" and hf.recompute == "full" and hf.tp == 1
    said = "On the hf stack TP and PP come only where recomputation is not enough"
    assert said in render_memory(hf)
    mega = estimate_memory(MemorySpec(preset="llama-3.1-70b", lora_rank=16, gpu="h100",
                                      gpu_count=64, stack="megatron"))
    assert mega.recompute == "none" and mega.tp > 1 and said not in render_memory(mega)
    # the estimate's memory line said "the cheapest layout that fits" of the hf stack's choice
    est = render_estimate(estimate_run(RunSpec(preset="llama-3.1-70b", lora_rank=16, gpu="h100",
                                               gpu_count=64, tokens="1B")), detail="full")
    assert "the cheapest layout that fits on the hf stack (recomputation before TP or PP" in est


def test_the_compute_line_adds_up() -> None:
    # Llama 2 7B at 4,096 tokens: the estimate counts 6·N (4.04e10, the prior's convention),
    # the exact terms sum to 4.29e10; the line said "4.04e10 = 3.89e10 + 3.22e9 + 7.86e8"
    e = estimate_run(RunSpec(preset="llama-2-7b", tokens="1T", gpu="h100", gpu_count=64))
    b = e.flops_breakdown
    assert b is not None and b.total == pytest.approx(b.matmul + b.attention + b.lm_head)
    text = render_estimate(e, detail="full")
    line = next(x for x in text.splitlines() if x.startswith("- Compute:"))
    assert f"{fmt_flops(e.flops_per_token)} FLOPs per token" in line
    assert "counted as the MFU prior's runs are: 6·N." in line
    assert f"The exact count is {fmt_flops(b.total)} = matmul {fmt_flops(b.matmul)}" in line
    assert "6·N is 5.7% below it" in line


def test_short_runs_read_in_minutes() -> None:
    e = estimate_run(RunSpec(params="1B", tokens="100M", gpu="h100", gpu_count=8))
    assert e.wall_hours < 1
    row = next(x for x in render_estimate(e).splitlines() if x.startswith("| Wall time"))
    assert " min |" in row and "days" not in row and "e-0" not in row


def test_a_borrowed_prior_does_not_deny_its_own_runs() -> None:
    # One published run on Blackwell: too few to calibrate, so Hopper's prior is borrowed; the
    # line said "no calibration on Blackwell" then "the runs on Blackwell ran at 0.20–0.20 (1)"
    b200 = render_estimate(estimate_run(RunSpec(params="7B", tokens="2T", gpu="b200",
                                                gpu_count=256)))
    assert "borrowed from Hopper (uncalibrated: too few published runs on Blackwell)" in b200
    assert "the one run on Blackwell ran at " in b200 and "(1)" not in b200
    mi300x = render_estimate(estimate_run(RunSpec(params="7B", tokens="2T", gpu="mi300x",
                                                  gpu_count=256)))
    assert "borrowed from Hopper (uncalibrated: no published runs on CDNA 3 (MI300))" in mi300x


def test_a_4_bit_base_is_named_and_its_dequantisation_said_unpriced() -> None:
    # Answer.AI's fsdp_qlora benchmarks (benchmarks/pcie_layouts.py): Llama-2 7B, DDP, QLoRA
    # batch 8 against LoRA batch 4: 450 / 437 s = 1.03 on 2 x RTX 4090, 875 / 881 = 0.99 on
    # 2 x RTX 3090
    assert round(450 / 437, 2) == 1.03 and round(875 / 881, 2) == 0.99
    spec = RunSpec(preset="llama-3.1-8b", lora_rank=16, weights_bits=4, tokens="100M",
                   gpu="rtx-4090", gpu_count=1)
    for detail in ("short", "full"):
        text = render_estimate(estimate_run(spec), detail=detail)
        assert "LoRA r16 on a 4-bit base × 100M tokens" in text
        assert "- 4-bit base: its dequantisation is not priced." in text
        assert "took 1.03× and 0.99× the time of 16-bit LoRA (micro-batch 4)" in text
    plain = render_estimate(estimate_run(spec.model_copy(update={"weights_bits": None})))
    assert "-bit base" not in plain


def test_expert_parallelism_divides_every_state_it_shards() -> None:
    # Mixtral 8x7B at TP 2, EP 8: gradients and optimizer state are split like the weights,
    # the routed experts / 8; the rows said "/ 2 model-parallel ranks" alone (6.75 GiB is not
    # 2 bytes x 46.7B / 2)
    m = estimate_memory(MemorySpec(preset="mixtral-8x7b", gpu="h100", gpu_count=16, ep=8, tp=2))
    rows = {line.split(" | ")[0]: line for line in render_memory(m).splitlines()
            if line.startswith("| ")}
    for name in ("| Weights", "| Gradients", "| Optimizer state"):
        assert "/ 2 model-parallel ranks, routed experts / 8 (EP)" in rows[name]


def test_the_default_mfu_says_what_the_layout_made_of_it() -> None:
    # Defaults used read "mfu=0.266 (calibrated prior)" beside "MFU: 0.18 ... ÷ 1.50 for the
    # layout"; the structured value stays the prior's
    e = estimate_run(RunSpec(preset="llama-3.1-70b", lora_rank=16, tokens="20B", gpu="h100",
                             gpu_count=64))
    (mfu,) = [d for d in e.defaults_used if d.field == "mfu"]
    assert isinstance(mfu.value, float) and e.mfu < 0.9 * mfu.value
    text = render_estimate(e, detail="full")
    assert f"mfu={mfu.value:.3g} (calibrated prior, {e.mfu:.2f} after the layout's cost)" in text


def test_ecc_memory_is_said_where_the_fit_uses_it() -> None:
    # the L40S lists 48 GiB and ECC keeps 1/16: fits are checked against 45 GiB, which the
    # memory reply gave without saying why (catalog usable_memory_gib)
    l40s = estimate_memory(MemorySpec(params="7B", gpu="l40s", gpu_count=2))
    assert l40s.ecc_nominal_bytes == 48 * 2**30 and l40s.gpu_memory_bytes == 45 * 2**30
    assert "of 45.0 GiB (48.0 GiB less the 1/16 that ECC reserves; 90% usable" in render_memory(l40s)
    h100 = estimate_memory(MemorySpec(params="7B", gpu="h100", gpu_count=2))
    assert h100.ecc_nominal_bytes is None and "ECC" not in render_memory(h100)


def test_the_fast_end_cap_says_it_comes_before_the_layouts_cost() -> None:
    # "held at 0.51" beside a range whose fast end reads 0.34: the cap is on the prior, the
    # layout's ÷ 1.50 (full recomputation) comes after it
    e = estimate_run(RunSpec(preset="llama-3.1-405b", lora_rank=16, tokens="1B", gpu="a100",
                             gpu_count=64))
    assert e.mfu_used.prior is not None and e.mfu_used.prior.fast_end_cap is not None
    assert e.layout_cost is not None and e.layout_cost.applied
    text = render_estimate(e)
    assert (f"held at {e.mfu_used.prior.fast_end_cap:.2f}, the fastest published run end to "
            f"end, before the layout's ÷ {e.layout_cost.total:.2f}.") in text


def test_more_devices_says_the_layout_they_need() -> None:
    # 7B on 2 RTX 4090 with ZeRO 0 and TP 2 set: 32 of them fit only at PP 16, which the
    # remedy "at least 32 x RTX 4090" did not say
    m = estimate_memory(MemorySpec(params="7B", gpu="rtx-4090", gpu_count=2, tp=2, zero=0,
                                   recompute="none"))
    (more,) = [r for r in m.layout.remedies if r.kind == "more_devices"]
    assert more.gpu_count is not None and (more.tp, more.pp) == (2, more.gpu_count // 2)
    assert f"at least {more.gpu_count} × RTX 4090 at TP 2 × PP {more.pp};" in render_memory(m)


def test_a_run_the_hosts_ram_stops_is_not_said_not_to_fit_the_device() -> None:
    # 1B on one T4 priced in a g4dn.xlarge (16 GiB of RAM): the banner says the RAM binds and
    # the short memory line said "does not fit at any layout tried"
    text = render_estimate(estimate_run(RunSpec(params="1B", tokens="1B", gpu="t4",
                                                gpu_count=1)))
    line = next(x for x in text.splitlines() if x.startswith("- Memory:"))
    assert "fits device memory only with CPU offload, which needs more CPU RAM" in line
    assert "does not fit at any layout" not in line
