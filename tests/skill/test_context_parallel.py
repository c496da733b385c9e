"""Context parallelism is not modelled: where a long sequence's activations lay the run out (at
least LONG_CONTEXT tokens, and recomputation, no fit, or more activations than model states per
device), the memory answer carries a code and the memory and estimate replies, markdown and MCP
relay, say so in one sentence; elsewhere they say nothing of it."""

from typing import Any

import pytest

from compute_budget import MemorySpec, RunSpec, estimate_memory, estimate_run
from compute_budget.operations import Reply, by_command, reply_text
from compute_budget.skill.vocabulary import LONG_CONTEXT
from compute_budget.tools.relay import relay

SENTENCE = ("Context parallelism (each sequence split over devices, as Llama 3 trained at 128K) "
            "is not modelled.")
CODE = "context_parallel_unmodelled"
# The review's case: Llama 3.1 8B at 128K on 64 H100 (Llama 3 trained its 128K stage with
# context parallelism; Dubey et al. 2024, Sec. 3.3.2)
LONG = {"preset": "llama-3.1-8b", "gpu": "h100", "gpu_count": 64, "seq_len": 131072}


@pytest.mark.parametrize(("fields", "noted"), [
    (LONG, True),  # full recomputation and TP 2
    ({**LONG, "tp": 1, "pp": 1}, True),  # fits nowhere: what would fit is a remedy
    # TP 4 without recomputation: its 37.9 GiB of activations outweigh 29.9 GiB of states
    ({**LONG, "seq_len": 32768}, True),
    # 32,767 tokens and full recomputation: below the threshold
    ({"preset": "llama-3.1-8b", "gpu": "h100", "gpu_count": 8, "seq_len": 32767}, False),
    ({"preset": "llama-3.1-70b", "gpu": "h100", "gpu_count": 64, "seq_len": 4096}, False),
])
def test_the_code_marks_a_long_sequence_that_lays_the_run_out(fields: dict[str, Any],
                                                               noted: bool) -> None:
    m = estimate_memory(MemorySpec(**fields))
    assert (CODE in m.notes) is noted
    if noted:
        b = m.per_gpu_bytes
        states = b.weights + b.gradients + b.optimizer
        assert m.recompute != "none" or not m.fits or b.activations > states
    else:
        assert m.seq_len < LONG_CONTEXT


def test_the_memory_replies_say_it_once() -> None:
    pinned = estimate_memory(MemorySpec(**LONG, tp=1, pp=1))
    text = reply_text(by_command("memory"), pinned, Reply())
    assert f"- ⚠ {SENTENCE}" in text and text.count("Context parallelism") == 1
    assert relay("estimate_memory", pinned)["caveat"] == SENTENCE  # type: ignore[index]
    short = estimate_memory(MemorySpec(**{**LONG, "seq_len": 8192}))
    assert "Context parallelism" not in reply_text(by_command("memory"), short, Reply())
    assert "caveat" not in relay("estimate_memory", short)  # type: ignore[operator]


def test_the_estimate_replies_say_it_once() -> None:
    est = estimate_run(RunSpec(**LONG, tokens="1T"), in_time=False)
    for reply in (Reply(), Reply(full=True)):
        text = reply_text(by_command("estimate"), est, reply)
        memory_line = next(x for x in text.splitlines() if x.startswith("- Memory: "))
        assert memory_line.endswith(f". {SENTENCE}") and text.count("Context parallelism") == 1
    told = relay("estimate_run_cost", est)
    assert told is not None and told["caveat"] == SENTENCE
    short = estimate_run(RunSpec(**{**LONG, "seq_len": 4096}, tokens="1T"), in_time=False)
    assert "Context parallelism" not in reply_text(by_command("estimate"), short, Reply())
