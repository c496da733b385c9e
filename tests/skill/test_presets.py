"""Presets as data: every preset's counted total against its checkpoint's published count.

The published counts live beside the configs in src/compute_budget/skill/data/presets.json, each
with its source: the Hugging Face safetensors total (exact) where there is one, otherwise the
paper's or card's rounded figure with its rounding (``within``).
"""

import json
from importlib import resources

import pytest

from compute_budget.skill.errors import ConfigError
from compute_budget.skill.model.hf_config import from_hf_config
from compute_budget.skill.model.param_count import count_params
from compute_budget.skill.model.presets import PRESETS, PUBLISHED_PARAMS, get_preset, list_presets


def _data() -> dict[str, dict[str, object]]:
    text = resources.files("compute_budget.skill").joinpath("data/presets.json").read_text(
        encoding="utf-8")
    data: dict[str, dict[str, object]] = json.loads(text)["presets"]
    return data


@pytest.mark.parametrize("key", list(PRESETS))
def test_counted_total_matches_the_published_count(key: str) -> None:
    published = PUBLISHED_PARAMS[key]
    counted = count_params(PRESETS[key]).total
    if published.exact:
        # The safetensors total, less what it stores that is no parameter (inv_freq buffers,
        # a second copy of a tied embedding).
        assert counted + published.stored_extra == published.total
    else:
        assert abs(counted - published.total) <= published.within
    assert published.source


def test_the_issue_presets_exist_with_checkpoint_names() -> None:
    wanted = {
        "llama-3.1-405b", "llama-3.2-1b", "llama-3.2-3b", "qwen2.5-7b", "qwen3-8b",
        "qwen3-30b-a3b", "gemma-2-9b", "gemma-3-1b", "mistral-7b", "mixtral-8x22b",
        "deepseek-v3", "phi-3-mini-4k", "phi-4", "olmo-2-7b", "smollm2-135m",
    }
    assert wanted <= set(list_presets())
    for key in list_presets():
        assert key == key.lower() and " " not in key and "_" not in key


def test_llama_3_1_405b_exact() -> None:
    # meta-llama/Llama-3.1-405B safetensors total: 405,853,388,800.
    assert count_params(get_preset("llama-3.1-405b")).total == 405_853_388_800


def test_qwen3_small_models_store_their_tied_embedding_twice() -> None:
    # Qwen/Qwen3-0.6B ties its LM head (no lm_head parameter), but its safetensors file keeps
    # lm_head.weight too, so the Hub total, 751,632,384, counts V·d = 151936 × 1024 twice.
    arch = get_preset("qwen3-0.6b")
    assert arch.tied_embeddings
    assert count_params(arch).total == 751_632_384 - 151_936 * 1024


def test_presets_are_read_through_the_config_reader() -> None:
    # A preset is its stored config read like a user's: same shape, only name/notes differ.
    ignore = {"name", "source", "defaults_used"}
    for key, entry in _data().items():
        arch = from_hf_config(entry["config"])  # type: ignore[arg-type]
        assert arch.model_dump(exclude=ignore) == PRESETS[key].model_dump(exclude=ignore), key


def test_preset_notes_are_assumptions_not_family_defaults() -> None:
    # Fields the checkpoint's config leaves to its family's code are facts of the checkpoint;
    # only assumptions of the count are listed.
    assert get_preset("llama-3.1-8b").defaults_used == ()
    assert [n.code for n in get_preset("gemma-2-9b").defaults_used] == ["partial_window"]
    assert [n.code for n in get_preset("deepseek-v3").defaults_used] == ["mtp_not_counted"]
    gpt3 = get_preset("gpt3-175b").defaults_used
    assert [n.code for n in gpt3] == ["preset_assumption"] * 3
    assert all(n.reference for n in gpt3)  # each the data's own sentence, with its source


@pytest.mark.parametrize(("spelling", "key"), [("Qwen3_30B_A3B", "qwen3-30b-a3b"),
                                                (" Phi 4 ", "phi-4")])
def test_preset_spellings(spelling: str, key: str) -> None:
    assert get_preset(spelling) is PRESETS[key]


def test_unknown_preset_suggests_a_checkpoint_name() -> None:
    with pytest.raises(ConfigError) as info:
        get_preset("qwen3-30b")
    assert info.value.field == "preset"
    assert "qwen3-30b-a3b" in str(info.value)
