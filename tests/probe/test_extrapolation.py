"""Issue 20, item 3: the probe's extrapolation from 1 and 2 decoder layers against a direct
measurement of 4 and 8 layers, on CPU, for a dense GQA model (Llama), a MoE (Qwen3-MoE) and a
Gemma 3: peak memory within 5%, step time within 15%."""

from __future__ import annotations

from typing import Any

import pytest

from tests.probe.helpers import DIRECT, FAMILIES, PROBED, SEQ_LEN, direct_peak, side_by_side

pytestmark = pytest.mark.slow

MEMORY_TOLERANCE = 0.05
TIME_TOLERANCE = 0.15
ROUNDS = 7


@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_probe_extrapolates_memory_and_time_to_deeper_models(torch: Any,
                                                                 family: str) -> None:
    from compute_budget.probe import run_probe
    from compute_budget.probe.extrapolate import full_memory, linear

    config = FAMILIES[family]
    measured = side_by_side(config, (*PROBED, *DIRECT), ROUNDS)
    low, high = measured[PROBED[0]], measured[PROBED[1]]
    errors = {}
    for layers in DIRECT:
        direct = measured[layers]
        memory = full_memory(low, high, layers, SEQ_LEN).peak_bytes
        seconds = linear(low.step_time_s, high.step_time_s, PROBED, layers)
        errors[layers] = (memory / direct_peak(direct) - 1, seconds / direct.step_time_s - 1)
    # The probe itself, end to end, to the config's 8 layers: the same memory.
    result = run_probe(config, name=family, seq_len=SEQ_LEN, micro_batch=1, steps=1,
                       layers=PROBED)
    end_to_end = result.memory.peak_bytes / direct_peak(measured[8]) - 1
    print(f"{family}: memory error 4 layers {errors[4][0]:+.2%}, 8 layers {errors[8][0]:+.2%}"
          f" (run_probe {end_to_end:+.2%}); time error 4 layers {errors[4][1]:+.1%}, "
          f"8 layers {errors[8][1]:+.1%}")
    assert abs(end_to_end) <= MEMORY_TOLERANCE
    for layers, (memory_error, time_error) in errors.items():
        assert abs(memory_error) <= MEMORY_TOLERANCE, (layers, memory_error)
        assert abs(time_error) <= TIME_TOLERANCE, (layers, time_error)
