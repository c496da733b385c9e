"""The lesson's five calculators, against the lesson's own worked numbers."""

import math

import pytest

from compute_budget import (
    params_for_budget,
    split_budget,
    tokens_for_budget,
    train_flops,
    training_seconds,
)


def test_train_flops_worked_example() -> None:
    # Lesson "Scaling and budgets": N = 1e6, D = 1e8 gives 6e14 FLOPs.
    assert train_flops(1e6, 1e8) == pytest.approx(6e14)


def test_tokens_for_budget_twice_the_model_half_the_tokens() -> None:
    # Lesson: same 6e14 budget with N = 2e6 affords 5e7 tokens.
    assert tokens_for_budget(6e14, 2e6) == pytest.approx(5e7)


def test_params_for_budget_inverts_tokens_for_budget() -> None:
    assert params_for_budget(6e14, 1e8) == pytest.approx(1e6)


def test_training_seconds_worked_example() -> None:
    # Lesson: 6e14 FLOPs at 1e12 FLOP/s is 600 seconds; at 50% utilisation twice that.
    assert training_seconds(6e14, 1e12) == pytest.approx(600)
    assert training_seconds(6e14, 1e12, utilization=0.5) == pytest.approx(1200)


def test_split_budget_satisfies_both_constraints() -> None:
    n, d = split_budget(6e14, 20)
    assert 6 * n * d == pytest.approx(6e14)
    assert d == pytest.approx(20 * n)
    assert n == pytest.approx(math.sqrt(6e14 / 120))


def test_lesson_table_row() -> None:
    # Lesson table, budget labelled "10^14.8 = 6.03e+14" (10^14.8 is really 6.31e14; the rows
    # match C = 6.0256e14): N = 1e5 → D = 1.00e9, 10042.66 tokens per parameter, 603 s.
    c = 6.0256e14
    d = tokens_for_budget(c, 1e5)
    assert d == pytest.approx(1.0043e9, rel=1e-4)
    assert d / 1e5 == pytest.approx(10042.66, rel=1e-4)
    assert tokens_for_budget(c, 1e8) / 1e8 == pytest.approx(0.01, abs=0.001)
    assert training_seconds(c, 1e12) == pytest.approx(603, abs=0.5)


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda bad: train_flops(bad, 1e8), "params"),
        (lambda bad: train_flops(1e6, bad), "D"),
        (lambda bad: tokens_for_budget(bad, 1e6), "C"),
        (lambda bad: tokens_for_budget(6e14, bad), "params"),
        (lambda bad: params_for_budget(6e14, bad), "D"),
        (lambda bad: training_seconds(6e14, bad), "flops_per_sec"),
        (lambda bad: split_budget(6e14, bad), "ratio"),
        (lambda bad: split_budget(bad, 20), "C"),
    ],
)
@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, -math.inf])
def test_rejects_non_positive_nan_and_infinite(call, argument: str, bad: float) -> None:
    with pytest.raises(ValueError, match=rf"^{argument}: "):
        call(bad)


@pytest.mark.parametrize("utilization", [0, -0.1, 1.01, math.nan, math.inf])
def test_training_seconds_rejects_utilization_outside_unit_interval(utilization: float) -> None:
    with pytest.raises(ValueError, match=r"^utilization: "):
        training_seconds(6e14, 1e12, utilization=utilization)


def test_utilization_of_exactly_one_is_allowed() -> None:
    assert training_seconds(1e12, 1e12, utilization=1.0) == pytest.approx(1.0)


def test_reads_quantities_as_the_specs_do_and_refuses_non_numbers() -> None:
    # The same types as the specs (issue 15): "7B" is 7·10⁹, a switch or a word is refused.
    assert train_flops("7B", 1e8) == pytest.approx(6 * 7e9 * 1e8)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^params: "):
        train_flops("seven", 1e8)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^params: "):
        train_flops(True, 1e8)


def test_a_bad_parameter_count_has_one_name_everywhere() -> None:
    # a review: estimate_run_cost named it N_params and train_flops N; the specs, the CLI and
    # the server name it params
    from compute_budget import estimate_run_cost

    for call in (lambda: estimate_run_cost(-1, 1e11, 8, 312, 0.4, 1.5),
                 lambda: train_flops(-1, 1e8), lambda: tokens_for_budget(6e14, -1)):
        with pytest.raises(ValueError, match=r"^params: -1 is not allowed; "):
            call()


def test_the_old_argument_names_work_for_a_release_with_a_warning() -> None:
    from compute_budget import estimate_run_cost

    with pytest.warns(DeprecationWarning, match="train_flops's argument N is renamed params"):
        assert train_flops(N=1e6, D=1e8) == train_flops(params=1e6, D=1e8)
    with pytest.warns(DeprecationWarning, match="argument N_params is renamed params"):
        old = estimate_run_cost(N_params=7e9, T_tokens=1e11, gpus=8, gpu_tflops=312, mfu=0.4,
                                dollar_per_gpu_hour=1.5)
    assert old.flops == estimate_run_cost(7e9, 1e11, 8, 312, 0.4, 1.5).flops
