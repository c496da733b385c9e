"""A mixture of experts given by its parameter counts (issue 16, item 3): the experts it is
given or assumed, expert parallelism over them, and compute_optimal by its active parameters.

Golden numbers are worked by hand from the formulas they test (module docstrings of
``skill/model/shape.py`` and ``skill/scaling/published.py``) or come from the presets' own
configs, as each comment says."""

from __future__ import annotations

import json
from typing import Any

import pytest
from inline_snapshot import snapshot
from pydantic import ValidationError

from compute_budget import (
    MemorySpec,
    RunSpec,
    count_params,
    estimate_memory,
    estimate_run,
    get_preset,
)
from compute_budget.prompts import render_optimal
from compute_budget.skill.errors import describe_error
from compute_budget.skill.model.shape import (
    default_experts,
    default_experts_per_token,
    routed_params,
)
from compute_budget.skill.scaling.specs import OptimalSpec, optimal
from tests.conftest import Cli

GIB = 2**30
H100_USABLE = 0.9 * 80e9  # USABLE_FRACTION of the H100 SXM's 80 GB (catalog)
BIG: dict[str, Any] = {"params": "400B", "active_params": "40B", "gpu": "h100", "gpu_count": 64}
"""The issue's model: 400B total, 40B active, on 64 × H100."""


