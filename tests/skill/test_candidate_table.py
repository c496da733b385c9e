"""The candidates table: CSV cells coerced like JSON numbers (review 2, finding 3: weights_bits
'4' was refused as 'must be 4, 8 or 16'), and every bad cell of every row named at once (review
1, finding 7)."""

import json

import pytest
from pydantic import ValidationError

from compute_budget.skill.advice.candidates import parse_candidates, validate_candidates
from compute_budget.skill.advice.compare import CompareSpec
from compute_budget.skill.errors import (
    InputError,
    MultipleInputError,
    UnknownAcceleratorError,
    describe_error,
)
from compute_budget.skill.memory.spec import FineTuningFields

HEADER = "name,preset,tokens,gpu,gpu_count,predicted_gain,gain_uncertainty,lora_rank,weights_bits"
QLORA = (HEADER + "\nq,llama-3-70b,20M,rtx-4090,1,1,0.3,16,4"
                  "\nl,llama-3-8b,20M,rtx-4090,1,1,0.3,16,16\n")


def test_weights_bits_from_a_csv_cell_is_the_number() -> None:
    q, lora = validate_candidates(parse_candidates(QLORA))
    assert (q.weights_bits, lora.weights_bits) == (4, 16)
    assert type(q.weights_bits) is int
    as_json = json.dumps([{"name": "q", "preset": "llama-3-70b", "tokens": "20M",
                           "gpu": "rtx-4090", "gpu_count": 1, "predicted_gain": 1,
                           "gain_uncertainty": 0.3, "lora_rank": 16, "weights_bits": 4},
                          {"name": "l", "preset": "llama-3-8b", "tokens": "20M",
                           "gpu": "rtx-4090", "gpu_count": 1, "predicted_gain": 1,
                           "gain_uncertainty": 0.3, "lora_rank": 16, "weights_bits": 16}])
    assert validate_candidates(parse_candidates(as_json)) == [q, lora]


@pytest.mark.parametrize(("text", "bits"), [("4", 4), (" 8 ", 8), ("16", 16), ("4.0", 4)])
def test_text_reads_as_an_int_field_reads_it(text: str, bits: int) -> None:
    assert FineTuningFields(weights_bits=text).weights_bits == bits  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["5", "four", "4.5", True, 5])
def test_other_values_are_still_refused_with_the_choices(value: object) -> None:
    with pytest.raises(ValidationError) as caught:
        FineTuningFields(weights_bits=value)  # type: ignore[arg-type]
    assert describe_error(caught.value).endswith("is not allowed; must be 4, 8 or 16")


def test_a_refused_cell_shows_the_number_it_read() -> None:
    with pytest.raises(InputError) as caught:
        validate_candidates(parse_candidates(QLORA.replace(",16,4\n", ",16,5\n")))
    assert str(caught.value) == "line 2, column weights_bits: 5 is not allowed; must be 4, 8 or 16"


