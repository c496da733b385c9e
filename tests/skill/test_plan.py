"""The cheapest plan under constraints: the search against trying every count, the equality
with `estimate`, the wins, unpriced types, the batch cap, what binds when nothing is feasible,
bad input."""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import ValidationError

from compute_budget.skill.errors import InputError, describe_error
from compute_budget.skill.estimate import RunEstimate, estimate_run
from compute_budget.skill.hardware.catalog import get_accelerator, list_accelerators
from compute_budget.skill.hardware.peer_link import device_peer_link
from compute_budget.skill.planning.plan import Plan, PlanReport, PlanSpec, plan_run
from compute_budget.skill.planning.plan_search import TIE
from compute_budget.skill.planning.plan_spec import optimal_batch_tokens
from compute_budget.skill.run_spec import RunSpec


def _counts(cap: int, step: int = 1) -> list[int]:
    """The counts a plan searches, written out: 1, 2, 4, then whole nodes of 8."""
    return [n for n in (1, 2, 4, *range(8, cap + 1, 8)) if n % step == 0]


def _batch(e: RunEstimate) -> float:
    """The smallest global batch of an estimate: one micro-batch per data-parallel rank."""
    assert e.memory is not None
    return e.memory.data_parallel * e.memory.micro_batch * e.seq_len


def _exhaustive(run: dict[str, Any], gpus: list[str], cap: int, deadline: float,
                budget: float | None, max_batch: float) -> dict[str, list[RunEstimate]]:
    """Every feasible (type, count), by estimating each one."""
    out: dict[str, list[RunEstimate]] = {}
    for gpu in gpus:
        key = get_accelerator(gpu).key
        out[key] = []
        for n in _counts(cap):
            e = estimate_run(RunSpec(**run, gpu=gpu, gpu_count=n))
            cost = e.dollar_cost_with_failures
            if (e.feasibility != "does_not_fit" and e.wall_days <= deadline
                    and (budget is None or (cost is not None and cost <= budget))
                    and _batch(e) <= max_batch):
                out[key].append(e)
    return out


def _least(items: list[RunEstimate], value: Any, tie: Any) -> RunEstimate:
    least = min(value(e) for e in items)
    return min((e for e in items if value(e) <= least * (1 + TIE)), key=tie)


def _cost(e: RunEstimate) -> float:
    return math.inf if e.dollar_cost_with_failures is None else e.dollar_cost_with_failures


def _won(plans: list[Plan], code: str) -> tuple[str, int] | None:
    found = [(p.gpu, p.gpu_count) for p in plans if code in p.wins]
    assert len(found) <= 1
    return found[0] if found else None


# run, types, max_gpu_count, deadline_days, budget_usd, max_batch_tokens (None: the default,
# which does not bind at 64 devices in the first seven cases)
BRUTE_FORCE: dict[str, tuple[dict[str, Any], list[str], int, float, float | None,
                             float | None]] = {
    "small model": ({"params": "1B", "tokens": "20B"},
                    ["a100-40gb", "h100", "tpu-v5e", "mi300x"], 64, 2.0, None, None),
    "70B that needs many devices": ({"preset": "llama-2-70b", "tokens": "100B"},
                                    ["a100-40gb", "h100", "mi300x", "l40s"], 64, 60.0, None,
                                    None),
    "a deadline that excludes slow types": ({"params": "7B", "tokens": "100B"},
                                            ["v100", "l4", "h100", "b200"], 64, 4.0, None, None),
    "a budget": ({"params": "7B", "tokens": "200B"},
                 ["a100-40gb", "h100", "mi300x", "tpu-v5e"], 64, 30.0, 40_000.0, None),
    "mixture of experts": ({"preset": "mixtral-8x7b", "tokens": "100B"},
                           ["a100-80gb", "h200", "gaudi3", "tpu-v5p"], 64, 30.0, None, None),
    # memory decides the fewest devices, and recomputation the cheapest count
    "70B bound by memory": ({"preset": "llama-2-70b", "tokens": "10B"},
                            ["a100-40gb", "l40s", "rtx-4090", "h100"], 64, 60.0, None, None),
    "long context": ({"preset": "llama-3-8b", "tokens": "20B", "seq_len": 32768},
                     ["a100-40gb", "l4", "h100", "tpu-v5e"], 64, 30.0, None, None),
    # the batch cap binds: 12 sequences of 4096 tokens (one type finishes in time only above)
    "a batch cap": ({"params": "1B", "tokens": "20B"},
                    ["a100-40gb", "h100", "tpu-v5e", "mi300x"], 64, 2.0, None, 12 * 4096),
    "a batch cap and a budget": ({"params": "7B", "tokens": "200B"},
                                 ["a100-40gb", "h100", "mi300x", "tpu-v5e"], 64, 30.0, 40_000.0,
                                 40 * 4096),
    # tensor parallelism puts 4 devices on each sequence of 32k tokens: 16 devices are within
    "a batch cap at a tensor-parallel layout": ({"preset": "llama-3-8b", "tokens": "20B",
                                                 "seq_len": 32768},
                                                ["a100-40gb", "l4", "h100", "tpu-v5e"], 64, 30.0,
                                                None, 4 * 32768),
    # 16 sequences: the search lays 16 H200 out at EP 4, TP 1 (DP 16); 12, which TP 2 met
    # before expert parallelism was searched, no layout the search picks now meets
    "a batch cap on a mixture of experts": ({"preset": "mixtral-8x7b", "tokens": "100B"},
                                            ["a100-80gb", "h200", "gaudi3", "tpu-v5p"], 64, 30.0,
                                            None, 16 * 4096),
    # devices rented in machines paid in full (AWS's 1-, 4- and 8-GPU instances, Lambda's
    # 8 x V100): 2 L4 pay for a g6.12xlarge's 4, which finish sooner for the same dollars
    "machines paid in full": ({"params": "1B", "tokens": "10B"},
                              ["l4", "t4", "v100", "h100"], 64, 30.0, None, None),
}


