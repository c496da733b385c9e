"""The memory table's ZeRO divisor for the routed experts is the one the numbers use: with
expert parallelism, ZeRO shards them over the DP/EP ranks holding the same experts
(skill/memory/states.py), not over all of DP."""

from __future__ import annotations

from tests.conftest import Cli


def test_zero_shards_the_routed_experts_over_dp_over_ep(cli: Cli) -> None:
    code, out, _ = cli("memory", "--preset", "mixtral-8x7b", "--gpu", "h100", "--gpus", "16",
                       "--zero", "2", "--tp", "1")
    assert code == 0
    rows = {x.split("|")[1].strip(): x for x in out.splitlines() if x.startswith("| ")}
    # DP 16, EP 4 (the reply's layout line): the experts' ZeRO shards are 16 / 4 = 4.
    assert "EP 4" in out and "DP 16" in out
    for row in ("Gradients", "Optimizer state"):
        assert ("routed experts / 4 (EP) / 4 (ZeRO-2 over the DP/EP ranks holding the same "
                "experts), the rest / 16 (ZeRO-2)") in rows[row]
        assert "/ 4 (EP) / 16" not in rows[row]