def test_every_bad_cell_of_every_row_in_one_error() -> None:
    rows = [{"name": "a", "params": "1B", "tokens": "20B", "gpu": "A6000 Ada", "gpu_count": 0,
             "predicted_gain": 1, "gain_uncertainty": 0.5, "usd_per_gpu_hour": -1},
            {"name": "b", "params": "1B", "tokens": "20B", "gpu": "h100", "gpu_count": 1,
             "predicted_gain": 1, "gain_uncertainty": -0.5},
            {"name": "A", "params": "1B", "tokens": "20B", "gpu": "h100", "gpu_count": 1,
             "predicted_gain": 1, "gain_uncertainty": 0.5}]
    with pytest.raises(MultipleInputError) as caught:
        validate_candidates(rows)
    errors = {e.field: e for e in caught.value.errors}
    assert set(errors) == {"candidates[0].gpu", "candidates[0].gpu_count",
                           "candidates[0].usd_per_gpu_hour", "candidates[1].gain_uncertainty",
                           "candidates[2].name"}
    assert isinstance(errors["candidates[0].gpu"], UnknownAcceleratorError)
    assert errors["candidates[0].gpu_count"].value == 0
    assert errors["candidates[0].gpu_count"].allowed == "must be ≥ 1"
    assert "candidates[0] has it" in errors["candidates[2].name"].allowed
    # the first's field, value and allowed; one line per error
    first = caught.value.errors[0]
    assert (caught.value.field, caught.value.value) == (first.field, first.value)
    assert str(caught.value).splitlines() == [str(e) for e in caught.value.errors]
    # through the spec, as the CLI and the server describe it: every line, the catalog hint
    # on the accelerator's
    with pytest.raises(ValidationError) as wrapped:
        CompareSpec(candidates=rows)
    text = describe_error(wrapped.value, catalog_hint="HINT")
    assert len(text.splitlines()) == 5
    assert [line for line in text.splitlines() if line.endswith("; HINT")] == [
        str(errors["candidates[0].gpu"]) + "; HINT"]


def test_every_unknown_key_and_bad_row_of_a_json_table_at_once() -> None:
    text = json.dumps([{"name": "a", "gpus_n": 8}, 3, {"name": "c", "flops": 1}])
    with pytest.raises(MultipleInputError) as caught:
        parse_candidates(text)
    assert [e.field for e in caught.value.errors] == [
        "candidates[0].gpus_n", "candidates[1]", "candidates[2].flops"]


def test_every_bad_header_cell_and_row_of_a_csv_table_at_once() -> None:
    with pytest.raises(MultipleInputError) as caught:
        parse_candidates("name,mfu_guess,gpu_cnt\na,1,2\nb,1,2\n")
    assert [(e.field, e.value) for e in caught.value.errors] == [
        ("line 1, column 2", "mfu_guess"), ("line 1, column 3", "gpu_cnt")]
    with pytest.raises(MultipleInputError) as caught:
        parse_candidates("name,,params\na,x,1B,extra\nb,y,1B\n")
    assert [e.field for e in caught.value.errors] == ["line 2", "line 3, column 2"]


def test_input_errors_needs_an_error() -> None:
    with pytest.raises(ValueError, match="at least one"):
        MultipleInputError([])


def test_the_known_columns_are_listed_once_however_many_keys_are_unknown() -> None:
    # a JSON list with three unknown keys repeated the 700-character list of columns three times
    # (review helper-63, finding 6); each key keeps its place and its nearest known column
    rows = [{"name": "a", "mfuu": 0.3}, {"name": "b", "prise": 2, "mfuu": 1}]
    with pytest.raises(MultipleInputError) as caught:
        parse_candidates(json.dumps(rows))
    text = str(caught.value)
    assert text.count("the columns are name, params") == 1
    assert [e.field for e in caught.value.errors] == [
        "candidates[0].mfuu", "candidates[1].prise", "candidates[1].mfuu"]
    assert "unknown column 'prise' (did you mean `usd_per_gpu_hour`?)" in text


def test_the_model_id_is_the_model_column_as_the_tool_and_the_flag_name_it() -> None:
    # the tool's key and the CLI's flag are `model`; a table refused that column and listed
    # `model_id` (review of the doors' wording, item 2)
    rows = parse_candidates("name,model,tokens\na,org/a,1B\nb,org/b,1B\n")
    assert [r["model"] for r in rows] == ["org/a", "org/b"]
    assert parse_candidates("name,model_id\na,org/a\nb,org/b\n")[0] == {"name": "a",
                                                                        "model": "org/a"}
    with pytest.raises(InputError) as caught:
        parse_candidates(json.dumps([{"name": "a", "modle": "org/a"}, {"name": "b"}]))
    text = str(caught.value)
    assert "(did you mean `model`?)" in text and ", model, preset" in text
    assert "model_id" not in text
