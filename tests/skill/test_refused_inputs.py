"""Inputs a CLI review found silently ignored or accepted, refused by the specs themselves, so
the library, the CLI and the MCP server refuse them alike: each error names the field, the value
and what is allowed (the doors: tests/tools/test_bad_inputs.py and the CLI tests at the end)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from compute_budget.cli import main
from compute_budget.skill.advice.compare import CompareSpec
from compute_budget.skill.errors import InputError, describe_error
from compute_budget.skill.estimate import estimate_run
from compute_budget.skill.memory.estimate import MemorySpec
from compute_budget.skill.model.param_count import count_params
from compute_budget.skill.model.presets import get_preset
from compute_budget.skill.model.source import COUNT_TOLERANCE
from compute_budget.skill.planning.budget_spec import BudgetTableSpec
from compute_budget.skill.run_spec import RunSpec
from compute_budget.skill.scaling.specs import FitSpec, OptimalSpec
from tests.conftest import Cli

LLAMA_3_8B = 8_030_261_248  # meta-llama/Meta-Llama-3-8B config.json, counted (test_presets)


def _refusal(model: type[BaseModel], **fields: Any) -> InputError:
    """The InputError a spec raises for ``fields`` (pydantic wraps it in a ValidationError)."""
    with pytest.raises(ValidationError) as info:
        model.model_validate(fields)
    (error,) = info.value.errors(include_url=False)
    cause = (error.get("ctx") or {}).get("error")
    assert isinstance(cause, InputError), error
    assert describe_error(info.value) == str(cause)
    return cause


# --- 1. params beside a preset, model id or config that counts another model ------------------

@pytest.mark.parametrize("model", [MemorySpec, RunSpec, OptimalSpec])
def test_params_of_another_model_than_the_preset_are_refused(model: type[BaseModel]) -> None:
    # memory --params 70B --preset llama-3-8b printed "8.03B params … Fits" without a word
    fields: dict[str, Any] = {"params": "70B", "preset": "llama-3-8b", "gpu": "a100",
                              "gpu_count": 8, "tokens": "1T"}
    fields = {k: v for k, v in fields.items() if k in model.model_fields}
    err = _refusal(model, **fields)
    assert (err.field, err.value) == ("params", 70e9)
    if model is OptimalSpec:  # strict: the split is placed by the count (7B beside 8.03B too)
        assert err.allowed == "8.03B, as the config or preset counts (or leave it out)"
        assert _refusal(model, **{**fields, "params": "7B"}).allowed.startswith("8.03B")
        return
    assert err.allowed.startswith("within 25% of 8.03B, what the model given as preset "
                                  "'llama-3-8b' counts")


@pytest.mark.parametrize(("preset", "field", "given"), [
    ("llama-3-8b", "params", "8B"),  # 0.4% below 8.03B
    ("qwen2.5-7b", "params", "7B"),  # 7.62B: 8% below
    ("gemma-2-2b", "params", "2B"),  # 2.61B: its name's 2B is 23% below, the widest rounding
    ("qwen3-30b-a3b", "active_params", "3B"),  # 3.35B active: 11% below
    ("llama-3-8b", "params", "7B"),  # 13% below: the exact count is used, estimate notes it
])
def test_a_count_a_models_name_rounds_to_is_accepted(preset: str, field: str,
                                                     given: str) -> None:
    spec = MemorySpec.model_validate({"preset": preset, field: given, "gpu_count": 8})
    counts = count_params(get_preset(preset))
    assert spec.model.total == counts.total and spec.model.active == counts.active


def test_the_tolerance_is_a_share_of_the_models_count() -> None:
    assert COUNT_TOLERANCE == 0.25
    just_in, just_out = LLAMA_3_8B * 1.249, LLAMA_3_8B * 1.251
    assert MemorySpec(preset="llama-3-8b", params=just_in, gpu_count=8).model.total == LLAMA_3_8B
    assert _refusal(MemorySpec, preset="llama-3-8b", params=just_out, gpu_count=8).field == \
        "params"
    assert _refusal(MemorySpec, preset="llama-3-8b", params=LLAMA_3_8B * 0.74,
                    gpu_count=8).field == "params"


def test_active_params_of_another_model_are_refused_and_params_alone_still_work() -> None:
    err = _refusal(MemorySpec, preset="mixtral-8x7b", active_params="7B", gpu_count=8)
    # Mixtral 8x7B: 12.9B active (mistralai/Mixtral-8x7B-v0.1 config.json, counted)
    assert (err.field, err.value) == ("active_params", 7e9)
    assert "12.9B" in err.allowed and "preset 'mixtral-8x7b'" in err.allowed
    # the legitimate case: a count alone describes the model
    assert MemorySpec(params="70B", gpu_count=8).model.total == 70e9


def test_the_estimate_still_notes_a_small_gap_it_accepts() -> None:
    est = estimate_run(RunSpec(preset="llama-3-8b", params="7B", tokens="100B", gpu="h100",
                               gpu_count=8))
    assert est.params == LLAMA_3_8B and [w.code for w in est.warnings] == ["params_differ"]


def test_a_config_names_itself_in_the_refusal() -> None:
    config = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
              "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
              "vocab_size": 128256, "max_position_embeddings": 8192}  # Llama 3 8B's shape
    err = _refusal(MemorySpec, config=config, params="70B", gpu_count=8)
    assert err.field == "params" and "given as config" in err.allowed


# --- 2. sp with tp 1 ---------------------------------------------------------------------------

def test_sequence_parallelism_at_tp_1_is_refused() -> None:
    # memory --sp --tp 1 replied "kept as you set: TP 1, SP true"; the help says sp needs tp > 1
    err = _refusal(MemorySpec, params="7B", gpu="h100", gpu_count=8, sp=True, tp=1)
    assert (err.field, err.value) == ("sp", True)
    assert err.allowed.startswith("only with tp above 1")
    assert MemorySpec(params="7B", gpu="h100", gpu_count=8, sp=True, tp=2).sp is True
    assert MemorySpec(params="7B", gpu="h100", gpu_count=8, sp=False, tp=1).tp == 1


# --- 4. an empty size ---------------------------------------------------------------------------

def test_an_empty_size_is_refused_by_its_place() -> None:
    with pytest.raises(ValidationError) as info:
        BudgetTableSpec(budget_flops=1e24, params=["1B", "", "7B"])  # type: ignore[list-item]
    assert describe_error(info.value).startswith("params[1]: '' is not allowed; a positive "
                                                 "number")


# --- 6. a target compute that is not 6·N·D ------------------------------------------------------

def test_a_target_compute_that_disagrees_is_refused() -> None:
    # fit --target-params 7B --target-tokens 1T --target-compute 1e23 ignored the 1e23
    err = _refusal(FitSpec, target_params="7B", target_tokens="1T", target_compute=1e23)
    assert (err.field, err.value) == ("target_compute", 1e23)
    # 6 · 7e9 · 1e12 = 4.2e22 (Kaplan et al. 2020's C = 6·N·D)
    assert err.allowed.startswith("6 × target params × target tokens (4.2e+22) within 1%")
    # within 1% it is the same run, as optimal's flops beside params and tokens
    assert FitSpec(target_params="7B", target_tokens="1T", target_compute=4.23e22)
    assert OptimalSpec(params="7B", tokens="1T", flops=4.23e22)
    assert _refusal(OptimalSpec, params="7B", tokens="1T", flops=4.3e22).field == "tokens"


# --- 7. a horizon without a pool ---------------------------------------------------------------

def _candidate(name: str) -> dict[str, object]:
    return {"name": name, "params": "1B", "tokens": "20B", "gpu": "h100", "gpu_count": 8,
            "predicted_gain": 1.0, "gain_uncertainty": 0.1}


def test_a_horizon_without_a_pool_is_refused() -> None:
    # compare --horizon-days 15 without --pool-gpu-days: the horizon changed nothing
    rows = [_candidate("a"), _candidate("b")]
    err = _refusal(CompareSpec, candidates=rows, horizon_days=15)
    assert (err.field, err.value) == ("horizon_days", 15)
    assert err.allowed.startswith("only together with pool_gpu_days")
    assert CompareSpec(candidates=rows, horizon_days=15, pool_gpu_days=100).horizon_days == 15


# --- the command line: exit status 2, the flag named ----------------------------------------

@pytest.mark.parametrize(("argv", "flag", "value"), [
    (["memory", "--params", "70B", "--preset", "llama-3-8b", "--gpus", "8", "--gpu", "a100"],
     "--params", "70B"),
    (["memory", "--params", "7B", "--gpu", "h100", "--gpus", "8", "--sp", "--tp", "1"],
     "--sp", "True"),
    (["alternatives", "--params", "7B", "--tokens", "100B", "--gpu", "h100", "--gpus", "8",
      "--kind", "continued-pretrain", "--teacher-params", "70B"], "--teacher-params", "70B"),
    (["split", "--budget", "1e24", "--sizes", "1B,,7B"], "--sizes[1]", "''"),
    (["fit", "--level", "0.995", "--target-params", "7B", "--target-tokens", "1T"],
     "--level", "'0.995'"),
    (["fit", "--target-params", "7B", "--target-tokens", "1T", "--target-compute", "1e23"],
     "--target-compute", "1e+23"),
])
def test_the_command_line_refuses_with_the_flag(cli: Cli, argv: list[str], flag: str,
                                                value: str) -> None:
    code, out, err = cli(*argv)
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {flag}: {value} is not allowed; "), err


def test_the_command_line_names_the_preset_beside_params(cli: Cli) -> None:
    _, _, err = cli("memory", "--params", "70B", "--preset", "llama-3-8b", "--gpus", "8")
    assert "what the model given as --preset 'llama-3-8b' counts" in err


@pytest.mark.parametrize("level", ["0.5", "0.99"])
def test_the_command_line_takes_the_levels_its_help_gives(
        cli: Cli, capsys: pytest.CaptureFixture[str], level: str) -> None:
    code, out, _ = cli("fit", "--level", level, "--target-params", "7B", "--target-tokens", "1T")
    assert code == 0 and out
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert "--level P Interval probability, 0.5 to 0.99." in help_text


def test_the_command_line_refuses_a_horizon_without_a_pool(cli: Cli, tmp_path: Any) -> None:
    path = tmp_path / "cands.csv"
    path.write_text("name,params,tokens,gpu,gpu_count,predicted_gain,gain_uncertainty\n"
                    "a,1B,20B,h100,8,1,0.1\nb,1B,20B,h100,8,1,0.1\n")
    code, out, err = cli("compare", str(path), "--horizon-days", "15")
    assert (code, out) == (2, "")
    assert err.startswith("error: --horizon-days: 15.0 is not allowed; only together with "
                          "--pool-gpu-days"), err
    code, _, _ = cli("compare", str(path), "--horizon-days", "15", "--pool-gpu-days", "100")
    assert code == 0