@pytest.mark.parametrize("case", list(BRUTE_FORCE))
def test_the_search_finds_what_trying_every_count_finds(case: str) -> None:
    run, gpus, cap, deadline, budget, max_batch = BRUTE_FORCE[case]
    report = plan_run(PlanSpec(**run, gpus=gpus, max_gpu_count=cap, deadline_days=deadline,
                               budget_usd=budget, max_batch_tokens=max_batch))
    if max_batch is not None:
        assert (report.max_batch_tokens, report.max_batch_tokens_basis) == (max_batch, "user")
    every = _exhaustive(run, gpus, cap, deadline, budget, report.max_batch_tokens)
    feasible = [e for points in every.values() for e in points]
    assert report.feasible == bool(feasible)
    assert feasible, "each case has a plan"
    priced = [e for e in feasible if e.dollar_cost_with_failures is not None]
    cheapest = _least(priced, _cost, lambda e: (e.gpu_count, e.wall_days, e.accelerator_key))
    fastest = _least(feasible, lambda e: e.wall_days,
                     lambda e: (_cost(e), e.gpu_count, e.accelerator_key))
    assert _won(report.plans, "cheapest") == (cheapest.accelerator_key, cheapest.gpu_count)
    assert _won(report.fastest, "fastest") == (fastest.accelerator_key, fastest.gpu_count)
    # per type: the fewest dollars (ties: fewer devices), and the fastest
    for key, points in every.items():
        best = next((p.gpu_count for p in report.plans if p.gpu == key), None)
        quick = next((p.gpu_count for p in report.fastest if p.gpu == key), None)
        if not points:
            assert best is None and quick is None
            continue
        # the fewest dollars: a machine filled only partly pays for all its devices (AWS's
        # 4-GPU instances at 2 L4, Lambda's 8 x V100 below 8)
        least = _least(points, lambda e: e.dollar_cost if e.dollar_cost is not None
                       else e.gpu_hours, lambda e: (e.gpu_count, e.wall_days))
        soonest = _least(points, lambda e: e.wall_days, lambda e: (e.gpu_hours, e.gpu_count))
        if device_peer_link(get_accelerator(key)).kind == "pcie":
            # between PCIe cards ZeRO-3's exposed gathers shrink with the micro-batch the memory
            # allows at each count, so the layout's cost is not monotone in the count and the
            # search may stop at a dearer count (plan_search's docstring): within 20%
            at = {e.gpu_count: e for e in points}
            assert _cost(at[best]) <= 1.2 * _cost(least)
            assert quick is not None and at[quick].wall_days <= 1.2 * soonest.wall_days
        else:
            assert best == least.gpu_count
            assert quick == soonest.gpu_count
    # and it estimated far fewer points than trying every count (CPU offload's cost, priced
    # since issue 16, changes with the count, so a memory-bound case probes a few more)
    assert report.estimates_run < 0.6 * len(gpus) * len(_counts(cap))


def test_a_deadline_that_excludes_slow_types_leaves_them_out() -> None:
    run, gpus, cap, deadline, _, _ = BRUTE_FORCE["a deadline that excludes slow types"]
    report = plan_run(PlanSpec(**run, gpus=gpus, max_gpu_count=cap, deadline_days=deadline))
    status = {f.gpu: f.status for f in report.frontier}
    assert status["v100"] == status["l4"] == "misses_deadline"
    assert {p.gpu for p in report.plans} == {"h100-sxm", "b200"}


def test_more_devices_can_be_cheaper_when_they_save_recomputation() -> None:
    report = plan_run(PlanSpec(preset="llama-2-70b", tokens="10B", deadline_days=60,
                               gpus=["h100"], max_gpu_count=64))
    plan = report.plans[0]
    fewest = min(p.gpu_count for f in report.frontier for p in f.points if p.feasible)
    assert plan.gpu_count > fewest
    tight = estimate_run(RunSpec(preset="llama-2-70b", tokens="10B", gpu="h100",
                                 gpu_count=fewest))
    assert tight.recompute != "none" and plan.estimate.recompute == "none"
    assert plan.dollar_cost_with_failures < tight.dollar_cost_with_failures  # type: ignore[operator]


def test_estimate_on_a_plan_gives_the_same_days_and_dollars() -> None:
    report = plan_run(PlanSpec(preset="llama-2-70b", tokens="100B", deadline_days=30,
                               gpus=["h100", "a100", "mi300x"], max_gpu_count=256))
    assert report.plans and report.fastest
    for plan in (*report.plans, *report.fastest):
        direct = estimate_run(RunSpec(preset="llama-2-70b", tokens="100B", gpu=plan.gpu,
                                      gpu_count=plan.gpu_count))
        assert plan.wall_days == direct.wall_days
        assert plan.dollar_cost == direct.dollar_cost
        assert plan.dollar_cost_with_failures == direct.dollar_cost_with_failures
        assert plan.estimate == direct
        assert plan.wall_days <= 30


