"""The replies of the templates ``test_templates.py`` does not cover, one snapshot per template
and scenario, through the command line as a user runs it (issue 15): comparing, fitting, the
published laws, compute-optimal, planning, parameter counts and the preset list.

A wording change shows here as a diff to read, not as a broken assert on a fragment. Regenerate
after an intended change with ``uv run pytest --inline-snapshot=fix``, then read the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from inline_snapshot import snapshot

from tests.conftest import Cli
from tests.test_compare_cli import CSV as CANDIDATES
from tests.test_fit_cli import POINTS  # a clean saturating curve read off at seven computes


def _reply(cli: Cli, *argv: str) -> str:
    code, out, err = cli(*argv)
    assert (code, err) == (0, ""), err
    return out


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "candidates.csv").write_text(CANDIDATES)
    (tmp_path / "points.csv").write_text(POINTS)
    return tmp_path


def test_compare_reply(cli: Cli, files: Path) -> None:
    assert _reply(cli, "compare", str(files / "candidates.csv"), "--baseline", "0.5") == snapshot("""\
### 3 candidate runs, ranked by net gain per dollar

| # | candidate | verdict | gain ± σ | P(beats baseline) | cost with failures | days | devices | price | MFU | net gain per $1M with failures |
|---|---|---|---|---|---|---|---|---|---|---|
| 1 | bigger-model | go | 2 ± 0.8 | 97% | $159,968 | 17.4 | 64 × H100 SXM | $3.99/GPU-h (on-demand, 2026-11, runpod.io/pricing) | 0.21 (calibrated prior) | 9.38 |
| 2 | distill | go | 0.8 ± 0.3 | 84% | $44,057 | 21.4 | 32 × A100 80GB SXM | $1.79/GPU-h (on-demand, 2026-11, runpod.io/pricing) | 0.29 (calibrated prior) | 6.81 |
| 3 | more-data | go | 1.5 ± 0.4 | 99% | $179,101 | 19.5 | 64 × H100 SXM | $3.99/GPU-h (on-demand, 2026-11, runpod.io/pricing) | 0.20 (calibrated prior) | 5.58 |

**Top: bigger-model**, 9.38 units of net gain per $1M.
The gain column is each run's whole predicted gain; the ranking, P(beats baseline) and the verdicts use the gain beyond the baseline 0.5.

Opportunity cost, without a pool: each run's dollars against the top one's: distill $115,912 less, more-data $19,133 more. Give a pool of device-days (and a horizon) for the best set of runs to fund.

Costs are at each device's newest on-demand catalog price unless a candidate gives its own, with the failure budget; MFU is the prior for each device and model size unless given (the MFU column says which).
""")


def test_fit_reply_own_points(cli: Cli, files: Path) -> None:
    assert _reply(cli, "fit", "--points", str(files / "points.csv"), "--target-compute", "1e21",
                  "--baseline-loss", "2.6") == snapshot("""\
### Scaling fit: loss = E + a·C^−b on 7 small runs

| | value |
|---|---|
| Predicted loss at 1.00 × 10²¹ FLOPs | **2.513** (80% interval 2.508 – 2.518) |
| Gain over the baseline 2.6 | **0.08731 ± 0.003945** (1σ) |
| Extrapolation | 10× the largest small run's compute |
| Fit on the points | R² 1.000, residual σ 0.002031 |
| Parameters | E = 2.245, a = 960.9, b = 0.1693 (C in FLOPs) |

- **Loss check for the long run, by its end:** loss at most 2.518, the edge of the scaling fit's interval at this run (it expects 2.513). A fit in compute alone gives no level at a checkpoint: each small run was a complete run of its own size, and a checkpoint of this one (a larger model on fewer tokens) sits above their curve. Give each small run's parameters and tokens (seven runs or more, sizes and token counts varied independently) for a level at a checkpoint.

**Next:** this gain and its 1σ (0.08731 ± 0.003945) are the predicted gain and uncertainty for the verdict.
""")


def test_fit_reply_published_laws(cli: Cli) -> None:
    assert _reply(cli, "fit", "--target-params", "7B", "--target-tokens", "1T",
                  "--baseline-params", "7B", "--baseline-tokens", "300B") == snapshot("""\
### Published scaling fits (no small runs given): 7B params × 1T tokens

**A fallback for language models only**: the loss in nats per token on the fits' own data and setup, not yours. Small runs of your own, fitted, are the real answer.

