"""A config file is read once per request (issue 15): the specs composed of field groups hand
their resolved architecture on, instead of reading the file again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compute_budget import PlanSpec, plan_run
from compute_budget.skill.model import config_file

LLAMA_3_8B = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
              "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32,
              "vocab_size": 128256}


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    original = config_file.load_config

    def counting(path: Any, **kwargs: Any) -> Any:
        seen.append(str(path))
        return original(path, **kwargs)

    monkeypatch.setattr("compute_budget.skill.model.source.load_config", counting)
    return seen


def test_a_plan_reads_its_config_once(tmp_path: Path, reads: list[str]) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(LLAMA_3_8B))
    spec = PlanSpec(config=str(path), tokens="100B", deadline_days=30, gpus=["h100", "a100"])
    report = plan_run(spec)
    assert report.feasible and report.estimates_run > 1
    assert reads == [str(path)]


def test_an_mcp_call_reads_its_config_once(tmp_path: Path, reads: list[str]) -> None:
    import anyio
    from mcp import Client

    from compute_budget.tools import build_server

    path = tmp_path / "config.json"
    path.write_text(json.dumps(LLAMA_3_8B))

    async def call() -> Any:
        async with Client(build_server()) as client:
            return await client.call_tool("suggest_alternatives", {
                "config": str(path), "tokens": "10B", "gpu": "h100", "gpu_count": 8})

    result = anyio.run(call)
    assert not result.is_error
    assert reads == [str(path)]