def test_a_plan_on_a_single_type_uses_your_price() -> None:
    spec = PlanSpec(params="7B", tokens="100B", deadline_days=10, gpus=["h100"],
                    usd_per_gpu_hour="$1.50", max_gpu_count=64)
    plan = plan_run(spec).plans[0]
    assert plan.usd_per_gpu_hour == 1.5 and plan.estimate.price.origin == "user"
    direct = estimate_run(RunSpec(params="7B", tokens="100B", gpu="h100",
                                  gpu_count=plan.gpu_count, usd_per_gpu_hour=1.5))
    assert plan.dollar_cost_with_failures == direct.dollar_cost_with_failures


def test_the_full_catalog_search_is_cheap() -> None:
    spec = PlanSpec(params="7B", tokens="1T", deadline_days=30)
    report = plan_run(spec)
    searched = [f for f in report.frontier if f.status != "no_peak"]
    assert len(searched) >= 20
    # a blind search would estimate every count of every type: 3 + 512 counts each; three
    # find most types' plans, a fourth the PCIe cards' (their ZeRO-3 cost changes with count)
    assert report.estimates_run <= 3.5 * len(searched)
    assert report.feasible
    cheapest = report.plans[0]
    assert "cheapest" in cheapest.wins
    costs = [p.dollar_cost_with_failures for p in report.plans]
    priced = [c for c in costs if c is not None]
    assert priced == sorted(priced) and costs[: len(priced)] == priced
    assert len(report.plans) == 5  # top


def test_unpriced_types_can_be_fastest_but_never_cheapest() -> None:
    assert get_accelerator("gb300").default_price is None
    report = plan_run(PlanSpec(params="7B", tokens="100B", deadline_days=30,
                               gpus=["gb300", "h100"], max_gpu_count=64))
    fastest = report.fastest[0]
    assert fastest.gpu == "gb300" and "fastest" in fastest.wins
    assert fastest.dollar_cost is None and "unpriced" in fastest.notes
    assert _won(report.plans, "cheapest") == ("h100-sxm", report.plans[0].gpu_count)
    assert report.plans[-1].gpu == "gb300" and report.plans[-1].dollar_cost is None
    only_unpriced = plan_run(PlanSpec(params="7B", tokens="100B", deadline_days=30,
                                      gpus=["gb300"], max_gpu_count=64))
    assert only_unpriced.feasible
    assert _won(only_unpriced.plans, "cheapest") is None
    assert "cheapest_on_type" in only_unpriced.plans[0].wins


def test_the_budget_is_compared_with_the_cost_with_failures() -> None:
    # decision.py's within_budget allows a go when the cost with failures is within it.
    base = dict(params="7B", tokens="100B", deadline_days=30, gpus=["h100"], max_gpu_count=64)
    plan = plan_run(PlanSpec(**base)).plans[0]
    nominal, with_failures = plan.dollar_cost, plan.dollar_cost_with_failures
    assert nominal is not None and with_failures is not None and nominal < with_failures
    assert plan_run(PlanSpec(**base, budget_usd=with_failures)).feasible
    between = plan_run(PlanSpec(**base, budget_usd=(nominal + with_failures) / 2))
    assert not between.feasible
    assert between.frontier[0].status == "over_budget"


def _binding(report: PlanReport, code: str) -> dict[str, Any]:
    assert not report.feasible and not report.plans and not report.fastest
    found = [b.numbers for b in report.binding if b.code == code]
    assert found, [b.code for b in report.binding]
    return found[0]


def test_nothing_feasible_the_deadline_binds() -> None:
    report = plan_run(PlanSpec(params="7B", tokens="1T", deadline_days=1, gpus=["h100", "a100"],
                               max_gpu_count=64))
    numbers = _binding(report, "deadline")
    # the fastest possible: all 64 of the faster type
    direct = estimate_run(RunSpec(params="7B", tokens="1T", gpu="h100", gpu_count=64))
    assert numbers["gpu"] == "h100-sxm" and numbers["gpu_count"] == 64
    assert numbers["fastest_wall_days"] == direct.wall_days > 1
    assert numbers["deadline_days"] == 1


def test_nothing_feasible_the_budget_binds() -> None:
    base = dict(params="7B", tokens="1T", deadline_days=365, gpus=["h100", "a100"],
                max_gpu_count=64)
    unlimited = plan_run(PlanSpec(**base))
    report = plan_run(PlanSpec(**base, budget_usd=10_000))
    numbers = _binding(report, "budget")
    cheapest = unlimited.plans[0]
    assert numbers["cheapest_cost_with_failures"] == cheapest.dollar_cost_with_failures > 10_000
    assert (numbers["gpu"], numbers["gpu_count"]) == (cheapest.gpu, cheapest.gpu_count)
    assert numbers["budget_usd"] == 10_000


def test_nothing_feasible_an_unknown_price_cannot_meet_a_budget() -> None:
    report = plan_run(PlanSpec(params="7B", tokens="100B", deadline_days=30, gpus=["gb300"],
                               max_gpu_count=64, budget_usd=1e6))
    numbers = _binding(report, "unknown_cost")
    assert numbers["gpu"] == "gb300" and numbers["budget_usd"] == 1e6
    assert report.frontier[0].status == "unpriced_with_budget"


