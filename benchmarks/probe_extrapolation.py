"""How far the probe's extrapolation from 1 and 2 decoder layers lands from a direct
measurement of deeper models, by family (issue 20).

Run by hand, in an environment with the probe extra (torch and transformers; on this project's
CPU-only machines ``python3 -m pip --python .venv/bin/python install torch==2.13.0
'transformers>=5'``), from the repository root::

    uv run python -m benchmarks.probe_extrapolation
    uv run python -m benchmarks.probe_extrapolation --clock wall --threads 2 --depths 1,2,4,8,16

For each family of ``tests/probe/helpers.py`` (a dense GQA Llama, a Qwen3-MoE, a Gemma 3, at
width 512 and a 512-token context) it measures every depth as the probe measures its two on a
CPU (:func:`compute_budget.probe.measure.measure_together`: built, warmed up, metered, then the
timed steps in turns), and prints, for every depth beyond the probe's, the error of the
probe's extrapolation (:mod:`compute_budget.probe.extrapolate`) in peak memory and step time.
``--clock cpu`` (the default) times steps by the process's CPU time, as the tests do: on a
machine other processes share, wall time also counts the time they hold the cores.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from tests.probe.helpers import FAMILIES, PROBED, SEQ_LEN, direct_peak

CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def errors(family: str, depths: tuple[int, ...], rounds: int, clock: str) -> dict[str, Any]:
    """The extrapolation's errors for ``family`` at each of ``depths`` beyond the probe's."""
    import torch

    from compute_budget.probe.allocator import kept_freed_memory
    from compute_budget.probe.build import full_config
    from compute_budget.probe.extrapolate import full_memory, linear
    from compute_budget.probe.measure import Setup, measure_together

    setup = Setup(seq_len=SEQ_LEN, micro_batch=1, precision="bf16", recompute="none",
                  lora_rank=None, steps=rounds, attn_implementation=None,
                  shallowest=PROBED[0], clock=CLOCKS[clock])
    config = {**FAMILIES[family], "num_hidden_layers": max(depths)}
    start = time.perf_counter()
    with kept_freed_memory("cpu"):
        measured = measure_together(full_config(config), tuple(sorted({*PROBED, *depths})),
                                    setup, torch.device("cpu"))
    low, high = measured[PROBED[0]], measured[PROBED[1]]
    rows = {}
    for layers in sorted(set(depths) - set(PROBED)):
        direct = measured[layers]
        memory = full_memory(low, high, layers, SEQ_LEN).peak_bytes / direct_peak(direct) - 1
        seconds = linear(low.step_time_s, high.step_time_s, PROBED, layers)
        rows[layers] = {"memory_error": round(memory, 4),
                        "time_error": round(seconds / direct.step_time_s - 1, 4),
                        "step_time_s": round(direct.step_time_s, 4)}
    return {"family": family, "model_type": config["model_type"],
            "attn_implementation": low.attn_implementation,
            "seconds": round(time.perf_counter() - start, 1), "depths": rows}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--depths", default="4,8", help="direct depths, comma-separated")
    parser.add_argument("--rounds", type=int, default=7, help="timed steps per depth")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    depths = tuple(int(d) for d in args.depths.split(","))
    report = [errors(family, depths, args.rounds, args.clock)
              for family in args.families.split(",")]
    print(json.dumps({"clock": args.clock, "threads": args.threads, "rounds": args.rounds,
                      "seq_len": SEQ_LEN, "probed": PROBED, "families": report}, indent=1))


if __name__ == "__main__":
    main()
