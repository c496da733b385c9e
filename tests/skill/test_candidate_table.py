"""The candidates table: CSV cells coerced like JSON numbers (review 2, finding 3: weights_bits
'4' was refused as 'must be 4, 8 or 16')."""

import json

import pytest
from pydantic import ValidationError

from compute_budget.skill.advice.candidates import parse_candidates, validate_candidates
from compute_budget.skill.errors import InputError, describe_error
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
    assert str(caught.value) == "candidates[0].weights_bits: 5 is not allowed; must be 4, 8 or 16"
