"""README says where the replies note that expert parallelism's all-to-all is not modelled:
the estimate and memory replies (markdown) of a mixture of experts, not every reply."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import Cli

README = Path(__file__).parent.parent / "README.md"
CLAIM = ("which the estimate and memory replies say of a mixture of experts (their MCP relays, "
         "the plan, alternatives and compare replies do not)")


def test_readme_names_the_replies_that_say_eps_all_to_all_is_not_modelled(cli: Cli) -> None:
    text = " ".join(README.read_text().split())
    assert "(EP costs no time here), and every reply says so" not in text
    assert CLAIM in text
    moe = ("--preset", "mixtral-8x7b", "--gpu", "h100", "--gpus", "16")
    for command in (("memory", *moe), ("estimate", *moe, "--tokens", "100B")):
        code, out, _ = cli(*command)
        assert code == 0 and re.search(r"all-to-all[^.]* is not modelled", out), command
