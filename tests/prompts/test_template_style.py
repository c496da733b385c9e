"""Templates that read as sentences (issue 15): the results carry the codes, numbers and short
labels a reply needs, so no template cuts up a string or compares one with English; a sentence
too long for one source line is a named macro or goes on over several lines (a line that ends in
an empty comment continues on the next); and every ConfigNote code is worded."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest
from inline_snapshot import snapshot

from compute_budget.prompts import render_params
from compute_budget.prompts.render import environment
from compute_budget.skill.model.architecture import ConfigNote, ConfigNoteCode
from compute_budget.skill.model.hf_config import from_hf_config
from compute_budget.skill.model.source import param_report

TEMPLATES = Path(__file__).parents[2] / "src" / "compute_budget" / "prompts" / "templates"
SOURCES = sorted(TEMPLATES.rglob("*.md.j2"))
MAX_LINE = 200
"""Characters per source line of a reply template; markdown table rows (``|`` …) excepted."""

STRING_METHODS = frozenset({
    "split", "rsplit", "strip", "rstrip", "lstrip", "startswith", "endswith", "replace", "lower",
    "upper", "title", "capitalize", "removeprefix", "removesuffix", "partition", "find", "index"})
"""Methods that cut up or re-case a string: the result should carry what the reply needs."""
STRING_FILTERS = frozenset({"replace", "truncate", "wordwrap", "capitalize", "title", "trim"})
CODE = re.compile(r"[\w+\-.]*")
"""What a compared literal may be: a code (``under_trained``, ``6N+attention``), not English."""
Token = tuple[str, str]


def _name(path: Path) -> str:
    return str(path.relative_to(TEMPLATES))


def _tokens(source: str) -> list[Token]:
    """The template's tokens (type, value), whitespace left out."""
    return [(kind, value) for _, kind, value in environment().lex(source)
            if kind != "whitespace"]


def string_surgery(source: str) -> list[str]:
    """What in ``source`` cuts up or re-cases a string: a string method called, a string filter,
    or a slice re-cased (``x[:1] | upper``)."""
    found = []
    tokens = _tokens(source)
    for i, (kind, value) in enumerate(tokens[1:-1], 1):
        before, after = tokens[i - 1], tokens[i + 1]
        method = before == ("operator", ".") and after == ("operator", "(")
        piped = before == ("operator", "|")
        if kind == "name" and ((method and value in STRING_METHODS)
                               or (piped and value in STRING_FILTERS)):
            found.append(value)
        if (kind, value) == ("operator", "|") and before == ("operator", "]") and after in (
                ("name", "upper"), ("name", "lower")):
            found.append("]|" + after[1])
    return found


def compared_text(source: str) -> list[str]:
    """The string literals ``source`` compares something with (==, !=, in, a selectattr test)."""
    found = []
    tokens = _tokens(source)
    comparison = {("operator", "=="), ("operator", "!="), ("name", "in")}
    tests = {("string", f'"{t}"') for t in ("eq", "ne", "equalto", "sameas")}
    for i, (kind, value) in enumerate(tokens):
        if kind != "string":
            continue
        before = tokens[i - 1] if i else ("", "")
        after = tokens[i + 1:i + 3]
        is_compared = (before in comparison or (after and after[0] in comparison)
                       or (after[:1] == [("name", "not")] and after[1:] == [("name", "in")])
                       or (before == ("operator", ",") and tokens[i - 2] in tests))
        if is_compared:
            found.append(value[1:-1])
    return found


def test_there_are_templates() -> None:
    assert len(SOURCES) > 20 and any(p.parent.name == "mcp" for p in SOURCES)


@pytest.mark.parametrize("path", SOURCES, ids=_name)
def test_reply_template_lines_are_short(path: Path) -> None:
    long = [(number, len(line)) for number, line in enumerate(path.read_text().splitlines(), 1)
            if len(line) > MAX_LINE and not line.startswith("|")]
    assert not long, f"{_name(path)}: lines over {MAX_LINE} characters (line, length): {long}"


@pytest.mark.parametrize("path", SOURCES, ids=_name)
def test_no_trailing_whitespace(path: Path) -> None:
    # A line that ends in an empty comment goes on with the next only if nothing follows it.
    trailing = [n for n, line in enumerate(path.read_text().splitlines(), 1)
                if line != line.rstrip()]
    assert not trailing, f"{_name(path)}: trailing whitespace on lines {trailing}"


@pytest.mark.parametrize("path", SOURCES, ids=_name)
def test_no_string_surgery_in_templates(path: Path) -> None:
    found = string_surgery(path.read_text())
    assert not found, f"{_name(path)} cuts up strings: {found}; carry the field in the result"


@pytest.mark.parametrize("path", SOURCES, ids=_name)
def test_templates_compare_codes_not_english(path: Path) -> None:
    english = [text for text in compared_text(path.read_text()) if not CODE.fullmatch(text)]
    assert not english, f"{_name(path)} compares with English text: {english}; use a code"


@pytest.mark.parametrize(
    "snippet",
    ['{{ f.citation.split(",")[0] }}', "{{ p.source.rstrip('.') }}", "{{ x[:1] | upper }}",
     "{{ text | replace('a', 'b') }}"],
)
def test_the_surgery_check_catches_what_it_forbids(snippet: str) -> None:
    assert string_surgery(snippet)


