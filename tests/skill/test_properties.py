"""Invariants that must hold for every input (Hypothesis)."""

import pytest
from hypothesis import given, settings, strategies as st

from compute_budget import (
    MemorySpec,
    RunSpec,
    estimate_memory,
    estimate_run,
    list_accelerators,
    split_budget,
)

PRICED = [a.key for a in list_accelerators()
          if a.default_price is not None and a.peak_tflops.get(a.default_precision) is not None]

params = st.floats(min_value=1e6, max_value=2e12)
tokens = st.floats(min_value=1e8, max_value=5e13)
counts = st.integers(min_value=1, max_value=100_000)
mfus = st.one_of(st.none(), st.floats(min_value=0.01, max_value=1.0))


@pytest.mark.slow  # 1.4 s of the quick set's minute; the slow set runs it
@settings(max_examples=100, deadline=None)  # each example searches layouts
@given(n=params, t=tokens, more=st.floats(min_value=1.0, max_value=100.0), gpus=counts,
       gpu=st.sampled_from(PRICED), mfu=mfus)
def test_more_tokens_never_cost_less(n: float, t: float, more: float, gpus: int, gpu: str,
                                     mfu: float | None) -> None:
    # in_time=False: the devices a too-long run would need are searched below, on fewer examples
    a = estimate_run(RunSpec(params=n, tokens=t, gpu=gpu, gpu_count=gpus, mfu=mfu), in_time=False)
    b = estimate_run(RunSpec(params=n, tokens=t * more, gpu=gpu, gpu_count=gpus, mfu=mfu),
                     in_time=False)
    assert b.flops >= a.flops
    assert b.wall_hours >= a.wall_hours
    assert b.dollar_cost is not None and a.dollar_cost is not None
    assert b.dollar_cost >= a.dollar_cost
    assert b.dollar_cost_range is not None and a.dollar_cost_range is not None
    assert b.dollar_cost_range[1] >= a.dollar_cost_range[1]


@settings(max_examples=100, deadline=None)  # each example searches layouts: the quick set
@given(n=params, t=tokens, gpus=counts, gpu=st.sampled_from(PRICED), mfu=mfus,
       price=st.one_of(st.none(), st.floats(min_value=0.01, max_value=100)),
       budget=st.floats(min_value=1.0, max_value=10.0))
def test_dollars_are_hours_times_devices_times_rate(n: float, t: float, gpus: int, gpu: str,
                                                    mfu: float | None, price: float | None,
                                                    budget: float) -> None:
    e = estimate_run(RunSpec(params=n, tokens=t, gpu=gpu, gpu_count=gpus, mfu=mfu,
                             usd_per_gpu_hour=price, failure_budget=budget), in_time=False)
    assert e.usd_per_gpu_hour is not None and e.dollar_cost is not None
    assert e.dollar_cost == pytest.approx(e.wall_hours * gpus * e.usd_per_gpu_hour)
    assert e.gpu_hours == pytest.approx(e.wall_hours * gpus)
    assert e.dollar_cost_with_failures == pytest.approx(e.dollar_cost * budget)
    assert e.wall_days == pytest.approx(e.wall_hours / 24)
    lo, hi = e.wall_hours_range
    assert lo <= e.wall_hours * (1 + 1e-12) and e.wall_hours <= hi * (1 + 1e-12)


@pytest.mark.slow  # 1.2 s of the quick set's minute; the slow set runs it
@settings(max_examples=40, deadline=None)
@given(n=st.floats(min_value=1e8, max_value=5e11), t=st.floats(min_value=1e12, max_value=5e13),
       gpus=st.integers(min_value=1, max_value=512), gpu=st.sampled_from(PRICED))
def test_the_count_in_time_finishes_in_time_and_one_machine_fewer_does_not(
        n: float, t: float, gpus: int, gpu: str) -> None:
    import math

    spec = RunSpec(params=n, tokens=t, gpu=gpu, gpu_count=gpus)
    e = estimate_run(spec)
    count = e.gpu_count_in_time
    # a run that fits in time needs none; one too long always gets one (one that does not fit
    # gets one when its fewest devices are too long)
    assert (count is None) if e.feasibility == "ok" else (
        count is not None or e.feasibility == "does_not_fit")
    if count is None:
        return
    there = estimate_run(spec.model_copy(update={"gpu_count": count}), in_time=False)
    assert there.feasibility == "ok" and there.mfu == e.mfu_in_time
    step = e.price.instance_gpus or 1
    fewer = count - (math.lcm(step, 8) if count > 8 else step)
    if fewer >= 1:  # one machine fewer misses, or pays for the count's devices anyway
        below = estimate_run(spec.model_copy(update={"gpu_count": fewer}), in_time=False)
        assert below.feasibility != "ok" or (below.price.paid_gpus or fewer) >= count


layouts = st.tuples(st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 2, 4]),
                    st.integers(min_value=1, max_value=64))


@settings(max_examples=200, deadline=None)
@given(n=st.floats(min_value=1e7, max_value=1e12), layout=layouts,
       optimizer=st.sampled_from(["adamw", "adam8bit", "sgd", "adafactor"]),
       recompute=st.sampled_from(["none", "selective", "full"]),
       seq=st.sampled_from([512, 2048, 8192]), micro=st.integers(min_value=1, max_value=8),
       sp=st.booleans(), flash=st.booleans(),
       frozen=st.floats(min_value=0.0, max_value=1.0))
def test_zero_stage_k_plus_1_never_needs_more_memory(
    n: float, layout: tuple[int, int, int], optimizer: str, recompute: str, seq: int,
    micro: int, sp: bool, flash: bool, frozen: float,
) -> None:
    tp, pp, dp = layout
    totals = []
    for stage in range(4):
        spec = MemorySpec(params=n, gpu_count=tp * pp * dp, tp=tp, pp=pp, zero=stage,
                          optimizer=optimizer, recompute=recompute, seq_len=seq,
                          micro_batch=micro, sp=sp and tp > 1, flash_attention=flash,
                          trainable_params=max(n * (1 - frozen), 1.0))  # sp needs tp > 1
        est = estimate_memory(spec)
        b = est.per_gpu_bytes
        assert b.total >= b.weights
        assert b.total == pytest.approx(b.weights + b.gradients + b.optimizer + b.activations)
        # the sharded states; ZeRO-3 adds the two layers it gathers whole (at most two layers)
        totals.append(b.total - est.zero3_gathered_bytes)
    for smaller, larger in zip(totals[1:], totals, strict=False):
        assert smaller <= larger * (1 + 1e-12)


@settings(max_examples=200, deadline=None)
@given(c=st.floats(min_value=1e10, max_value=1e27), r=st.floats(min_value=0.1, max_value=1e5))
def test_split_budget_round_trips(c: float, r: float) -> None:
    n, d = split_budget(c, r)
    assert 6 * n * d == pytest.approx(c, rel=1e-9)
    assert d == pytest.approx(r * n, rel=1e-9)
