"""Derive the calibrated MFU priors from the calibration set of published runs.

    uv run python -m benchmarks.derive_priors          # rewrite the packaged mfu_priors.json
    uv run python -m benchmarks.derive_priors --check  # exit 1 if the packaged file is stale

Reads the packaged calibration set ``src/compute_budget/skill/data/calibration_runs.csv``
(:mod:`.published_runs`) and writes ``src/compute_budget/skill/data/mfu_priors.json``, which the
package reads at run time.

The rule, in one sentence: log10 of the end-to-end MFU is one pooled level plus those of three
terms — a level per hardware generation, one size slope in log10 of the active parameters, an
MoE ratio — that lower the error on held-out runs when each organisation, and then each model
family, is left out in turn (:mod:`.grouped_cv`), fitted robustly to the published dense runs
(:mod:`.prior_table`); the bands cover 85% of those held-out runs, leaving out at most 7.5% on
each side (so the slow side, where held-out runs scatter further, is the longer), wider for a
class with few runs and for a generation without its own level.

End-to-end MFU = 6·N·T / (GPU-hours · 3600 · BF16 dense peak), N = active parameters for MoE. It
is lower than the MFU papers quote because reported hours include restarts, evaluation and
downtime; it is the figure an hours-and-dollars estimator needs.

Why grouped, not leave-one-out: a run's siblings (the same team, cluster and year) stay in a
leave-one-out fit, which is then optimistic for a team whose runs are not in the set — the case
of every user. Why no other term: cluster size (the held-out error of the used runs that give a
device count shows no trend with it; :mod:`.accuracy` prints the slope) and era (a new run's
year lies beyond every calibration row, and a level de-trended by year predicted held-out runs
worse when tried) are not modelled. Runs whose numbers do not measure end-to-end
utilisation are kept in the benchmark but left out of the derivation, with the reason
(:data:`.published_runs.EXCLUDED`), and so are FP8 runs (the priors are against the BF16 peak)
and encoder runs, whose own prior is their median (:func:`.prior_table.encoder_level`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from compute_budget.skill.hardware.mfu_table import MfuPriorTable

from .grouped_cv import choose_bands, choose_form, form_scores, score_forms
from .prior_table import AS_OF, COVERAGE, MIN_RUNS, REFERENCE_PARAMS, build_table
from .published_runs import (
    CSV_PATH,
    EXCLUDED,
    KEPT_WITH_CAVEAT,
    PublishedRun,
    load_runs,
    map_hardware,
    usable_runs,
)

__all__ = [
    "AS_OF",
    "COVERAGE",
    "CSV_PATH",
    "EXCLUDED",
    "KEPT_WITH_CAVEAT",
    "MIN_RUNS",
    "PRIORS_PATH",
    "REFERENCE_PARAMS",
    "PublishedRun",
    "derive",
    "load_runs",
    "map_hardware",
    "render",
    "usable_runs",
]

PRIORS_PATH = CSV_PATH.with_name("mfu_priors.json")


def derive(runs: Sequence[PublishedRun]) -> MfuPriorTable:
    """The prior table for ``runs``: the form and bands chosen by grouped cross-validation,
    fitted to all of them. Rows that are not usable are recorded as skipped; usable rows left
    out of the derivation are recorded with the reason."""
    scores = score_forms(runs)
    form = choose_form(scores)
    bands = choose_bands(runs, form, scores)
    return build_table(runs, form, bands, scores=form_scores(scores, form))


def render(table: MfuPriorTable) -> str:
    """The JSON text of ``table`` as it is packaged."""
    return json.dumps(table.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None, csv_path: Path = CSV_PATH) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the packaged priors differ from a fresh derivation")
    args = parser.parse_args(argv)
    text = render(derive(load_runs(csv_path)))
    if args.check:
        current = PRIORS_PATH.read_text(encoding="utf-8") if PRIORS_PATH.exists() else ""
        if current != text:
            print(f"{PRIORS_PATH} is stale: run `uv run python -m benchmarks.derive_priors`")
            return 1
        print(f"{PRIORS_PATH} is up to date")
        return 0
    PRIORS_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {PRIORS_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
