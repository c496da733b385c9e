"""Issue 19 item 3: from the structured content alone (some clients hand the model that, not the
markdown), an estimate's and a verdict's relayable answer can be read: the headline with the
verdict and its reason or whether the run fits, the sources of the price and the MFU, and the
question to ask next."""

import re
from typing import Any

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio

RUN = {"params": "7B", "tokens": "100B", "gpu": "h100", "gpu_count": 8}


async def _relay(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error
    assert result.structured_content is not None
    relay: dict[str, Any] = result.structured_content["relay"]
    return relay


async def test_an_estimate_relays_its_headline_sources_and_question(client: Client) -> None:
    relay = await _relay(client, "estimate_run_cost", RUN)
    assert relay["fits"] is True
    assert relay["headline"].startswith("7B × 100B tokens on 8 × H100 SXM: ")
    assert "days (" in relay["headline"] and "with the failure budget ($" in relay["headline"]
    assert relay["price_source"].endswith("(runpod.io/pricing)") or "/GPU-h" in relay[
        "price_source"]
    assert "calibrated prior from" in relay["mfu_source"]
    assert "gain" in relay["ask"] and relay["ask"].endswith("?")
    given = await _relay(client, "estimate_run_cost", {**RUN, "mfu": 0.3,
                                                        "usd_per_gpu_hour": "$2"})
    assert given["price_source"] == "$2.00/GPU-h, given by you"
    assert given["mfu_source"] == "0.30, given by you"


async def test_the_mfu_source_names_where_a_prior_comes_from(client: Client) -> None:
    # it read "the calibrated prior from 26 published moe runs on Hopper" (the 26 are dense)
    # and "(none specific to CDNA 3 (MI300))" of a prior borrowed from Hopper
    sources = {gpu: (await _relay(client, "estimate_run_cost", {**RUN, "gpu": gpu}))[
        "mfu_source"] for gpu in ("mi300x", "tpu-v5p")}
    assert "a prior borrowed from Hopper (" in sources["mi300x"]
    assert "), uncalibrated: no published runs on CDNA 3 (MI300)," in sources["mi300x"]
    assert "the pooled prior of " in sources["tpu-v5p"] and \
        ", uncalibrated: no published runs on TPU v5p," in sources["tpu-v5p"]
    moe = await _relay(client, "estimate_run_cost", {**RUN, "params": None,
                                                      "preset": "mixtral-8x7b"})
    assert "published dense runs on Hopper (no MoE ratio)" in moe["mfu_source"]


async def test_a_run_that_cannot_run_says_so_first(client: Client) -> None:
    relay = await _relay(client, "estimate_run_cost", {**RUN, "params": "700B", "gpu_count": 1})
    assert relay["fits"] is False
    assert "cannot run: it does not fit in device memory" in relay["headline"]
    assert "fewest devices" in relay["headline"]


async def test_a_run_the_hosts_ram_stops_says_so_and_asks_for_the_ram(client: Client) -> None:
    # QLoRA of Qwen3-235B on one RTX 4090: the device holds it only with the 4-bit base in CPU
    # memory, 164 GiB of it, more than a desktop's share.
    qlora = {"preset": "qwen3-235b-a22b", "lora_rank": 16, "weights_bits": "4",
             "gpu": "rtx-4090", "gpu_count": 1, "seq_len": 2048, "tokens": "10M"}
    relay = await _relay(client, "estimate_run_cost", qlora)
    assert relay["fits"] is False
    assert "cannot run: its CPU offload needs more CPU RAM than the host has" in relay["headline"]
    assert "CPU RAM" in relay["ask"] and relay["ask"].endswith("?")
    verdict = await _relay(client, "render_verdict", {**qlora, "predicted_gain": 1,
                                                      "gain_uncertainty": 0.5})
    assert verdict["headline"] == ("NO-GO: the run fits device memory only with more CPU RAM "
                                   "than the host has (fewest devices: 4).")
    assert verdict["ask"] == relay["ask"]  # the machine's RAM, not the alternatives
    enough = await _relay(client, "estimate_run_cost", {**qlora, "host_ram_gib": 256})
    assert enough["fits"] is True
    memory = {k: v for k, v in qlora.items() if k != "tokens"}
    short = await _relay(client, "estimate_memory", memory)
    assert short["headline"].startswith("Does not fit on 1 × RTX 4090: its CPU offload needs ")
    assert "more than the host's 43.2 GiB usable; fewest devices: 4." in short["headline"]
    roomy = await _relay(client, "estimate_memory", {**memory, "host_ram_gib": 256})
    assert roomy["fits"] is True and "with CPU offload taking" in roomy["headline"]


@pytest.mark.parametrize(("gain", "budget", "verdict", "reason"), [
    (2, None, "GO", "clears its uncertainty"),
    (0.2, None, "MARGINAL", "does not clear its uncertainty"),
    (2, 1000, "NO-GO", "costs more than the budget"),
])
async def test_a_verdict_relays_the_verdict_and_its_reason(
        client: Client, gain: float, budget: float | None, verdict: str, reason: str) -> None:
    relay = await _relay(client, "render_verdict", {
        **RUN, "predicted_gain": gain, "gain_uncertainty": 0.5, "budget_usd": budget})
    assert relay["headline"].startswith(f"{verdict}: ") and reason in relay["headline"]
    assert relay["ask"].endswith("?") and relay["fits"] is True
    assert "/GPU-h" in relay["price_source"] and "calibrated prior" in relay["mfu_source"]


async def test_memory_relays_whether_it_fits(client: Client) -> None:
    relay = await _relay(client, "estimate_memory", {"params": "70B", "gpu": "h100",
                                                     "gpu_count": 1})
    assert relay["fits"] is False and relay["headline"].startswith("Does not fit on 1 × H100")
    # a fit says how tight it is, as the markdown does: 70.5 GiB of 80 is 1.46 GiB under the
    # 90% a program can use (72 GiB), not 9.5 GiB spare
    tight = await _relay(client, "estimate_memory", {"preset": "llama-3-8b", "gpu": "a100-80gb",
                                                     "gpu_count": 4})
    assert tight["fits"] is True and tight["headline"] == (
        "Fits on 4 × A100 80GB SXM: 70.5 GiB of 80.0 GiB per device, 1.46 GiB under the 90% "
        "usable.")


async def test_relay_is_listed_and_kept_in_the_full_detail(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    for name in ("estimate_run_cost", "render_verdict", "estimate_memory"):
        schema = tools[name].output_schema
        assert schema is not None and schema["description"].startswith("relay: "), name
    full = await client.call_tool("estimate_run_cost", {**RUN, "detail": "full"})
    assert full.structured_content is not None
    assert "relay" in full.structured_content
    assert "size_slope" in full.structured_content["mfu_used"]["prior"]


@pytest.mark.slow  # about 1 s: the quick set keeps its minute on two cores
async def test_the_planning_and_advice_tools_relay_their_answer(client: Client) -> None:
    """Issue 19 item 3 for the other tools that price a run: the headline a model must say and
    the question to ask, from the structured content alone."""
    split = await _relay(client, "split_budget", {"budget_usd": "$400k", "gpu": "h100"})
    # the count the cost is for: fewer devices take another layout, and another cost
    assert split["headline"].startswith("Best size at the median MFU on 8 × H100 SXM: ")
    assert "within the budget even at the slow end" in split["headline"]
    assert "calibrated prior" in split["mfu_source"] and "/GPU-h" in split["price_source"]
    plan = await _relay(client, "plan_run", {"params": "7B", "tokens": "1T",
                                             "deadline_days": 30, "gpus": ["h100"]})
    assert plan["headline"].startswith("Cheapest: ") and "× H100 SXM" in plan["headline"]
    assert "calibrated prior" in plan["mfu_source"] and "caveat" not in plan
    # the whole catalog: MI300X is cheapest on Hopper's borrowed prior, and the caveat names
    # the cheapest plan the estimate models
    borrowed = await _relay(client, "plan_run", {"params": "7B", "tokens": "1T",
                                                 "deadline_days": 14})
    assert borrowed["headline"].startswith("Cheapest: 136 × MI300X")
    assert borrowed["caveat"].startswith("the cheapest's MFU is borrowed from other hardware")
    assert "relay the cheapest plan the estimate models too: 344 × A100 80GB SXM" in \
        borrowed["caveat"]
    stuck = await _relay(client, "plan_run", {"params": "70B", "tokens": "15T",
                                              "deadline_days": 3, "max_gpu_count": 64})
    assert stuck["headline"].startswith("No plan meets every constraint: the fastest plan")
    assert "3-day deadline" in stuck["headline"] and stuck["ask"].endswith("?")
    alternatives = await _relay(client, "suggest_alternatives",
                                {**RUN, "kind": "continued-pretrain"})
    assert alternatives["headline"].startswith("Largest saving: fewer tokens first, $")
    assert "if it stops at its check" in alternatives["headline"]
    compare = await _relay(client, "compare_candidates", {"candidates": [
        {"name": "small", "params": "1B", "tokens": "20B", "gpu": "h100", "gpu_count": 8,
         "predicted_gain": 1, "gain_uncertainty": 0.3},
        {"name": "big", "params": "7B", "tokens": "100B", "gpu": "h100", "gpu_count": 8,
         "predicted_gain": 2, "gain_uncertainty": 0.5}]})
    assert compare["headline"].startswith("Best gain per dollar: small (GO, $")


async def test_the_mfu_source_of_your_runs_says_when_the_slope_carries_them(
        client: Client) -> None:
    # three runs at 0.45 on 1B-7B read "0.51, fitted to your past runs" at 70B: above every run
    # they gave, with no word that their sizes were far from it
    peak = 989.5e12  # H100 SXM dense BF16 (catalog)
    runs = [{"params": n, "tokens": 100 * n, "gpu": "h100",
             "gpu_hours": 6 * n * 100 * n / (0.45 * peak * 3600)} for n in (1e9, 3e9, 7e9)]
    relay = await _relay(client, "estimate_run_cost", {**RUN, "params": "70B", "tokens": "2T",
                                                        "gpu_count": 512, "calibration": runs})
    assert relay["mfu_source"].startswith("0.45, fitted to your past runs (far from their sizes")
    assert "held at 0.45 where the slope carried it higher" in relay["mfu_source"]


async def test_the_price_source_names_the_machines_priced(client: Client) -> None:
    # 3 MI300X at $6.91 each read as a bare price: they rent DigitalOcean's 8x droplet
    relay = await _relay(client, "estimate_run_cost", {**RUN, "gpu": "mi300x", "gpu_count": 3})
    assert "gpu-mi300x8-1536gb of 8 devices, 8 paid for 3 used" in relay["price_source"]
    gh200 = await _relay(client, "estimate_run_cost", {**RUN, "gpu": "gh200", "gpu_count": 16})
    assert "16 × 1x GH200 (1 device each), joined only by a network not modelled" in gh200[
        "price_source"]


async def test_a_verdict_relay_says_how_long_and_warns_of_a_losing_baseline(
        client: Client) -> None:
    # "NO-GO: the run takes too long." gave neither the years nor the devices that would do
    long = await _relay(client, "render_verdict", {
        "params": "70B", "tokens": "1.4T", "gpu": "trainium2", "gpu_count": 64,
        "predicted_gain": 1, "gain_uncertainty": 0.2})
    assert long["headline"] == ("NO-GO: the run takes 602 days; about 112 devices would "
                                "finish it within a year (estimated at that count).")
    # the generation's name, not its id
    assert "no published runs on Trainium2" in long["mfu_source"]
    # a baseline below zero raised the net gain silently
    below = await _relay(client, "render_verdict", {**RUN, "predicted_gain": 0.02,
                                                     "gain_uncertainty": 0.01,
                                                     "baseline_to_beat": -0.01})
    assert below["caveat"].startswith("the baseline −0.01 is a loss, so the net gain 0.03")


async def test_a_plan_relay_names_devices_by_name(client: Client) -> None:
    # "the fastest plan that fits, 64 × h100-sxm": the catalog key where the markdown has the name
    relay = await _relay(client, "plan_run", {"params": "7B", "tokens": "1T",
                                              "deadline_days": 30, "gpus": ["h100"],
                                              "max_gpu_count": 64})
    assert "64 × H100 SXM, takes" in relay["headline"]


BIG = {"name": "big", "params": "70B", "tokens": "1.4T", "gpu": "h100", "gpu_count": 8,
       "predicted_gain": 100, "gain_uncertainty": 1}  # about 4,360 days: too_long
SMALL = {"name": "small", "params": "7B", "tokens": "140B", "gpu": "h100", "gpu_count": 8,
         "predicted_gain": 0.5, "gain_uncertainty": 0.2}


async def test_a_comparison_never_asks_to_run_a_candidate_that_cannot_run(
        client: Client) -> None:
    # the reviewer's repro: big has the best gain per dollar but cannot finish in time; it was
    # the top and the relay asked "Run the top candidate…?"
    result = await client.call_tool("compare_candidates", {"candidates": [BIG, SMALL]})
    assert result.structured_content is not None
    content = result.structured_content
    assert content["top"] == "small"
    assert [(c["name"], c["can_run"]) for c in content["candidates"]] == [
        ("small", True), ("big", False)]
    relay = content["relay"]
    assert relay["headline"].startswith(
        "Best gain per dollar among the candidates that can run: small (GO, $")
    assert relay["headline"].endswith("big cannot run as planned and ranks last.")
    assert relay["ask"].startswith("Run the top candidate")
    # each candidate's price (with its source and date) and MFU, as the table gives them
    assert relay["price_source"].startswith("small $3.99/GPU-h (on-demand, 20")
    assert "; big $" in relay["price_source"]
    assert relay["mfu_source"].startswith("small 0.") and "(calibrated prior)" in relay[
        "mfu_source"]
    # none can run: no candidate to run, a re-plan instead
    huge = {"name": "huge", "params": "7T", "tokens": "1T", "gpu": "rtx-4090", "gpu_count": 1,
            "predicted_gain": 10, "gain_uncertainty": 1}
    stuck = await _relay(client, "compare_candidates", {"candidates": [BIG, huge]})
    assert stuck["headline"].startswith("No candidate can run as planned")
    assert "Run the top" not in stuck["ask"] and "re-planned" in stuck["ask"]


async def test_an_estimate_relay_says_when_it_fits_only_with_offload(client: Client) -> None:
    # the markdown opens with "Fits on 2 × A100 80GB SXM only with the optimizer state offloaded
    # to CPU memory"; the relay said only fits: true
    result = await client.call_tool("estimate_run_cost", {
        "preset": "llama-3-70b", "tokens": "100M", "gpu": "a100-80gb", "gpu_count": 2,
        "lora_rank": 16})
    assert not result.is_error and result.structured_content is not None
    relay = result.structured_content["relay"]
    assert relay["fits"] is True
    assert relay["offload"].startswith("it fits only with the optimizer state offloaded to CPU "
                                       "memory (1.54 GiB of CPU RAM per device), without "
                                       "offload 3 devices")
    plain = await client.call_tool("estimate_run_cost", {
        "params": "7B", "tokens": "100B", "gpu": "h100", "gpu_count": 8})
    assert plain.structured_content is not None
    assert "offload" not in plain.structured_content["relay"]


async def test_split_and_alternatives_relays_say_when_a_run_is_too_long(client: Client) -> None:
    # the markdown said "4.8 years on 8 × H100 SXM: longer than any plan survives" and "the run
    # as planned would take 11.9 years"; the relays' headlines did not
    split = await client.call_tool("split_budget", {"budget_usd": "2M", "gpu": "h100"})
    assert split.structured_content is not None
    assert "longer than any plan survives" in split.structured_content["relay"]["caveat"]
    alternatives = await client.call_tool("suggest_alternatives", {
        "params": "70B", "tokens": "1.4T", "gpu": "h100", "gpu_count": 8})
    assert alternatives.structured_content is not None
    caveat = alternatives.structured_content["relay"]["caveat"]
    assert caveat.startswith("the original takes 11.9 years, longer than any plan survives, and ")
    assert caveat.endswith("of the alternatives still take over a year.")


async def test_the_alternatives_relay_counts_rows_that_save_and_can_run(client: Client) -> None:
    # 1B x 1T on one T4 cannot run: "4 of 5 alternatives save money" counted the different-idea
    # row and a same-model row that does not fit either, and said nothing of the original
    result = await client.call_tool("suggest_alternatives", {
        "params": "1B", "tokens": "1T", "gpu": "t4", "gpu_count": 1})
    assert result.structured_content is not None
    data = result.structured_content
    relay = data["relay"]
    priced = [a for a in data["alternatives"] if a["kind"] != "different_idea"]
    saving = [a for a in priced if (a.get("saving_usd") or 0) > 0
              and a["feasibility"] != "does_not_fit"]
    assert f"({len(saving)} of {len(priced)} priced alternatives save money and can run)" \
        in relay["headline"]
    assert relay["caveat"].startswith("the original cannot run on 1 × T4")


async def test_a_run_under_a_day_is_relayed_in_hours(client: Client) -> None:
    # SmolLM2-135M on 1,000 TPU v5e: the headline read "0.0154 days (0.0088–0.0316)"
    result = await client.call_tool("estimate_run_cost", {
        "preset": "smollm2-135m", "tokens": "50B", "gpu": "tpu-v5e", "gpu_count": 1000})
    assert result.structured_content is not None
    headline = result.structured_content["relay"]["headline"]
    assert " min (" in headline and " days" not in headline


async def test_the_plan_relay_says_when_the_slow_end_misses_the_deadline(client: Client) -> None:
    # 13B x 1T in 90 days with 64 H100 and 128 A100: the markdown says the slow end takes 171
    # days and needs more than the 128 A100 available; the relay said only "290 days (191–586)"
    result = await client.call_tool("plan_run", {
        "params": "13B", "tokens": "1T", "deadline_days": 90, "gpus": ["h100", "a100-80gb"],
        "available": [{"gpu": "h100", "count": 64}, {"gpu": "a100-80gb", "count": 128}]})
    assert result.structured_content is not None
    slow = result.structured_content["relay"]["slow_end"]
    assert slow.startswith("at the MFU band's slow end the cheapest takes ")
    assert "would meet it even there (more than the 128 you can get); at that MFU" in slow
    # the slow end's cost, where the markdown had "at about the same cost" (review helper-57)
    worst = re.search(r"the run costs about \$([\d,]+) with the failure budget\.$", slow)
    assert worst is not None
    planned = result.structured_content["plans"][0]["dollar_cost_with_failures"]
    assert float(worst[1].replace(",", "")) > 1.9 * planned  # the band's slow end: 171 vs 90 days


async def test_a_verdict_relay_says_when_its_run_fits_only_with_offload(client: Client) -> None:
    # the verdict's markdown opens with "This run depends on offloading the optimizer state to
    # CPU memory … Without offload it needs 3 devices"; its relay said only fits: true
    relay = await _relay(client, "render_verdict", {
        "params": "13B", "tokens": "20B", "gpu": "a100-80gb", "gpu_count": 1,
        "predicted_gain": 2, "gain_uncertainty": 0.5, "baseline_to_beat": 1})
    assert relay["fits"] is True
    assert relay["offload"].startswith("it fits only with the optimizer state offloaded to CPU "
                                       "memory (")
    assert relay["offload"].endswith("without offload 3 devices.")
    plain = await _relay(client, "render_verdict", {**RUN, "predicted_gain": 2,
                                                    "gain_uncertainty": 0.5})
    assert "offload" not in plain and "caveat" not in plain


async def test_a_batch_far_past_the_optimal_one_is_relayed(client: Client) -> None:
    # SmolLM2-135M x 50B on 1,000 TPU v5e: one 4,096-token sequence per rank is 4.1M tokens a
    # step, 5.42x the compute-optimal 756K (Bi et al. 2024; tests/skill/test_estimate.py); the
    # markdown warned and the relay did not
    run = {"preset": "smollm2-135m", "tokens": "50B", "gpu": "tpu-v5e", "gpu_count": 1000}
    for tool, extra in (("estimate_run_cost", {}),
                        ("render_verdict", {"predicted_gain": 2, "gain_uncertainty": 0.5})):
        relay = await _relay(client, tool, {**run, **extra})
        assert relay["caveat"] == (
            "on 1,000 devices the smallest global batch is 4.1M tokens a step, 5.42x the "
            "compute-optimal 756K: the time is optimistic; fewer devices, or give batch_tokens.")
    given = await _relay(client, "estimate_run_cost", {**run, "batch_tokens": "8M"})
    assert "caveat" not in given


async def test_two_caveats_of_a_verdict_are_both_relayed(client: Client) -> None:
    # a baseline below zero and a batch far past the optimal one each say "caveat:"; the second
    # replaced the first
    relay = await _relay(client, "render_verdict", {
        "preset": "smollm2-135m", "tokens": "50B", "gpu": "tpu-v5e", "gpu_count": 1000,
        "predicted_gain": 2, "gain_uncertainty": 0.5, "baseline_to_beat": -1})
    assert relay["caveat"].startswith("the baseline −1 is a loss")
    assert "doing nothing gains 0; on 1,000 devices the smallest global batch is 4.1M tokens" \
        in relay["caveat"]


async def test_a_gain_that_reads_like_a_level_is_a_caveat_to_ask_about(client: Client) -> None:
    relay = await _relay(client, "render_verdict", {**RUN, "predicted_gain": 57,
                                                    "gain_uncertainty": 1.5})
    assert relay["caveat"] == ("a gain of 57 reads like the score expected, not its change; ask, "
                               "and if so pass metric_now and metric_expected.")


async def test_a_plan_relay_reads_a_short_run_in_hours_and_names_types_not_searched(
        client: Client) -> None:
    relay = await _relay(client, "plan_run", {"preset": "llama-3-8b", "tokens": "20M",
                                              "lora_rank": 16, "deadline_days": 3,
                                              "gpus": ["h100", "a10g"]})
    # it read "0.0379 days (0.0251–0.0765)"
    assert relay["headline"].startswith("Cheapest: 1 × H100 SXM, 54.5 min (36.1 min–1.84 h), ")
    assert relay["unsearched"].startswith("A10G (AWS G5) not searched: no published dense peak")


async def test_a_plan_relay_gives_its_slow_end_in_the_headlines_unit(client: Client) -> None:
    # a reviewer: "13.8 h (9.11 h–27.7 h)" in the headline and "1.15 days" for the same end
    relay = await _relay(client, "plan_run", {"params": "1B", "tokens": "20B",
                                              "deadline_days": 1, "gpus": ["h100"]})
    assert "(9.11 h–27.7 h)" in relay["headline"]
    assert relay["slow_end"].startswith("at the MFU band's slow end the cheapest takes 27.7 h, ")