def test_nothing_feasible_memory_binds() -> None:
    report = plan_run(PlanSpec(preset="llama-2-70b", tokens="10B", deadline_days=365,
                               gpus=["l4", "rtx-4090"], max_gpu_count=4))
    numbers = _binding(report, "memory")
    assert {f.status for f in report.frontier} == {"does_not_fit"}
    direct = estimate_run(RunSpec(preset="llama-2-70b", tokens="10B", gpu=numbers["gpu"],
                                  gpu_count=4))
    assert direct.feasibility == "does_not_fit"
    assert numbers["gpu_count_needed"] == direct.memory.min_gpu_count  # type: ignore[union-attr]
    assert numbers["gpu_count_needed"] > numbers["max_gpu_count"] == 4


def test_nothing_feasible_availability_binds() -> None:
    base = dict(params="7B", tokens="1T", deadline_days=30, gpus=["h100"])
    unlimited = plan_run(PlanSpec(**base))
    needed = min(p.gpu_count for p in unlimited.plans)
    report = plan_run(PlanSpec(**base, available={"h100": 64}))
    numbers = _binding(report, "availability")
    assert numbers == {"gpu": "h100-sxm", "gpu_count_needed": needed, "available": 64,
                       "gpu_count_needed_rented": None}  # H100s are priced per device
    assert needed > 64
    # and with the 64 available, the deadline is what binds
    assert _binding(report, "deadline")["gpu_count"] == 64


def test_available_limits_only_the_type_it_names() -> None:
    report = plan_run(PlanSpec(params="7B", tokens="1T", deadline_days=30, gpus=["h100", "a100"],
                               available={"h100": 64}, max_gpu_count=512))
    caps = {f.gpu: f.max_gpu_count for f in report.frontier}
    assert caps == {"h100-sxm": 64, "a100-80gb": 512}
    assert all(p.gpu_count <= 64 for f in report.frontier if f.gpu == "h100-sxm"
               for p in f.points)
    assert {p.gpu for p in report.plans} == {"a100-80gb"}


def test_must_fit_off_allows_counts_that_do_not_fit() -> None:
    base = dict(preset="llama-2-70b", tokens="1B", deadline_days=60, gpus=["h100"],
                max_gpu_count=8)
    strict = plan_run(PlanSpec(**base))
    loose = plan_run(PlanSpec(**base, must_fit=False))
    assert all(p.fits for f in strict.frontier for p in f.points if p.feasible)
    assert any(p.fits is False and p.feasible for f in loose.frontier for p in f.points)
    assert loose.plans[0].gpu_count < strict.plans[0].gpu_count
    assert "does_not_fit" in loose.plans[0].notes


def test_pinned_degrees_restrict_the_counts() -> None:
    report = plan_run(PlanSpec(params="7B", tokens="100B", deadline_days=30, gpus=["h100"],
                               tp=8, pp=3, max_gpu_count=200))
    counts = [p.gpu_count for f in report.frontier for p in f.points]
    assert counts and all(n % 24 == 0 for n in counts)
    assert report.plans[0].estimate.memory.tp == 8  # type: ignore[union-attr]


def test_types_without_a_peak_for_the_precision_are_listed_not_searched() -> None:
    report = plan_run(PlanSpec(params="7B", tokens="100B", deadline_days=30,
                               gpus=["v100", "h100"], precision="fp8", max_gpu_count=64))
    status = {f.gpu: f.status for f in report.frontier}
    assert status == {"h100-sxm": "feasible", "v100": "no_peak"}
    assert report.plans[0].estimate.precision == "fp8"


def test_frontier_points_are_the_estimates() -> None:
    report = plan_run(PlanSpec(preset="llama-2-70b", tokens="100B", deadline_days=60,
                               gpus=["a100-40gb"], max_gpu_count=64))
    (frontier,) = report.frontier
    counts = [p.gpu_count for p in frontier.points]
    assert counts == sorted(counts) and counts[-1] == 64
    for point in frontier.points:
        direct = estimate_run(RunSpec(preset="llama-2-70b", tokens="100B", gpu="a100-40gb",
                                      gpu_count=point.gpu_count))
        assert point.wall_days == direct.wall_days
        assert point.dollar_cost_with_failures == direct.dollar_cost_with_failures
        assert point.fits == direct.memory.fits  # type: ignore[union-attr]
        assert point.meets_deadline == (direct.wall_days <= 60)


def test_the_smallest_batch_of_a_plan() -> None:
    plan = plan_run(PlanSpec(params="7B", tokens="100B", deadline_days=30, gpus=["h100"],
                             max_gpu_count=64)).fastest[0]
    memory = plan.estimate.memory
    assert memory is not None
    assert plan.min_global_batch_tokens == (memory.data_parallel * memory.micro_batch
                                            * plan.estimate.seq_len)