def _error(fields: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as info:
        MemorySpec(**fields)
    return describe_error(info.value)


# --- the experts of a MoE given by its counts ---------------------------------------------

def test_the_default_experts_of_400b_with_40b_active() -> None:
    spec = MemorySpec(**BIG)
    shape, size = spec.size.shape, spec.size
    # k = 8 (default); E = the power of two at or above 8·(1 + (400 − 40)/(2/3·40)) = 116: 128.
    assert (shape.experts, shape.experts_per_token) == (128, 8)
    assert (shape.experts_origin, shape.experts_per_token_origin) == ("derived", "default")
    # R = (N − A)·E/(E − k) = 360e9·128/120 = 384e9; the rest, 16e9, on every EP rank.
    assert size.experts == pytest.approx(384e9)
    assert shape.moe_layers == shape.layers and shape.dense_layers == 0
    # the experts in the shape hold R (the width is rounded to a whole channel)
    routed = sum(i * o * n for (name, i, o), n in shape.linear_layers()
                 if n == shape.layers * shape.experts)
    assert routed == pytest.approx(384e9, rel=1e-3)
    # and the k a token uses plus the rest make the active count: 16e9 + 8/120·360e9 = 40e9
    assert size.total - size.experts + 8 / 128 * size.experts == pytest.approx(40e9)


@pytest.mark.parametrize(("preset", "experts"), [
    # the presets' own configs: DeepSeek-V3 256 routed experts, top-8; Qwen3 MoEs 128, top-8
    ("deepseek-v3", 256), ("qwen3-30b-a3b", 128), ("qwen3-235b-a22b", 128),
])
def test_the_default_count_recovers_published_fine_grained_moes(preset: str,
                                                                experts: int) -> None:
    counts = count_params(get_preset(preset))
    assert get_preset(preset).experts == experts
    assert default_experts(counts.total, counts.active, 8) == experts


@pytest.mark.parametrize("preset", ["mixtral-8x7b", "mixtral-8x22b", "deepseek-v3",
                                    "qwen3-30b-a3b", "deepseek-v2-lite"])
def test_routed_params_from_the_counts_are_the_configs_routed_experts(preset: str) -> None:
    # Every parameter a token does not use is in a routed expert it skips, so with the real E
    # and k the counts alone give the config's exact routed-expert total (shared experts,
    # dense layers and routers are active and drop out).
    arch = get_preset(preset)
    counts = count_params(arch)
    assert routed_params(counts.total, counts.active, arch.experts,
                         arch.experts_per_token) == pytest.approx(counts.routed_experts,
                                                                  rel=1e-9)


def test_a_moe_barely_above_its_active_count_still_skips_some_experts() -> None:
    # Found by the bounds fuzz (test_fuzz): params one ulp above active_params made the ideal
    # E/k ratio 1, so E = k = 8, no expert was ever skipped and the expert width divided by
    # E - k = 0. The default count is now the power of two above k as well.
    total, active = 1000.0000000000001, 1000.0  # one ulp apart, at a run's smallest model
    assert default_experts(total, active, 8) == 16
    assert default_experts(8e9, 7.999e9, 1) == 2
    est = estimate_run(RunSpec(params=total, active_params=active, tokens=1, gpu="h100",
                               gpu_count=1))
    assert est.gpu_hours > 0 and est.mfu > 0


def test_given_experts_and_the_top_k_derived_from_them() -> None:
    # Mixtral 8x7B (Jiang et al. 2024: 8 experts, top-2) by its preset's counts and experts=8:
    # k = round(8 / (1 + (46.7 − 12.9)/(2/3·12.9))) = round(1.62) = 2, its real top-k.
    counts = count_params(get_preset("mixtral-8x7b"))
    assert default_experts_per_token(counts.total, counts.active, 8) == 2
    spec = MemorySpec(params=counts.total, active_params=counts.active, experts=8, gpu_count=8)
    assert (spec.size.shape.experts, spec.size.shape.experts_per_token) == (8, 2)
    assert (spec.size.shape.experts_origin,
            spec.size.shape.experts_per_token_origin) == ("given", "derived")
    both = MemorySpec(**BIG, experts=64, experts_per_token=4)
    assert (both.size.shape.experts_origin, both.size.shape.experts_per_token_origin) == (
        "given", "given")
    assert both.size.experts == pytest.approx(360e9 * 64 / 60)
    top4 = MemorySpec(**BIG, experts_per_token=4)
    # E: the power of two at or above 4·14.5 = 58: 64
    assert (top4.size.shape.experts, top4.size.shape.experts_origin) == (64, "derived")


def test_with_mixtrals_shape_and_counts_the_expert_width_is_mixtrals() -> None:
    # Mixtral 8x7B (Jiang et al. 2024, Table 1: 32 layers, dim 4096, hidden_dim 14336, 8
    # experts, top-2) by its preset's counts and its layers, hidden size and heads: the width
    # that makes the 6 experts a token skips hold N − A is (N − A)/(6·32·3·4096) ≈ 14336.
    counts = count_params(get_preset("mixtral-8x7b"))
    spec = MemorySpec(params=counts.total, active_params=counts.active, layers=32, hidden=4096,
                      heads=32, experts=8, gpu_count=8)
    shape = spec.size.shape
    assert (shape.origin, shape.experts_per_token) == ("given", 2)
    assert shape.expert_intermediate == pytest.approx(14336, rel=0.01)


def test_a_dense_model_by_its_counts_has_no_experts() -> None:
    for spec in (MemorySpec(params="7B", gpu_count=8),
                 MemorySpec(params="7B", active_params="7B", gpu_count=8)):
        assert spec.size.experts == 0 and spec.size.shape.experts == 0
        assert spec.size.shape.experts_origin is None


def test_a_config_moe_keeps_its_own_experts_and_accepts_the_same_values() -> None:
    spec = MemorySpec(preset="mixtral-8x7b", experts=8, experts_per_token=2, gpu_count=8)
    assert spec.size.shape.experts_origin == "config"
    assert spec.size.experts == count_params(get_preset("mixtral-8x7b")).routed_experts


@pytest.mark.parametrize(("fields", "name", "allowed"), [
    ({"experts": 8, "experts_per_token": 16}, "experts_per_token", "at most experts (8)"),
    # 4 of 8 experts active: 4·400e9 > 8·40e9, the active experts alone exceed 40B
    ({"experts": 8, "experts_per_token": 4}, "experts_per_token", "fewer than experts"),
    # 4 experts: even top-1 holds (400 − 40)/3 = 120B > 40B active
    ({"experts": 4}, "experts", "more than params / active_params"),
    ({"experts": 1}, "experts", "2"),
    ({"experts": 8.5}, "experts", ""),
    ({"experts": True}, "experts", ""),
    ({"experts_per_token": 0}, "experts_per_token", "1"),
    ({"ep": 0}, "ep", "1"),
    ({"ep": 3}, "ep", "a divisor of the experts (128 derived from params and active_params"),
    ({"ep": 16}, "ep", "a divisor of the data-parallel degree"),
])
def test_bad_experts_and_ep_name_the_field(fields: dict[str, Any], name: str,
                                           allowed: str) -> None:
    base = {**BIG, "gpu_count": 64 if "ep" not in fields else 8}
    message = _error({**base, **fields})
    assert message.startswith(f"{name}: ") and allowed in message


@pytest.mark.parametrize(("fields", "name", "allowed"), [
    ({"params": "7B", "experts": 8}, "experts", "only for a mixture of experts"),
    ({"params": "7B", "active_params": "7B", "experts_per_token": 2}, "experts_per_token",
     "only for a mixture of experts"),
    ({"preset": "mixtral-8x7b", "experts": 16}, "experts", "8, as the config or preset gives"),
    ({"preset": "mixtral-8x7b", "experts_per_token": 1}, "experts_per_token",
     "2, as the config or preset gives"),
    ({"preset": "llama-3-8b", "experts": 8}, "experts", "none: the config or preset is dense"),
    ({"params": "7B", "ep": 2}, "ep", "1 for a dense model"),
])
def test_experts_only_where_a_mixture_of_experts_is(fields: dict[str, Any], name: str,
                                                    allowed: str) -> None:
    message = _error({"gpu_count": 8, **fields})
    assert message.startswith(f"{name}: ") and allowed in message


# --- expert parallelism -------------------------------------------------------------------

def test_expert_parallelism_shards_the_routed_experts_of_a_moe_by_counts() -> None:
    fixed = {**BIG, "gpu_count": 8, "zero": 0, "tp": 1, "pp": 1, "offload": False}
    one = estimate_memory(MemorySpec(**fixed, ep=1))
    eight = estimate_memory(MemorySpec(**fixed, ep=8))
    # 16-bit weights of 7/8 of the 384e9 routed parameters leave each device
    assert one.per_gpu_bytes.weights - eight.per_gpu_bytes.weights == pytest.approx(
        2 * 384e9 * (1 - 1 / 8))
    assert eight.ep == 8


def test_done_when_ep8_fits_where_ep1_does_not_on_64_h100() -> None:
    """Issue 16, item 3: 400B total / 40B active by its counts, 64 × H100, the layout a
    Megatron user sets (ZeRO 1, TP 8, PP 1; offload allowed and chosen in both): with EP 8 the
    routed experts are sharded and it fits; with EP 1 every expert sits on every device."""
    layout = {"zero": 1, "tp": 8, "pp": 1, "offload": True}
    ep1 = estimate_memory(MemorySpec(**BIG, **layout, ep=1))
    ep8 = estimate_memory(MemorySpec(**BIG, **layout, ep=8))
    # By hand. EP 1: 2 bytes × 400e9 / TP 8 = 100e9 B of weights alone, above 72e9 usable.
    assert ep1.per_gpu_bytes.weights == pytest.approx(2 * 400e9 / 8)
    assert ep1.fits is False and ep1.per_gpu_bytes.weights > H100_USABLE
    # EP 8: the 16e9 non-expert parameters / TP 8 and the 384e9 routed ones / (TP 8 × EP 8):
    # 2·16e9/8 + 2·384e9/64 = 4e9 + 12e9 = 16e9 B; with the activations, within 72e9.
    assert ep8.per_gpu_bytes.weights == pytest.approx(2 * 16e9 / 8 + 2 * 384e9 / 64)
    assert ep8.fits is True and ep8.per_gpu_bytes.total <= H100_USABLE
    # the search, with only ep set, also finds a layout that fits
    assert estimate_memory(MemorySpec(**BIG, ep=8)).fits is True


def test_the_run_estimate_takes_ep_for_a_moe_by_counts() -> None:
    from compute_budget import estimate_run

    est = estimate_run(RunSpec(**BIG, tokens="2T", ep=8, zero=1, tp=8, pp=1, offload=True))
    assert est.memory is not None and est.memory.fits and est.memory.ep == 8
    assert est.flops == pytest.approx(6 * 40e9 * 2e12)  # 6 × active × tokens


# --- compute_optimal by the active parameters ---------------------------------------------

def test_compute_optimal_counts_a_moe_by_its_active_parameters() -> None:
    split = optimal(OptimalSpec(params="30B", active_params="3B", tokens="2T"))
    assert split.flops == pytest.approx(6 * 3e9 * 2e12)  # 3.6e22, not 6·30e9·2e12 = 3.6e23
    q = split.proposed
    assert q is not None
    assert (q.params, q.total_params) == (3e9, 30e9)
    assert q.tokens_per_param == pytest.approx(2e12 / 3e9)
    assert q.tokens_per_total_param == pytest.approx(2e12 / 30e9)
    assert split.notes == ["moe_dense_law_on_active_params"]
    # The dense reading of the same numbers: ten times the compute.
    dense = optimal(OptimalSpec(params="30B", tokens="2T"))
    assert dense.flops == pytest.approx(3.6e23) and dense.notes == []
    assert dense.proposed is not None and dense.proposed.total_params is None


def test_compute_optimal_reads_a_moe_preset() -> None:
    counts = count_params(get_preset("mixtral-8x7b"))
    split = optimal(OptimalSpec(preset="mixtral-8x7b", tokens="1T"))
    assert split.flops == pytest.approx(6 * counts.active * 1e12)
    assert split.proposed is not None and split.proposed.params == counts.active
    assert split.proposed.total_params == counts.total
    dense = optimal(OptimalSpec(preset="llama-3-8b", tokens="100B"))
    assert dense.notes == [] and dense.proposed is not None
    assert dense.proposed.params == count_params(get_preset("llama-3-8b")).total


@pytest.mark.parametrize(("fields", "name"), [
    ({"params": "3B", "active_params": "30B", "tokens": "2T"}, "active_params"),
    ({"active_params": "3B", "tokens": "2T"}, "params"),
    ({"preset": "mixtral-8x7b", "params": "7B", "tokens": "1T"}, "params"),
    ({"preset": "mixtral-8x7b", "active_params": "7B", "tokens": "1T"}, "active_params"),
    ({"preset": "mixtral-8x7b"}, "tokens"),
    ({"params": "30B", "active_params": "3B", "tokens": "2T", "flops": "3.6e23"}, "tokens"),
])
def test_bad_optimal_input_names_the_field(fields: dict[str, Any], name: str) -> None:
    with pytest.raises(ValidationError) as info:
        OptimalSpec(**fields)
    assert describe_error(info.value).startswith(f"{name}: ")


# --- both doors ---------------------------------------------------------------------------

def test_the_command_line(cli: Cli) -> None:
    flags = ["--params", "400B", "--active-params", "40B", "--gpu", "h100", "--gpus", "64"]
    code, out, _ = cli("memory", *flags, "--ep", "8", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["ep"] == 8 and data["fits"] is True
    assert (data["shape"]["experts"], data["shape"]["experts_per_token"]) == (128, 8)
    code, out, _ = cli("memory", *flags, "--ep", "8")
    assert code == 0 and "128 routed experts per layer, 8 per token, both assumed" in out
    code, out, _ = cli("memory", *flags, "--experts", "64", "--experts-per-token", "4")
    assert code == 0 and "64 routed experts per layer, 4 per token, as you gave them" in out
    code, _, err = cli("memory", *flags, "--ep", "0")
    assert code == 2 and err.startswith("error: --ep: ")
    code, _, err = cli("memory", *flags, "--experts", "8", "--experts-per-token", "16")
    assert code == 2 and err.startswith("error: --experts-per-token: ")
    code, out, _ = cli("optimal", "--params", "30B", "--active-params", "3B", "--tokens", "2T",
                       "--json")
    assert code == 0 and json.loads(out)["flops"] == pytest.approx(3.6e22)
    code, out, _ = cli("optimal", "--params", "30B", "--active-params", "3B", "--tokens", "2T")
    assert code == 0 and "667 tokens per active parameter" in out
    assert "as an approximation" in out and "Ludziejewski et al. 2025" in out
    code, out, _ = cli("optimal", "--preset", "qwen3-30b-a3b", "--tokens", "2T")
    assert code == 0 and "tokens per active parameter" in out


def test_a_copy_with_other_experts_is_resolved_anew() -> None:
    spec = MemorySpec(**BIG)
    assert spec.model.experts == pytest.approx(384e9)
    other = spec.model_copy(update={"experts": 64, "experts_per_token": 4})
    # R = 360e9·64/60 = 384e9 too; the shape's experts show the new layout
    assert other.model.shape.experts == 64 and other.model.shape.experts_per_token == 4
    assert other.size.shape.experts_origin == "given"


def test_the_optimal_reply_for_a_moe() -> None:
    # 30B total, 3B active on 2T tokens: 3.6e22 FLOPs, 667 tokens per active parameter
    reply = render_optimal(optimal(OptimalSpec(params="30B", active_params="3B", tokens="2T")))
    assert reply == snapshot("""\
### Compute-optimal split of 3.60 × 10²² FLOPs

| basis | active params | tokens | tokens per active param |
|---|---|---|---|
| 20 tokens per parameter (Hoffmann et al. 2022) | **17.3B** | **346B** | 20 |
| Hoffmann et al. 2022 fit, optimum of eq. 4 | 9.2B | 652B | 70.8 |
| Besiroglu et al. 2024 fit, optimum of eq. 4 | 17.4B | 344B | 19.7 |

**Your run, 30B params of which 3B active on 2T tokens, is 667 tokens per active parameter (33× the compute-optimal 20): over-trained for its size: by the compute-optimal ratio a larger model on fewer tokens would reach a lower loss at the same compute.** Over-training is often deliberate: a smaller model is cheaper to serve, and that can be worth the extra training compute.

Its loss against the optimal split at the same compute, under each fit: Hoffmann et al. 2022 +0.023; Besiroglu et al. 2024 +0.052 (loss in nats per token on the fits' data).

A mixture of experts: its compute is 6 × active parameters × tokens, and it is split and placed by its active parameters under the dense fits above, as an approximation; its 66.7 tokens per total parameter measure nothing here. No MoE scaling law gives a compute-optimal token ratio to use instead: Clark et al. 2022 fit parameters and expert count, not tokens; Krajewski et al. 2024 (expert granularity) and Ludziejewski et al. 2025 (expert count; up to 2.7B active and 5B total parameters) add tokens, for their own expert layouts and data.

The published fits hold for their data and setup (language models; loss in nats per token on their data). Hoffmann et al.'s approach-3 fit as published puts the optimum far above their own 20 tokens per parameter; Besiroglu et al. 2024 refit the same data and recover it. Treat the spread between the rows as the uncertainty.
""")  # noqa: E501 (markdown held verbatim)
