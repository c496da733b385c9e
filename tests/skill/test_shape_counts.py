"""A shape given by layers, hidden and heads must count about the params given beside it
(review: ``memory --params 7B --layers 32 --hidden 8192 --heads 64`` showed 7B of weights beside
the activations of a ~26B shape). The rule is a preset's (COUNT_TOLERANCE, 25%), applied to the
count range of the shape (:func:`shape_count_range`)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from compute_budget import MemorySpec, RunSpec
from compute_budget.skill.errors import describe_error
from compute_budget.skill.model.param_count import count_params
from compute_budget.skill.model.presets import get_preset, list_presets
from compute_budget.skill.model.shape import shape_count_range


def _refusal(**fields: object) -> str:
    with pytest.raises(ValidationError) as info:
        MemorySpec(gpu_count=8, **fields)  # type: ignore[arg-type]
    return describe_error(info.value)


def test_the_reviews_shape_of_26b_beside_7b_is_refused_naming_both() -> None:
    message = _refusal(params="7B", layers=32, hidden=8192, heads=64, gpu="a100")
    # 32 · (4·8192² attention + 3·8192·21,760 gated MLP) + 2 · 32,000 · 8192 embeddings + norms
    assert message.startswith("params: 7B is not allowed; within 25% of what layers (32), "
                              "hidden (8192) and heads (64) count: 26.2B (the Llama layout "
                              "assumed) to "), message
    assert message.endswith("or leave layers, hidden and heads out (the shape is then guessed "
                            "from params)")


def test_the_low_end_is_the_count_of_the_shape_the_estimate_uses() -> None:
    # Llama-2-7B is that layout (32 × 4096, MLP 11,008, vocabulary 32,000): its exact count
    low, high = shape_count_range(32, 4096, 32)
    assert low == count_params(get_preset("llama-2-7b")).total
    assert high > 2 * low


@pytest.mark.parametrize(("params", "ok"), [
    ("5.1B", True), ("5B", False), ("21B", True), ("22B", False)])
def test_the_rule_is_25_percent_of_either_end(params: str, ok: bool) -> None:
    # 32 × 4096 × 32 heads counts 6.74B to 17.2B: 0.75 × 6.74 = 5.05, 1.25 × 17.2 = 21.5
    fields = {"params": params, "layers": 32, "hidden": 4096, "heads": 32}
    if ok:
        assert MemorySpec(gpu_count=8, **fields).size.total == float(params[:-1]) * 1e9
    else:
        assert _refusal(**fields).startswith(f"params: {params} is not allowed; within 25%")


def test_a_mixture_of_experts_is_checked_by_its_active_params() -> None:
    message = _refusal(params="47B", active_params="1B", layers=32, hidden=4096, heads=32)
    assert message.startswith("active_params: 1B is not allowed; within 25% of what layers (32)")
    assert RunSpec(params="47B", active_params="13B", layers=32, hidden=4096, heads=32,
                   tokens="1T", gpu="h100", gpu_count=8).size.active == 13e9


def test_every_presets_own_shape_and_count_are_accepted() -> None:
    # what a user copies from a model card: its layers, hidden size, heads and count
    checked = 0
    for name in list_presets():
        arch = get_preset(name)
        if arch.hidden % arch.heads:
            continue  # a head size of its own: not a shape these three fields can give
        counts = count_params(arch)
        active = {"active_params": counts.active} if arch.experts else {}
        MemorySpec(params=counts.total, layers=arch.layers, hidden=arch.hidden,
                   heads=arch.heads, gpu_count=8, **active)
        checked += 1
    assert checked >= 40


def test_experts_without_active_params_name_the_missing_count_not_the_shape() -> None:
    # review: a Mixtral-like 46.7B with its 32 × 4096 × 32 shape and 8 experts, top-2, but no
    # active_params, was told to leave out the shape; an MoE's shape counts its active params
    message = _refusal(params="46.7B", layers=32, hidden=4096, heads=32, experts=8,
                       experts_per_token=2, gpu="h100")
    assert message == ("experts: 8 is not allowed; only for a mixture of experts: with "
                       "active_params less than params, or a config or preset"), message
    assert MemorySpec(params="46.7B", active_params="12.9B", layers=32, hidden=4096, heads=32,
                      experts=8, experts_per_token=2, gpu_count=8).size.active == 12.9e9