def test_the_default_batch_cap_is_the_compute_optimal_batch() -> None:
    # DeepSeek LLM (Bi et al. 2024), eq. 1: B_opt = 0.2920·C^0.3271 tokens. By hand, for 7B
    # parameters and 1T tokens: C = 6·7e9·1e12 = 4.2e22 FLOPs; ln C = ln 4.2 + 22·ln 10
    # = 1.435085 + 50.656872 = 52.091957; 0.3271·ln C = 17.039279; e^17.039279 = 2.512261e7;
    # × 0.2920 = 7.33580e6 tokens.
    report = plan_run(PlanSpec(params="7B", tokens="1T", deadline_days=30, gpus=["h100"],
                               max_gpu_count=64))
    assert report.compute_flops == pytest.approx(4.2e22)
    assert report.max_batch_tokens == pytest.approx(7.33580e6, rel=1e-5)
    assert report.max_batch_tokens_basis == "default_formula"
    assert report.max_batch_tokens_source is not None
    assert "DeepSeek" in report.max_batch_tokens_source
    assert optimal_batch_tokens(4.2e22) == report.max_batch_tokens
    with pytest.raises(InputError, match="compute_flops"):
        optimal_batch_tokens(0.0)
    # a mixture of experts counts its active parameters, as the FLOPs do
    moe = PlanSpec(preset="mixtral-8x7b", tokens="1T", deadline_days=30)
    assert moe.model.active < moe.model.total
    assert moe.compute_flops == pytest.approx(6 * moe.model.active * 1e12)
    assert moe.batch_cap == (optimal_batch_tokens(moe.compute_flops), "default_formula")


def test_the_fastest_plan_is_the_largest_count_within_the_batch_cap() -> None:
    # 7.3358e6 tokens / 4096 per sequence = 1790.97 data-parallel ranks at most; at tp = pp = 1
    # the last whole node within is 1784 devices. Without the cap it was all 4096.
    report = plan_run(PlanSpec(params="7B", tokens="1T", deadline_days=30, gpus=["h100"]))
    cap = report.max_batch_tokens
    fastest = report.fastest[0]
    memory = fastest.estimate.memory
    assert memory is not None and memory.tp == memory.pp == 1
    assert fastest.gpu_count == 1784 and "fastest" in fastest.wins
    assert fastest.min_global_batch_tokens == 1784 * 4096 <= cap
    above = estimate_run(RunSpec(params="7B", tokens="1T", gpu="h100", gpu_count=1792))
    assert _batch(above) == 1792 * 4096 > cap and above.wall_days < fastest.wall_days
    (frontier,) = report.frontier
    assert frontier.status == "feasible"
    for point in frontier.points:
        direct = estimate_run(RunSpec(params="7B", tokens="1T", gpu="h100",
                                      gpu_count=point.gpu_count))
        assert point.min_global_batch_tokens == _batch(direct)
        assert point.within_batch_cap == (_batch(direct) <= cap)
        assert not point.feasible or point.within_batch_cap
    largest = frontier.points[-1]
    assert largest.gpu_count == 4096 and largest.meets_deadline and largest.fits
    assert not largest.within_batch_cap and not largest.feasible
    assert report.notes == ["linear_scaling"]


def test_a_batch_cap_you_give_overrides_the_formula() -> None:
    base = dict(params="7B", tokens="1T", deadline_days=30, gpus=["h100"])
    default = plan_run(PlanSpec(**base))
    report = plan_run(PlanSpec(**base, max_batch_tokens="1M"))
    assert report.max_batch_tokens == 1e6 and report.max_batch_tokens_basis == "user"
    assert report.max_batch_tokens_source is None
    # 1e6 / 4096 = 244.1 ranks: the last whole node within is 240 devices
    fastest = report.fastest[0]
    assert fastest.gpu_count == 240 and fastest.min_global_batch_tokens == 240 * 4096
    assert fastest.wall_days > default.fastest[0].wall_days
    # the cheapest plan needs fewer devices than either cap: it does not move
    assert report.plans[0].gpu_count == default.plans[0].gpu_count < 240


def test_nothing_feasible_the_batch_cap_binds() -> None:
    base = dict(params="7B", tokens="1T", deadline_days=30, gpus=["h100", "a100"])
    report = plan_run(PlanSpec(**base, max_batch_tokens=16 * 4096))
    assert {f.status for f in report.frontier} == {"over_batch_cap"}
    numbers = _binding(report, "batch")
    # the fewest devices in time, on the faster type: the count below misses the deadline
    n = numbers["gpu_count"]
    assert numbers["gpu"] == "h100-sxm" and numbers["max_batch_tokens"] == 16 * 4096
    at_n = estimate_run(RunSpec(params="7B", tokens="1T", gpu="h100", gpu_count=n))
    below = estimate_run(RunSpec(params="7B", tokens="1T", gpu="h100", gpu_count=n - 8))
    assert at_n.wall_days <= 30 < below.wall_days
    assert numbers["min_global_batch_tokens"] == _batch(at_n) > 16 * 4096
    # with that batch allowed, the fewest devices in time are the plan (and the fastest)
    allowed = plan_run(PlanSpec(**base, max_batch_tokens=_batch(at_n)))
    assert allowed.feasible
    assert (allowed.plans[0].gpu, allowed.plans[0].gpu_count) == ("h100-sxm", n)
    assert (allowed.fastest[0].gpu, allowed.fastest[0].gpu_count) == ("h100-sxm", n)


def test_the_spec_reuses_the_run_spec_fields_and_drops_the_devices() -> None:
    schema = PlanSpec.model_json_schema()["properties"]
    assert "gpu" not in schema and "gpu_count" not in schema
    run = RunSpec.model_json_schema()["properties"]
    for name in ("tokens", "precision", "mfu", "failure_budget", "kind", "family", "params"):
        assert schema[name] == run[name], name
    spec = PlanSpec(params="7B", tokens="1.5T", deadline_days="30", gpus=["H100", "h100-sxm"])
    assert spec.tokens == 1.5e12 and spec.gpus == ["h100-sxm"]


