"""The activation benchmark's measurement, rerun: benchmarks/activation_memory.py measures two
families again (at 256 and 512 tokens, on one thread) and must reproduce the bytes per layer in
the committed data file byte for byte, and the hf formula must stay within 5% of what it
measured. The quick suite pins the formula to the committed file; this checks that the file is
still what the measuring code gives with the transformers release CI installs (a new release
can change what a model keeps for the backward pass), and that the measuring code runs.

GPT-2 (LayerNorm, a fused Conv1D QKV, dropout; SDPA with attention dropout falls back to the
CPU math path, so its pinned variant turns that dropout off) and Phi-3-mini (a fused QKV whose
output is kept whole, a fused gate-up projection) are the two cheapest families to build, and
they take the paths the Llama shape does not."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.activation_table import load, rows

pytestmark = pytest.mark.slow

CHECKED = ("gpt2_small", "phi3_mini")
SEQ_LENS = (256, 512)
COMMON = 512
"""A length the committed file measured too (it measured 512, 1024 and 2048)."""


@pytest.fixture(scope="module")
def fresh() -> dict[str, Any]:
    from benchmarks.activation_memory import FAMILIES, measure_family
    from tests.probe.conftest import torch_or_skip

    torch = torch_or_skip()
    import transformers

    transformers.logging.set_verbosity_error()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return {"families": {name: measure_family(FAMILIES[name], SEQ_LENS)
                             for name in CHECKED}}
    finally:
        torch.set_num_threads(threads)


def _per_layer(variant: dict[str, Any], seq_len: int) -> float:
    return float(next(r["bytes_per_layer"] for r in variant["results"]
                      if r["seq_len"] == seq_len))


@pytest.mark.parametrize("family", CHECKED)
def test_the_committed_measurement_is_reproduced(fresh: dict[str, Any], family: str) -> None:
    committed = load()["families"][family]
    measured = fresh["families"][family]
    assert set(measured["variants"]) == set(committed["variants"])
    for label, variant in measured["variants"].items():
        before = committed["variants"][label]
        assert variant["attn_implementation"] == before["attn_implementation"]
        assert variant["sdpa_backend"] == before["sdpa_backend"]
        assert _per_layer(variant, COMMON) == _per_layer(before, COMMON), label
        # One layer's storages, listed one by one, add up to the differenced figure.
        assert variant["breakdown"]["matches_differenced_bytes_per_layer"], label


def test_the_formula_is_within_five_percent_of_the_fresh_measurement(
        fresh: dict[str, Any]) -> None:
    compared = rows(fresh, COMMON)
    # gpt2's default (attention dropout on) runs SDPA's CPU math path, which no GPU runs.
    assert {(r.family, r.variant) for r in compared} == {
        ("gpt2_small", "no_attention_dropout"), ("phi3_mini", "default")}
    for row in compared:
        assert row.ratio == pytest.approx(1, abs=0.05), (row.family, row.measured, row.formula)