@pytest.mark.parametrize(
    "snippet",
    ['{% if origin == "given by you" %}', '{% if "guessed from N" in shape.source %}',
     '{% if "given by you" != x %}', '{{ xs | selectattr("source", "eq", "given by you") | list }}',
     '{% if "guessed from N" not in shape.source %}'],
)
def test_the_sentinel_check_catches_what_it_forbids(snippet: str) -> None:
    assert [text for text in compared_text(snippet) if not CODE.fullmatch(text)]


def test_codes_pass_the_sentinel_check() -> None:
    source = ('{% if e.flops_method == "6N+attention" and "offload" in p.notes %}'
              '{{ ", " }}{% endif %}')
    assert compared_text(source) == ["6N+attention", "offload"]


def _note_text(note: ConfigNote) -> str:
    return str(environment().get_template("_macros.md.j2").module.config_note(note))  # type: ignore[attr-defined]


NOTES = {
    "family_default": ConfigNote(code="family_default", field="tie_word_embeddings", value=True,
                                 missing="absent", reference="Gemma2Config"),
    "kv_heads_default": ConfigNote(code="kv_heads_default", field="num_key_value_heads",
                                   value=32, missing="null", reference="LlamaConfig"),
    "head_dim_derived": ConfigNote(code="head_dim_derived", field="head_dim", value=128,
                                   missing="absent"),
    "n_inner_default": ConfigNote(code="n_inner_default", field="n_inner", value=3072,
                                  missing="absent", reference="GPT-2"),
    "sparse_step_default": ConfigNote(code="sparse_step_default", field="decoder_sparse_step",
                                      value=1, missing="absent", reference="Qwen2MoeConfig"),
    "moe_layer_freq_default": ConfigNote(code="moe_layer_freq_default", field="moe_layer_freq",
                                         value=1, missing="absent"),
    "tied_lm_head": ConfigNote(code="tied_lm_head", field="tie_word_embeddings", value=True,
                               missing="absent", reference="GPT-2"),
    "partial_window": ConfigNote(code="partial_window", field="sliding_window"),
    "mtp_not_counted": ConfigNote(code="mtp_not_counted", field="num_nextn_predict_layers",
                                  value=1, reference="DeepSeek-V3 report: 671B + 14B MTP"),
    "preset_assumption": ConfigNote(code="preset_assumption",
                                    reference="d_ff = 4 × d_model (Brown et al. 2020, Table 2.1)"),
}


def test_every_config_note_code_is_worded() -> None:
    assert set(NOTES) == set(get_args(ConfigNoteCode))
    assert {code: _note_text(note) for code, note in NOTES.items()} == snapshot({
        "family_default": "tie_word_embeddings absent: true (Gemma2Config default)",
        "kv_heads_default": "num_key_value_heads null: = num_attention_heads = 32 "
                            "(LlamaConfig default: multi-head attention)",
        "head_dim_derived": "head_dim absent: hidden_size / num_attention_heads = 128",
        "n_inner_default": "n_inner absent: 4 × n_embd = 3072 (GPT-2 default)",
        "sparse_step_default": "decoder_sparse_step absent: 1 (Qwen2MoeConfig default: every "
                               "layer)",
        "moe_layer_freq_default": "moe_layer_freq absent: 1 (every layer after the dense ones)",
        "tied_lm_head": "tie_word_embeddings absent: true (GPT-2 ties the LM head to the token "
                        "embedding)",
        "partial_window": "sliding window in some layers only (Qwen: max_window_layers; Gemma: "
                          "local layers alternating with global ones): full attention is counted "
                          "in every layer, an upper bound on attention FLOPs",
        "mtp_not_counted": "num_nextn_predict_layers = 1: the multi-token-prediction module is "
                           "not counted (it is not part of the main model; DeepSeek-V3 report: "
                           "671B + 14B MTP)",
        "preset_assumption": "d_ff = 4 × d_model (Brown et al. 2020, Table 2.1)",
    })


def test_a_probability_default_reads_as_the_config_would_write_it() -> None:
    dropout = ConfigNote(code="family_default", field="resid_pdrop", value=0.1, missing="absent",
                         reference="GPT2Config")
    none = dropout.model_copy(update={"value": 0.0, "field": "hidden_dropout"})
    assert _note_text(dropout) == "resid_pdrop absent: 0.1 (GPT2Config default)"
    assert _note_text(none) == "hidden_dropout absent: 0 (GPT2Config default)"


def test_params_reply_words_the_defaults_of_a_config() -> None:
    config = {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12,
              "vocab_size": 50257, "n_positions": 1024}
    reply = render_params(param_report(from_hf_config(config)))
    assert reply.split("**Defaults used** (absent from the config):\n", 1)[1] == snapshot("""\
- n_inner absent: 4 × n_embd = 3072 (GPT-2 default)
- tie_word_embeddings absent: true (GPT-2 ties the LM head to the token embedding)
- resid_pdrop absent: 0.1 (GPT2Config default)
""")