@pytest.mark.parametrize(
    ("fields", "name"),
    [
        ({"gpus": ["h100", "not-a-gpu"]}, "gpus[1]"),
        ({"gpus": []}, "gpus"),
        ({"deadline_days": 0}, "deadline_days"),
        ({"deadline_days": -3}, "deadline_days"),
        ({"deadline_days": 400}, "deadline_days"),
        ({"deadline_days": True}, "deadline_days"),
        ({"deadline_days": math.inf}, "deadline_days"),
        ({"available": {"h100": 0}}, "available.h100"),
        ({"available": {"nope": 8}}, "available.nope"),
        ({"available": {"a100": 8}, "gpus": ["h100"]}, "available.a100-80gb"),
        ({"budget_usd": 0}, "budget_usd"),
        ({"budget_usd": "lots"}, "budget_usd"),
        ({"max_gpu_count": 0}, "max_gpu_count"),
        ({"tp": 8, "max_gpu_count": 4}, "max_gpu_count"),
        ({"usd_per_gpu_hour": 2.0}, "usd_per_gpu_hour"),
        ({"usd_per_gpu_hour": 2.0, "gpus": ["h100", "a100"]}, "usd_per_gpu_hour"),
        ({"peak_tflops": 900}, "peak_tflops"),
        ({"precision": "fp8", "gpus": ["a100"]}, "precision"),
        ({"tp": 3}, "tp"),
        ({"gpu": "h100"}, "gpu"),
        ({"gpu_count": 8}, "gpu_count"),
        ({"top": 0}, "top"),
        ({"tokens": True}, "tokens"),
        ({"max_batch_tokens": 0}, "max_batch_tokens"),
        ({"max_batch_tokens": True}, "max_batch_tokens"),
        ({"max_batch_tokens": "lots"}, "max_batch_tokens"),
    ],
)
def test_bad_plan_input_names_the_field(fields: dict[str, Any], name: str) -> None:
    base: dict[str, Any] = {"preset": "llama-3-8b", "tokens": "1T", "deadline_days": 30}
    with pytest.raises(ValidationError) as info:
        PlanSpec(**{**base, **fields})
    assert describe_error(info.value).startswith(f"{name}: ")


def test_every_searched_type_has_a_dense_peak() -> None:
    spec = PlanSpec(params="7B", tokens="1T", deadline_days=30)
    keys = {acc.key for acc in spec.accelerators}
    assert "a10g" not in keys  # no published dense peak
    assert keys == {acc.key for acc in list_accelerators()
                    if acc.peak_tflops.get(acc.default_precision) is not None}


def test_a_plan_that_misses_the_deadline_at_the_slow_end_says_how_many_would_not() -> None:
    """13B on 500B tokens by day 21: the cheapest plan's central estimate is within the deadline
    but the slow end of the MFU band is not; by the estimate's linear scaling, n·slow/deadline
    devices (rounded up to whole nodes) would finish in time even there."""
    import math

    from compute_budget.skill.planning.plan import PlanSpec, plan_run

    report = plan_run(PlanSpec(params="13B", tokens="500B", deadline_days=21, gpus=["h100"]))
    plan = report.plans[0]
    slow = plan.wall_days_range[1]
    assert plan.wall_days <= 21 < slow
    assert plan.gpu_count_for_slow_end == 8 * math.ceil(plan.gpu_count * slow / 21 / 8)
    # a short run: the fewest devices finish within 40 days even at the slow end
    relaxed = plan_run(PlanSpec(params="13B", tokens="5B", deadline_days=40, gpus=["h100"]))
    assert relaxed.plans[0].wall_days_range[1] <= 40
    assert relaxed.plans[0].gpu_count_for_slow_end is None


def test_the_slow_end_count_is_one_the_search_allows() -> None:
    """With pp=3 pinned, counts are multiples of 3 (and of whole nodes above 4): the devices
    suggested for the slow end are too."""
    report = plan_run(PlanSpec(preset="llama-2-7b", tokens="500B", deadline_days=14,
                               gpus=["h100"], pp=3))
    plan = report.plans[0]
    assert plan.gpu_count % 3 == 0 and plan.wall_days_range[1] > 14
    assert plan.gpu_count_for_slow_end is not None
    assert plan.gpu_count_for_slow_end % 3 == 0
    assert plan.gpu_count_for_slow_end > plan.gpu_count
    # A deadline at which the slow end (the PP 3 bubble, ×1.17, charged; the Hopper prior's
    # low end) needs a whole-node count that is not a multiple of 3 (e.g. 96 devices with a
    # 22-day slow end need 112 for 19.0 days): the next allowed count, a multiple of 24, is
    # what the plan asks for. The deadline follows the prior, so the test does not pin it.
    from compute_budget.skill.planning.grid import CountGrid, slow_end_count
    from compute_budget.skill.planning.plan_spec import MAX_GPU_COUNT

    tighter = report.plans[0].estimate
    nodes = next(n for n in range(tighter.gpu_count + 8, 4096, 8) if n % 3)
    deadline = tighter.gpu_count * tighter.wall_days_range[1] / (nodes - 4)
    spec = PlanSpec(preset="llama-2-7b", tokens="500B", deadline_days=deadline,
                    gpus=["h100"], pp=3)
    needed = tighter.gpu_count * tighter.wall_days_range[1] / deadline
    assert nodes - 8 < needed <= nodes
    grid = CountGrid(spec.count_step, MAX_GPU_COUNT)
    assert slow_end_count(tighter, spec.deadline_days, grid) == 24 * math.ceil(nodes / 24)


