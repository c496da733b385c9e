"""Issue 18 item 3: one escaping rule for everything echoed, replies and errors alike, keys as
well as values: control, bidi and zero-width characters never reach the reader raw, markup is
inert, long values are cut."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from compute_budget.prompts.render import inert
from compute_budget.skill.errors import MAX_SHOWN_VALUE, InputError, shown_field, shown_value

pytestmark = [pytest.mark.anyio, pytest.mark.adversarial]

HOSTILE = "x\n# Heading\n| a | b |\x1b[31mred\x00\u202eevil\u200b*bold*`code`<b>[l](http://e)"
INVISIBLE = ("\n", "\x1b", "\x00", "\u202e", "\u200b")


def _clean(text: str) -> None:
    for char in INVISIBLE:
        assert char not in text, repr(char)
    assert "\n#" not in text and "\n|" not in text
    for mark in ("*bold*", "`code`", "<b>", "[l](http"):
        assert mark not in text, mark  # each comes back backslash-escaped


def test_an_error_shows_a_hostile_key_and_value_inert() -> None:
    message = str(InputError(f"available.{HOSTILE}", HOSTILE, "a catalog key"))
    _clean(message)
    assert message.count("\n") == 0


def test_a_long_value_is_cut() -> None:
    text = shown_value("y" * 100_000)
    assert len(text) == MAX_SHOWN_VALUE and text.endswith("…")
    assert len(shown_field("k" * 1000)) <= 60


def test_replies_drop_bidi_and_zero_width_characters() -> None:
    shown = inert(HOSTILE)
    _clean(shown)
    assert "evil" in shown and "red" in shown


async def test_plan_run_names_a_hostile_available_key_inertly(client: Client) -> None:
    arguments: dict[str, Any] = {"params": "7B", "tokens": "1T", "deadline_days": 30,
                                 "available": {HOSTILE: 8}}
    result = await client.call_tool("plan_run", arguments)
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    _clean(text.split("\n", 1)[0])
    assert "available." in text


async def test_a_hostile_benefit_is_inert_in_the_verdict(client: Client) -> None:
    result = await client.call_tool("render_verdict", {
        "params": "7B", "tokens": "100B", "gpu": "h100", "gpu_count": 8, "predicted_gain": 1,
        "gain_uncertainty": 0.2, "benefit": "a paper\u202e" + "z" * 600})
    text = result.content[0].text  # type: ignore[union-attr]
    assert "\u202e" not in text
    if result.is_error:  # over the cap: the error cuts the value too
        assert len(text) < 400


@pytest.mark.parametrize(("value", "shown"), [
    (1e10, "10B"), (6.74e9, "6.74B"), (2.5e12, "2.5T"), (3e6, "3M"),
    (12_345_678_901.0, "12345678901.0"),  # not one that is written with a suffix
    (5e5, "500000.0"), (7, "7"), (float("inf"), "inf"), ("7B", "'7B'"),
])
def test_large_round_numbers_are_quoted_as_written(value: object, shown: str) -> None:
    from compute_budget.skill.errors import shown_value

    assert shown_value(value) == shown
