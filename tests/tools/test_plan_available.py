"""The devices the user can get, at both doors (review findings 4 and 10, /tmp/rev2/FINDINGS.md):
a device the plan cannot use is refused by name (exit 2 naming --available; isError naming
available), a repeated one too, and the line for one without a price names the way to give it
in the door's own words."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from tests.conftest import run_cli

pytestmark = pytest.mark.anyio

LORA: dict[str, Any] = {"preset": "llama-3-8b", "tokens": "20M", "lora_rank": 16,
                        "deadline_days": 3}
LORA_FLAGS = ["plan", "--preset", "llama-3-8b", "--tokens", "20M", "--lora-rank", "16",
              "--deadline-days", "3"]


@pytest.mark.parametrize(("flags", "start", "said"), [
    (["--available", "a10g=4"], "error: --available.a10g: 4 is not allowed; ",
     "no published dense tensor peak is known for A10G (AWS G5); give --peak-tflops (its dense "
     "TFLOP/s) with --gpu-types a10g, or leave it out"),
    (["--available", "a100=4", "--precision", "fp8"], "error: --available.a100-80gb: ",
     "known: bf16, fp16 (plan at one of them, or give --peak-tflops"),
    (["--available", "h100=4", "--tp", "8"], "error: --available.h100-sxm: 4 is not allowed; ",
     "at least 8 devices"),
    (["--available", "a10g-nope=4"], "error: --available.a10g-nope: ", "unknown accelerator"),
])
def test_the_cli_refuses_a_device_it_cannot_plan(flags: list[str], start: str,
                                                 said: str) -> None:
    code, out, err = run_cli(*LORA_FLAGS, *flags)
    assert (code, out) == (2, "")
    assert err.startswith(start) and said in err, err


def test_the_cli_says_an_unpriced_device_has_no_price() -> None:
    code, out, _ = run_cli(*LORA_FLAGS, "--available", "rtx-3090=2")
    assert code == 0
    assert ("- **Your 2 × RTX 3090**: the plan of fewest device-hours on them is 1 device, "
            in out)
    assert "no price in the catalog: give `--price` with `--gpu-types rtx-3090` to cost it." in out


async def test_the_tool_refuses_a_device_it_cannot_plan(client: Client) -> None:
    for available in ({"a10g": 4}, [{"gpu": "a10g", "count": 4}], "a10g=4"):
        result = await client.call_tool("plan_run", {**LORA, "available": available})
        text = result.content[0].text
        assert result.is_error and "available.a10g: 4 is not allowed; " in text, text
        assert "give peak_tflops (its dense TFLOP/s) with gpus a10g" in text
    # a device named twice in the list form: the mapping the door made kept the last count
    twice = await client.call_tool("plan_run", {**LORA, "available": [
        {"gpu": "h100", "count": 8}, {"gpu": "h100", "count": 512}]})
    assert twice.is_error
    assert ("available[1].gpu: 'h100' is not allowed; each type once (h100-sxm is "
            "available[0] too)") in twice.content[0].text


async def test_the_tool_says_an_unpriced_device_has_no_price(client: Client) -> None:
    result = await client.call_tool("plan_run", {
        **LORA, "available": [{"gpu": "rtx-3090", "count": 2}]})
    assert not result.is_error
    text = result.content[0].text
    assert ("- **Your 2 × RTX 3090**: the plan of fewest device-hours on them is 1 device, "
            in text)
    how = ("no price in the catalog: give a price (`usd_per_gpu_hour` with `gpus: ['rtx-3090']`, "
           "or estimate_run_cost on `gpu: 'rtx-3090'` with it) to cost it.")
    assert how in text and "--price" not in text
    assert result.structured_content is not None
    yours = result.structured_content["relay"]["yours"]
    assert yours.startswith("your 2 × RTX 3090: the plan of fewest device-hours on them is "
                            "1 device, ")
    assert yours.endswith(how) and "unknown" not in yours