def test_the_title_counts_the_flops_the_plans_do() -> None:
    # LoRA does no weight gradients for the frozen base: about 4·N per token, not 6·N. The title
    # said 6·N·D (2.12e19 for 70B on 50M tokens) while every plan trained 1.42e19
    from compute_budget.prompts import render_plan
    from compute_budget.prompts.render import fmt_flops

    report = plan_run(PlanSpec(preset="llama-3.1-70b", lora_rank=16, weights_bits=4,
                               tokens="50M", deadline_days=2, gpus=["h100"]))
    flops = report.plans[0].estimate.flops
    assert flops < 0.75 * report.compute_flops
    assert render_plan(report).startswith(f"### Plans to train {fmt_flops(flops)} FLOPs")


def test_a_cheapest_plan_the_estimate_does_not_model_names_one_it_does() -> None:
    # 7B on 1T tokens in 14 days: MI300X is cheapest on Hopper's borrowed prior, and RTX A6000
    # next on hundreds of PCIe cards whose network is not modelled; the reply names the
    # cheapest plan on calibrated hardware in modelled machines beside them
    from compute_budget.prompts import render_plan

    report = plan_run(PlanSpec(params="7B", tokens="1T", deadline_days=14))
    first, modelled = report.plans[0], report.cheapest_modelled
    assert first.estimate.mfu_used.borrowed
    assert modelled is not None and not modelled.estimate.mfu_used.borrowed
    assert not {"pcie_cluster", "instance_network"} & set(modelled.notes)
    assert modelled.dollar_cost_with_failures is not None
    assert first.dollar_cost_with_failures is not None
    assert modelled.dollar_cost_with_failures >= first.dollar_cost_with_failures
    priced = [p for p in report.plans if p.dollar_cost is not None]
    earlier = priced[:priced.index(modelled)] if modelled in priced else priced
    assert all(p.estimate.mfu_used.borrowed or set(p.notes) & {"pcie_cluster",
               "instance_network"} for p in earlier)
    assert f"in machines the estimate models, is {modelled.gpu_count:,} × " in render_plan(report)
    calibrated = plan_run(PlanSpec(params="7B", tokens="1T", deadline_days=14,
                                   gpus=["a100", "h100"]))
    assert calibrated.cheapest_modelled is None
    assert "Its saving may be none" not in render_plan(calibrated)


def test_the_devices_you_can_get_are_answered_for() -> None:
    # 13B on 260B tokens in 10 days with 64 A100 and 32 L40S to hand: other types make the
    # list, and the reply said nothing of the user's own; 64 A100 take 33 days (216 would do)
    from compute_budget.prompts import render_plan

    report = plan_run(PlanSpec(params="13B", tokens="260B", deadline_days=10,
                               available={"a100": 64, "l40s": 32}))
    a100 = next(t for t in report.frontier if t.gpu == "a100-80gb")
    assert a100.status == "misses_deadline" and a100.max_gpu_count == 64
    days = min(p.wall_days for p in a100.points)
    assert days > 30
    text = render_plan(report)
    assert f"**Your 64 × A100 80GB SXM**: {days:.3g} days at best, past the deadline" in text
    assert a100.gpu_count_for_deadline == math.ceil(64 * days / 10 / 8) * 8
    assert f"about {a100.gpu_count_for_deadline} would meet it" in text
    assert "**Your 32 × L40S**" in text
    # a type that is listed among the plans is not repeated
    listed = plan_run(PlanSpec(params="1B", tokens="20B", deadline_days=10,
                               available={"h100": 64}, gpus=["h100"]))
    assert "**Your" not in render_plan(listed)


def test_bindings_name_the_device_and_what_else_holds() -> None:
    from compute_budget.prompts import render_plan

    # over budget only with the failure budget: the nominal cost is within it (a marginal
    # verdict, not a no-go); the device by its name as well as its key
    over = plan_run(PlanSpec(params="70B", tokens="1.4T", deadline_days=30, budget_usd=1.5e6,
                             gpus=["h100", "h200", "mi300x"]))
    (budget,) = [b for b in over.binding if b.code == "budget"]
    nominal = budget.numbers["nominal_cost"]
    assert isinstance(nominal, float) and nominal <= 1.5e6
    text = render_plan(over)
    assert "× MI300X (`mi300x`), costs" in text
    assert "within the budget, which a verdict counts as marginal, not no-go" in text
    # a deadline missed at the most devices searched says so
    late = plan_run(PlanSpec(params="70B", tokens="1.4T", deadline_days=1))
    assert "at the most devices searched (4,096): more might meet it" in render_plan(late)