| fit | predicted loss | baseline loss (7B × 300B) | gain |
|---|---|---|---|
| Hoffmann et al. 2022, Training Compute-Optimal Large Language Models, eq. 2 and Sec. 3.3 (approach 3) | 2.052 | 2.124 | 0.072 |
| Besiroglu et al. 2024, Chinchilla Scaling: A replication attempt, Sec. 4 | 2.087 | 2.134 | 0.047 |

The two fits differ by 0.035 in loss and give a gain of 0.047 – 0.072: that spread is between published fits, not a statistical interval.
""")


def test_optimal_reply_with_a_proposed_run(cli: Cli) -> None:
    assert _reply(cli, "optimal", "--params", "30B",
                  "--tokens", "300B") == snapshot("""\
### Compute-optimal split of 5.40 × 10²² FLOPs

| basis | params | tokens | tokens per param |
|---|---|---|---|
| 20 tokens per parameter (Hoffmann et al. 2022) | **21.2B** | **424B** | 20 |
| Hoffmann et al. 2022 fit, optimum of eq. 4 | 11.1B | 814B | 73.7 |
| Besiroglu et al. 2024 fit, optimum of eq. 4 | 21.5B | 419B | 19.5 |

**Your run, 30B params on 300B tokens, is 10 tokens per parameter (0.50× the compute-optimal 20): under-trained for its size: by the compute-optimal ratio a smaller model on more tokens would reach a lower loss at the same compute.**

