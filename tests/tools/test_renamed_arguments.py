"""Arguments sent under their command-line names (``gpus``, ``price``, ``uncertainty``), a
synonym (``num_gpus``) or misspelled: the reply names the argument meant with the value given,
and does not tell the assistant to ask the user again for it."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from pydantic import create_model

from compute_budget.tools.renamed import renamed_arguments

pytestmark = pytest.mark.anyio

RUN = {"params": "7B", "tokens": "100B", "gpu": "h100"}


def _text(result: Any) -> str:
    assert result.is_error
    text: str = result.content[0].text
    return text


async def test_a_flag_name_is_named_as_its_argument_with_its_value(client: Client) -> None:
    text = _text(await client.call_tool("estimate_run_cost", {**RUN, "gpus": 8, "price": 2.5}))
    assert "`gpus` is called `gpu_count` in estimate_run_cost." in text
    assert "`price` is called `usd_per_gpu_hour` in estimate_run_cost." in text
    assert "again with gpu_count=8, usd_per_gpu_hour=2.5: the values already given" in text
    # neither an "unknown argument" line for them nor a question for the count the user gave
    assert "unknown argument" not in text and "Missing inputs" not in text


async def test_a_synonym_is_named_as_its_argument_with_its_value(client: Client) -> None:
    # "num_gpus: unknown argument / Missing inputs: gpu_count. Ask the user" made the assistant
    # ask again for the 8 the user gave
    text = _text(await client.call_tool("estimate_run_cost", {**RUN, "num_gpus": 8}))
    assert "`num_gpus` is called `gpu_count` in estimate_run_cost." in text
    assert "Missing inputs" not in text and "unknown argument" not in text
    text = _text(await client.call_tool("plan_run", {"params": "7B", "tokens": "100B",
                                                     "deadline": 14}))
    assert "`deadline` is called `deadline_days` in plan_run" in text


async def test_gain_and_hardware_are_named_and_an_object_of_arguments_is_unpacked(
        client: Client) -> None:
    # "gain" and "hardware" were the elicitation answers' parameter names: the SDK took them and
    # the reply asked the user again for the gain they gave ("Missing inputs: predicted_gain")
    text = _text(await client.call_tool("render_verdict", {
        **RUN, "gpu_count": 8, "gain": 0.5, "gain_uncertainty": 0.3}))
    assert "`gain` is called `predicted_gain` in render_verdict" in text
    assert "again with predicted_gain=0.5: the value already given" in text
    assert "Missing inputs" not in text
    text = _text(await client.call_tool("estimate_run_cost", {
        "params": "7B", "tokens": "100B", "hardware": "h100", "gpu_count": 8}))
    assert "`hardware` is called `gpu` in estimate_run_cost" in text
    # an object holding arguments: each named at the top level, none asked for again
    text = _text(await client.call_tool("render_verdict", {
        **RUN, "gpu_count": 8, "gain": {"predicted_gain": 0.5, "gain_uncertainty": 0.3}}))
    assert "`gain` holds arguments of render_verdict: give them at the top level. Call " \
        "render_verdict again with predicted_gain=0.5, gain_uncertainty=0.3: the values " \
        "already given" in text
    assert "Missing inputs" not in text and "unknown argument" not in text


async def test_a_renamed_argument_beside_a_truly_missing_one(client: Client) -> None:
    text = _text(await client.call_tool("render_verdict", {
        **RUN, "gpu_count": 8, "uncertainty": 0.5}))
    assert "`uncertainty` is called `gain_uncertainty` in render_verdict" in text
    assert "gain_uncertainty=0.5" in text
    missing = text.split("Missing inputs: ", 1)[1].splitlines()[0]
    assert missing == "predicted_gain. Ask the user for each (do not invent a value), then " \
                      "call render_verdict again:"
    # an unknown name that is no flag keeps its plain line, and the server keeps serving
    text = _text(await client.call_tool("estimate_run_cost", {**RUN, "gpu_count": 8,
                                                              "nonsense": 1}))
    assert "nonsense: unknown argument (not one this accepts)" in text
    ok = await client.call_tool("estimate_run_cost", {**RUN, "gpu_count": 8})
    assert not ok.is_error


def test_only_flags_that_name_another_argument_of_the_tool_are_mapped() -> None:
    fields = {f: (float | None, None) for f in
              ("gpu_count", "usd_per_gpu_hour", "params", "must_fit", "budget_usd")}
    model = create_model("Arguments", **fields)  # type: ignore[call-overload]
    assert renamed_arguments("estimate", model, {"gpus": 8, "price": 2}) == {
        "gpus": "gpu_count", "price": "usd_per_gpu_hour"}
    # a name that is an argument of the tool is never taken for another's flag (plan's gpus)
    with_gpus = create_model("Plan", gpus=(list[str] | None, None), __base__=model)
    assert renamed_arguments("plan", with_gpus, {"gpus": ["h100"]}) == {}
    # both given: the flag name is left to the plain "unknown argument" line
    assert renamed_arguments("estimate", model, {"price": 2, "usd_per_gpu_hour": 3}) == {}
    # plan's --ignore-memory means must_fit false: never mapped; --budget is budget_usd there
    assert renamed_arguments("plan", model, {"ignore_memory": True, "budget": 5}) == {
        "budget": "budget_usd"}
    assert renamed_arguments(None, model, {"gpus": 8}) == {}


def test_synonyms_and_misspellings_are_taken_for_the_argument_meant() -> None:
    fields = {f: (float | None, None) for f in ("gpu_count", "gpu", "params", "tokens")}
    model = create_model("Arguments", **fields)  # type: ignore[call-overload]
    assert renamed_arguments("estimate", model, {"num_gpus": 8, "gpu_type": "h100"}) == {
        "num_gpus": "gpu_count", "gpu_type": "gpu"}
    assert renamed_arguments("estimate", model, {"gpu_cout": 8, "tokes": 1}) == {
        "gpu_cout": "gpu_count", "tokes": "tokens"}
    # never onto an argument given too, nor two names onto one; far names stay unknown
    assert renamed_arguments("estimate", model, {"num_gpus": 8, "gpu_count": 4}) == {}
    assert renamed_arguments("estimate", model, {"num_gpus": 8, "n_gpus": 4}) == {
        "num_gpus": "gpu_count"}
    assert renamed_arguments("estimate", model, {"nonsense": 1, "colour": 2}) == {}
    with_context = create_model("Context", seq_len=(int | None, None), __base__=model)
    assert renamed_arguments("estimate", with_context, {"sequence_length": 8192}) == {
        "sequence_length": "seq_len"}


def test_a_plan_takes_a_count_and_a_device_under_their_estimate_names() -> None:
    # plan_run has no gpu_count or gpu: an assistant used to estimate_run_cost sends them, and
    # they mean the most devices to search and the types to search
    from compute_budget.skill import PlanSpec

    assert renamed_arguments("plan", PlanSpec, {"gpu_count": 64, "gpu_type": "h100"}) == {
        "gpu_count": "max_gpu_count", "gpu_type": "gpus"}
    assert renamed_arguments("plan", PlanSpec, {"num_gpus": 64, "accelerators": ["h100"]}) == {
        "num_gpus": "max_gpu_count", "accelerators": "gpus"}
    # estimate_run_cost still takes num_gpus for its own count
    fields = {f: (float | None, None) for f in ("gpu_count", "max_gpu_count")}
    model = create_model("Both", **fields)  # type: ignore[call-overload]
    assert renamed_arguments("estimate", model, {"num_gpus": 8}) == {"num_gpus": "gpu_count"}


async def test_a_list_of_devices_as_gpu_says_where_several_go(client: Client) -> None:
    # "gpu: ['h100', 'a100'] is not allowed; must be a valid string" did not say what to do
    text = _text(await client.call_tool("estimate_run_cost", {
        "params": "7B", "tokens": "100B", "gpu": ["h100", "a100"], "gpu_count": 8}))
    assert "`gpu` takes one device key, e.g. 'h100'. To weigh several devices, call " \
        "estimate_run_cost once per device, or compare_candidates" in text
    assert "plan_run with `gpus`" in text
