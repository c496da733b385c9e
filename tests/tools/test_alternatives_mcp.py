"""Issue 8 through the in-memory MCP client: alternatives chosen by the kind of run, the seeds an
ablation needs from the gain and its uncertainty, and other hardware at on-demand prices."""

from typing import Any

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


async def test_gain_arguments_are_optional_and_described(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    schema = tools["suggest_alternatives"].input_schema
    verdict = tools["render_verdict"].input_schema
    for name in ("predicted_gain", "gain_uncertainty"):  # described alike on both (issue 19)
        assert name in schema["properties"], name
        assert verdict["properties"][name] == schema["properties"][name], name
        assert verdict["properties"][name]["anyOf"][0].get("description"), name
        assert name not in schema.get("required", [])
    assert "ablation" in schema["properties"]["kind"]["anyOf"][0]["enum"]
    assert "seeds" in tools["suggest_alternatives"].description


async def test_ablation_seeds_from_the_gain_and_its_uncertainty(client: Client) -> None:
    result = await client.call_tool("suggest_alternatives", {
        "params": "1.3B", "tokens": "26B", "gpu": "a100", "gpu_count": 8, "kind": "ablation",
        "mfu": 0.4, "usd_per_gpu_hour": 2, "predicted_gain": 0.3, "gain_uncertainty": 0.5})
    assert not result.is_error, _text(result)
    report = result.structured_content
    assert report["kind"] == "ablation"
    kinds = [a["kind"] for a in report["alternatives"]]
    assert kinds[:2] == ["smaller_scale", "more_seeds"] and "distillation" not in kinds
    (seeds,) = [a for a in report["alternatives"] if a["kind"] == "more_seeds"]
    # k = ⌊(0.5/0.3)²⌋ + 1 = 3 runs at $902.78 each (6·1.3e9·26e9 FLOPs at MFU 0.4 on 8 A100).
    assert seeds["detail"]["runs"] == 3
    assert seeds["dollar_cost"] == pytest.approx(3 * 902.78, abs=0.02)  # six digits
    assert "σ/√3 = 0.5/√3 = 0.2887 is under the gain 0.3" in _text(result)


async def test_continued_pretraining_has_no_from_scratch_rows(client: Client) -> None:
    result = await client.call_tool("suggest_alternatives", {
        "preset": "llama-3-8b", "tokens": "50B", "gpu": "h100", "gpu_count": 8,
        "kind": "continued-pretrain"})
    assert not result.is_error, _text(result)
    kinds = {a["kind"] for a in result.structured_content["alternatives"]}
    assert {"fewer_tokens", "lora", "other_hardware"} <= kinds
    assert not kinds & {"smaller_scale", "shorter_run", "distillation", "smaller_base"}
    text = _text(result)
    assert text.startswith("### Cheaper alternatives to continued pre-training: 8.03B params")
    assert "4.02B params" not in text  # no half-size Llama 3 to continue from
    assert "compared at on-demand prices only" in text


async def test_bad_gain_uncertainty_names_the_argument(client: Client) -> None:
    result = await client.call_tool("suggest_alternatives", {
        "params": "1.3B", "tokens": "26B", "gpu": "a100", "gpu_count": 8, "kind": "ablation",
        "gain_uncertainty": -1})
    assert result.is_error
    assert "gain_uncertainty" in _text(result)


async def test_a_fine_tunes_trial_row_carries_its_stop_rule_and_the_idea_is_a_line(
        client: Client) -> None:
    # With the gain, the fewer-tokens row says what the metric must reach: 30% of 0.6 = 0.18
    run = {"params": "7B", "tokens": "100B", "gpu": "a100", "gpu_count": 8, "mfu": 0.4,
           "usd_per_gpu_hour": 1.5, "kind": "fine-tune"}
    result = await client.call_tool("suggest_alternatives", {
        **run, "predicted_gain": 0.6, "gain_uncertainty": 0.7})
    assert not result.is_error, _text(result)
    (fewer,) = [a for a in result.structured_content["alternatives"]
                if a["kind"] == "fewer_tokens"]
    assert fewer["detail"]["stop_if_gain_below"] == pytest.approx(0.18)
    text = _text(result)
    assert "stop unless the eval metric has moved by at least 0.18 by then" in text
    # the verdict on the same run gives the same number itself (no second call needed)
    verdict = await client.call_tool("render_verdict", {
        **run, "predicted_gain": 0.6, "gain_uncertainty": 0.7})
    assert "go on only if, by then, the metric is at least 0.18 above where it started" in (
        _text(verdict))
    # the different idea: one line under the table with its number, no table row
    assert "| A different idea |" not in text
    assert "\nA different idea: the same money buys about 3.3 of the fewer-tokens runs" in text
    assert "different_idea" in {a["kind"] for a in result.structured_content["alternatives"]}


async def test_a_partly_used_machine_is_offered_whole(client: Client) -> None:
    # 4 MI300X rent DigitalOcean's droplet of 8 at $20.72/h (/v2/sizes, 2026-10-08): all 8 take
    # half the time for half the money (tests/skill/test_fill_machine.py has the numbers)
    run = {"params": "1.3B", "active_params": "300M", "tokens": "100B", "gpu": "mi300x",
           "gpu_count": 4}
    result = await client.call_tool("suggest_alternatives", run)
    assert not result.is_error, _text(result)
    report = result.structured_content
    (fill,) = [a for a in report["alternatives"] if a["kind"] == "fill_machine"]
    assert fill["detail"] == {"kind": "fill_machine", "gpu_count_used": 4, "paid_gpus": 8}
    assert fill["dollar_cost_with_failures"] == pytest.approx(1134.18, abs=0.01)
    assert fill["wall_days"] == pytest.approx(1.52051, abs=1e-5)
    assert "| All devices paid for | the same run on all 8 × MI300X" in _text(result)
    # the relay's headline names the largest saving (a smaller scale here); the same run on the
    # whole machine, cheaper and faster at no change to the run, gets its own line
    assert report["relay"]["same_run"] == ("on all 8 devices paid for, the same run costs $756 "
                                           "less, in 1.52 days (the original: 3.04 days).")
    estimate = await client.call_tool("estimate_run_cost", run)
    assert "8 paid for 4 used: `suggest_alternatives` tries all 8)" in _text(estimate)
    assert estimate.structured_content["relay"]["price_source"].endswith(
        "8 paid for 4 used: suggest_alternatives tries all 8)")