@pytest.mark.slow  # about 1 s: the quick set keeps its minute on two cores
def test_a_pooled_prior_and_unpriced_plans_are_worded_as_they_are() -> None:
    from compute_budget.prompts import render_plan

    # L40S has no generation prior of its own: the pooled one (it read "borrowed from None")
    pooled = plan_run(PlanSpec(preset="llama-3.1-70b", tokens="100M", lora_rank=16,
                               weights_bits=4, kind="fine-tune", deadline_days=2,
                               gpus=["rtx-4090", "l40s", "a100"]))
    text = render_plan(pooled)
    assert "None" not in text
    assert pooled.plans[0].gpu == "l40s" and pooled.cheapest_modelled is not None
    assert "Its MFU is the pooled prior of every generation" in text
    # a budget no priced plan meets, with unpriced plans in time: "also", not "only"
    tight = plan_run(PlanSpec(preset="llama-3-8b", tokens="100B", deadline_days=14,
                              budget_usd=5000))
    codes = {b.code for b in tight.binding}
    assert {"budget", "unknown_cost"} <= codes
    assert "plans in time also exist on devices without a price" in render_plan(tight)


def test_the_count_available_is_searched_itself() -> None:
    # available t4=12: the grid searched 1, 2, 4, 8 and said "T4 would work with 16 devices;
    # 12 are available", where 12 T4 meet the 10-day deadline in 8.95 days (estimate)
    from compute_budget.skill.planning.grid import CountGrid

    grid = CountGrid(1, 12)
    assert [grid.count(i) for i in range(len(grid))] == [1, 2, 4, 8, 12]
    assert grid.first_at_least(9) == 4 and grid.first_at_least(13) == len(grid)
    assert [CountGrid(1, 16).count(i) for i in range(len(CountGrid(1, 16)))] == [1, 2, 4, 8, 16]
    assert [CountGrid(2, 6).count(i) for i in range(len(CountGrid(2, 6)))] == [2, 4, 6]
    assert [CountGrid(1, 3).count(i) for i in range(len(CountGrid(1, 3)))] == [1, 2, 3]
    assert len(CountGrid(4, 10)) == 2  # 4, 8: 10 is not a multiple of the pinned 4
    report = plan_run(PlanSpec(params="1B", tokens="20B", deadline_days=10, gpus=["t4"],
                               available={"t4": 12}))
    assert report.feasible and report.plans[0].gpu_count == 12
    alone = estimate_run(RunSpec(params="1B", tokens="20B", gpu="t4", gpu_count=12))
    assert report.plans[0].wall_days == pytest.approx(alone.wall_days)


def test_the_fastest_plan_at_the_most_devices_searched_says_so() -> None:
    # at max_gpu_count 64 the fastest read "More devices would need a global batch above 7.34M",
    # which 64 H100 do not: the count searched is what stops it
    from compute_budget.prompts import render_plan

    capped = plan_run(PlanSpec(params="7B", tokens="1T", deadline_days=60, gpus=["h100"],
                               max_gpu_count=64))
    assert capped.fastest[0].gpu_count == 64
    text = render_plan(capped)
    assert "It uses the most devices searched (64); more would be faster." in text
    assert "More devices would need a global batch" not in text


def test_a_budget_binding_names_the_devices_paid_for_when_they_cost_less() -> None:
    # 7B x 2T in 30 days on TPU v5p: the budget binding named 280 chips at $1,281,758, though
    # they pay for whole cubes that finish sooner for less; it names the count the plan takes,
    # one that fills its slice (5 cubes of 64: 320)
    report = plan_run(PlanSpec(params="7B", tokens="2T", deadline_days=30, gpus=["tpu-v5p"],
                               budget_usd=500_000))
    budget = next(b for b in report.binding if b.code == "budget")
    free = plan_run(PlanSpec(params="7B", tokens="2T", deadline_days=30, gpus=["tpu-v5p"]))
    assert budget.numbers["gpu_count"] == free.plans[0].gpu_count == 320
    assert free.plans[0].estimate.price.paid_gpus is None and free.plans[0].estimate.price.joined
    assert budget.numbers["cheapest_cost_with_failures"] == pytest.approx(
        free.plans[0].dollar_cost_with_failures)


def test_a_plan_without_any_price_names_no_cheapest() -> None:
    # Gaudi 3 and A800 have no catalog price: the reply read "Cheapest: 56 × Gaudi 3 ... an
    # unknown cost", beside "devices without a catalog price can be fastest but never cheapest"
    from compute_budget.prompts import render_plan
    from compute_budget.tools.relay import relay

    report = plan_run(PlanSpec(preset="llama-3-8b", tokens="1T", deadline_days=30,
                               gpus=["gaudi3", "a800"]))
    assert all(p.dollar_cost_with_failures is None for p in report.plans)
    text = render_plan(report)
    assert "**Cheapest" not in text and "| cheapest on" not in text
    assert f"**No plan has a price in the catalog; the fewest device-hours: " \
        f"{report.plans[0].gpu_count} × Gaudi 3**" in text
    told = relay("plan_run", report)
    assert told is not None and told["headline"].startswith("No price; fewest device-hours: ")


def test_the_slow_end_count_says_when_it_is_more_than_the_user_can_get() -> None:
    # 13B x 1T in 90 days with 128 A100 available: "about 184 devices would meet it even there"
    # read as if they could be had
    from compute_budget.prompts import render_plan

    report = plan_run(PlanSpec(params="13B", tokens="1T", deadline_days=90,
                               gpus=["h100", "a100-80gb"],
                               available={"h100": 64, "a100-80gb": 128}))
    plan = report.plans[0]
    assert plan.gpu == "a100-80gb" and plan.gpu_count_for_slow_end is not None
    assert plan.gpu_count_for_slow_end > 128 and plan.slow_end_cap == 128
    assert f"about {plan.gpu_count_for_slow_end} devices would meet it even there (more than " \
        "the 128 you can get)" in render_plan(report)
