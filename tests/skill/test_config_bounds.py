"""Issue 18 item 2: every whole number a config gives is bounded before any arithmetic; a huge
one is one clear error naming the key, with the value not shown (no OverflowError, no
300-digit echo)."""

from __future__ import annotations

import pytest

from compute_budget.skill.errors import ConfigError
from compute_budget.skill.model.hf_config import MAX_WHOLE, from_hf_config
from tests.conftest import Cli

pytestmark = pytest.mark.adversarial

LLAMA = {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
         "num_attention_heads": 32, "intermediate_size": 11008, "vocab_size": 32000}
HUGE = 10**300


@pytest.mark.parametrize("key", ["num_hidden_layers", "hidden_size", "num_attention_heads",
                                 "intermediate_size", "vocab_size", "num_key_value_heads",
                                 "head_dim", "max_position_embeddings"])
@pytest.mark.parametrize("value", [HUGE, 10**160, MAX_WHOLE + 1])
def test_a_huge_whole_number_is_refused_by_name(key: str, value: int) -> None:
    with pytest.raises(ConfigError) as info:
        from_hf_config({**LLAMA, key: value})
    message = str(info.value)
    assert message.startswith(f"{key}: not a whole number from ") and "value not shown" in message
    assert str(value)[:12] not in message


def test_the_largest_allowed_value_is_no_crash() -> None:
    # 10⁹ positions is allowed (bounds are far above real models, far below overflow)
    arch = from_hf_config({**LLAMA, "max_position_embeddings": MAX_WHOLE})
    assert arch.max_positions == MAX_WHOLE


def test_the_command_line_says_the_same(cli: Cli) -> None:
    import json

    config = json.dumps({**LLAMA, "hidden_size": HUGE})
    code, out, err = cli("params", "--config", config)
    assert (code, out) == (2, "") and err.startswith("error: hidden_size: not a whole number")
    assert "Traceback" not in err and "0000000000" not in err