Its loss against the optimal split at the same compute, under each fit: Hoffmann et al. 2022 +0.016; Besiroglu et al. 2024 +0.002 (loss in nats per token on the fits' data).

The published fits hold for their data and setup (language models; loss in nats per token on their data). Hoffmann et al.'s approach-3 fit as published puts the optimum far above their own 20 tokens per parameter; Besiroglu et al. 2024 refit the same data and recover it. Treat the spread between the rows as the uncertainty.
""")


def test_plan_reply(cli: Cli) -> None:
    assert _reply(cli, "plan", "--params", "7B", "--tokens", "1T", "--deadline-days", "30",
                  "--gpu-types", "h100,a100") == snapshot("""\
### Plans to train 4.20 × 10²² FLOPs by day 30

| # | devices | wall days (range) | price (on-demand) | MFU | cost with failures | why |
|---|---|---|---|---|---|---|
| 1 | 160 × A100 80GB SXM | 29.8 (19.7 – 60.1) | $1.79/GPU-h, 2026-11 | 0.33 | $307,036 | cheapest |
| 2 | 88 × H100 SXM | 28.3 (18.8 – 57.6) | $3.99/GPU-h, 2026-11 | 0.20 | $358,203 | cheapest on H100 SXM |

**Cheapest: 160 × A100 80GB SXM**, 29.8 days and $307,036 with the failure budget; an estimate of the run on these devices gives the same numbers. At the slow end of the MFU band it takes 60.1 days, past the deadline: about 328 devices would meet it even there; at that MFU the run costs about $619,757 with the failure budget.

**Fastest: 1,784 × H100 SXM**, 1.40 days ($358,203). More devices would need a global batch above 7.34M tokens per step (the compute-optimal batch for this compute in DeepSeek LLM's fit, Bi et al. 2024), past which extra devices buy little.

Wall time here falls as 1/devices at the same MFU; very large jobs usually run at a lower MFU, so treat the fastest plan as optimistic.

Costs are at each device's newest on-demand price in the accelerator catalog (which names each source), at the calibrated MFU prior for the device and the model's size, with a ×1.50 failure budget.
""")


def test_plan_reply_says_when_a_fast_end_is_held(cli: Cli) -> None:
    # 70B on A100: the Ampere prior's central × its band's fast factor passes the fastest
    # published run (0.51 end to end, LLaMA-1 13B), so the plan's fast-end days rest on that cap
    # and the basis line says so; at 7B (test_plan_reply) no band reaches it and it says nothing.
    text = _reply(cli, "plan", "--params", "70B", "--tokens", "1.4T", "--deadline-days", "120",
                  "--gpu-types", "a100,h100")
    assert text.rstrip().endswith(
        "with a ×1.50 failure budget. The MFU band's fast end is held at 0.51 on A100 80GB SXM, the fastest "
        "published run end to end.")
    both = _reply(cli, "plan", "--params", "70B", "--tokens", "1.4T", "--deadline-days", "120",
                  "--gpu-types", "a100,a800")
    assert "The MFU band's fast end is held at 0.51 on A100 80GB SXM and A800 SXM, the fastest" in both
    assert "fast end is held" not in _reply(cli, "plan", "--params", "70B", "--tokens", "1.4T",
                                         "--deadline-days", "120", "--gpu-types", "a100",
                                         "--mfu", "0.4")


def test_params_reply_preset(cli: Cli) -> None:
    assert _reply(cli, "params", "--preset", "qwen3-30b-a3b") == snapshot("""\
### Parameters: Qwen3 30B-A3B

30,532,122,624 parameters (30.5B), 3,353,032,704 active per token (3.35B). Source: Qwen/Qwen3-30B-A3B config.json (Hugging Face Hub).

| component | parameters | share |
|---|---|---|
| Token embedding | 311,164,928 | 1% |
| Attention | 905,969,664 | 3% |
| Routed experts | 28,991,029,248 | 95% |
| Router | 12,582,912 | 0.04% |
| Norms | 210,944 | < 0.01% |
| LM head | 311,164,928 | 1% |
| **Total** | **30,532,122,624** | |

Non-embedding (Kaplan et al. 2020's N): 29,909,792,768. Active non-embedding: 2,730,702,848.
Shape: 48 layers, hidden 2048, 32 heads of 128 (4 KV heads), gated MLP of 6144, 128 experts (8 per token), vocabulary 151936, untied embeddings, rotary positions.
""")


def test_presets_reply(cli: Cli) -> None:
    assert _reply(cli, "params", "--list") == snapshot("""\
### Architecture presets

| preset | model | parameters | active | source |
|---|---|---|---|---|
| `gpt2` | GPT-2 (124M) | 124M | 124M | openai-community/gpt2 config.json (Radford et al. 2019) |
| `gpt3-175b` | GPT-3 175B | 175B | 175B | Brown et al. 2020, 'Language Models are Few-Shot Learners', Table 2.1: 96 layers, d_model 12288, 96 heads of 128, context 2048; GPT-2 BPE vocabulary of 50257 |
| `llama-2-7b` | Llama 2 7B | 6.74B | 6.74B | meta-llama/Llama-2-7b-hf config.json (Touvron et al. 2023, Llama 2) |
| `llama-2-70b` | Llama 2 70B | 69B | 69B | meta-llama/Llama-2-70b-hf config.json (Touvron et al. 2023) |
| `llama-3-8b` | Llama 3 8B | 8.03B | 8.03B | meta-llama/Meta-Llama-3-8B config.json |
| `llama-3-70b` | Llama 3 70B | 70.6B | 70.6B | meta-llama/Meta-Llama-3-70B config.json |
| `mistral-7b` | Mistral 7B v0.1 | 7.24B | 7.24B | mistralai/Mistral-7B-v0.1 config.json (Jiang et al. 2023, Mistral 7B) |
| `mixtral-8x7b` | Mixtral 8x7B v0.1 | 46.7B | 12.9B | mistralai/Mixtral-8x7B-v0.1 config.json (Jiang et al. 2024, Mixtral of Experts) |
| `deepseek-v3` | DeepSeek-V3 | 671B | 37.6B | deepseek-ai/DeepSeek-V3 config.json (DeepSeek-AI 2024, DeepSeek-V3 Technical Report) |
| `llama-3.1-8b` | Llama 3.1 8B | 8.03B | 8.03B | meta-llama/Llama-3.1-8B config.json (Hugging Face Hub) |
| `llama-3.1-70b` | Llama 3.1 70B | 70.6B | 70.6B | meta-llama/Llama-3.1-70B config.json (Hugging Face Hub) |
| `llama-3.1-405b` | Llama 3.1 405B | 406B | 406B | meta-llama/Llama-3.1-405B config.json (Hugging Face Hub) |
| `llama-3.2-1b` | Llama 3.2 1B | 1.24B | 1.24B | meta-llama/Llama-3.2-1B config.json (Hugging Face Hub) |
| `llama-3.2-3b` | Llama 3.2 3B | 3.21B | 3.21B | meta-llama/Llama-3.2-3B config.json (Hugging Face Hub) |
| `llama-3.3-70b` | Llama 3.3 70B Instruct | 70.6B | 70.6B | meta-llama/Llama-3.3-70B-Instruct config.json (Hugging Face Hub) |
| `qwen2.5-0.5b` | Qwen2.5 0.5B | 494M | 494M | Qwen/Qwen2.5-0.5B config.json (Hugging Face Hub) |
| `qwen2.5-1.5b` | Qwen2.5 1.5B | 1.54B | 1.54B | Qwen/Qwen2.5-1.5B config.json (Hugging Face Hub) |
| `qwen2.5-3b` | Qwen2.5 3B | 3.09B | 3.09B | Qwen/Qwen2.5-3B config.json (Hugging Face Hub) |
| `qwen2.5-7b` | Qwen2.5 7B | 7.62B | 7.62B | Qwen/Qwen2.5-7B config.json (Hugging Face Hub) |
| `qwen2.5-14b` | Qwen2.5 14B | 14.8B | 14.8B | Qwen/Qwen2.5-14B config.json (Hugging Face Hub) |
| `qwen2.5-32b` | Qwen2.5 32B | 32.8B | 32.8B | Qwen/Qwen2.5-32B config.json (Hugging Face Hub) |
| `qwen2.5-72b` | Qwen2.5 72B | 72.7B | 72.7B | Qwen/Qwen2.5-72B config.json (Hugging Face Hub) |
| `qwen3-0.6b` | Qwen3 0.6B | 596M | 596M | Qwen/Qwen3-0.6B config.json (Hugging Face Hub) |
| `qwen3-1.7b` | Qwen3 1.7B | 1.72B | 1.72B | Qwen/Qwen3-1.7B config.json (Hugging Face Hub) |
| `qwen3-4b` | Qwen3 4B | 4.02B | 4.02B | Qwen/Qwen3-4B config.json (Hugging Face Hub) |
| `qwen3-8b` | Qwen3 8B | 8.19B | 8.19B | Qwen/Qwen3-8B config.json (Hugging Face Hub) |
| `qwen3-14b` | Qwen3 14B | 14.8B | 14.8B | Qwen/Qwen3-14B config.json (Hugging Face Hub) |
| `qwen3-32b` | Qwen3 32B | 32.8B | 32.8B | Qwen/Qwen3-32B config.json (Hugging Face Hub) |
| `qwen3-30b-a3b` | Qwen3 30B-A3B | 30.5B | 3.35B | Qwen/Qwen3-30B-A3B config.json (Hugging Face Hub) |
| `qwen3-235b-a22b` | Qwen3 235B-A22B | 235B | 22.2B | Qwen/Qwen3-235B-A22B config.json (Hugging Face Hub) |
| `gemma-2-2b` | Gemma 2 2B | 2.61B | 2.61B | google/gemma-2-2b config.json (Hugging Face Hub) |
| `gemma-2-9b` | Gemma 2 9B | 9.24B | 9.24B | google/gemma-2-9b config.json (Hugging Face Hub) |
| `gemma-2-27b` | Gemma 2 27B | 27.2B | 27.2B | google/gemma-2-27b config.json (Hugging Face Hub) |
| `gemma-3-1b` | Gemma 3 1B | 1B | 1B | google/gemma-3-1b-pt config.json (Hugging Face Hub) |
| `mistral-7b-v0.3` | Mistral 7B v0.3 | 7.25B | 7.25B | mistralai/Mistral-7B-v0.3 config.json (Hugging Face Hub) |
| `mixtral-8x22b` | Mixtral 8x22B v0.1 | 141B | 39.2B | mistralai/Mixtral-8x22B-v0.1 config.json (Hugging Face Hub) |
| `deepseek-v2-lite` | DeepSeek-V2-Lite | 15.7B | 2.66B | deepseek-ai/DeepSeek-V2-Lite config.json (Hugging Face Hub) |
| `phi-3-mini-4k` | Phi-3 mini 4k | 3.82B | 3.82B | microsoft/Phi-3-mini-4k-instruct config.json (Hugging Face Hub) |
| `phi-3-medium-4k` | Phi-3 medium 4k | 14B | 14B | microsoft/Phi-3-medium-4k-instruct config.json (Hugging Face Hub) |
| `phi-4` | Phi-4 | 14.7B | 14.7B | microsoft/phi-4 config.json (Hugging Face Hub) |
| `olmo-2-7b` | OLMo 2 7B | 7.3B | 7.3B | allenai/OLMo-2-1124-7B config.json (Hugging Face Hub) |
| `olmo-2-13b` | OLMo 2 13B | 13.7B | 13.7B | allenai/OLMo-2-1124-13B config.json (Hugging Face Hub) |
| `smollm2-135m` | SmolLM2 135M | 135M | 135M | HuggingFaceTB/SmolLM2-135M config.json (Hugging Face Hub) |
| `smollm2-360m` | SmolLM2 360M | 362M | 362M | HuggingFaceTB/SmolLM2-360M config.json (Hugging Face Hub) |
| `smollm2-1.7b` | SmolLM2 1.7B | 1.71B | 1.71B | HuggingFaceTB/SmolLM2-1.7B config.json (Hugging Face Hub) |
""")
