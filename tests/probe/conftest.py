"""The torch-dependent tests (the probe's, and the activation benchmark's re-measurement):
skipped when torch or transformers is missing, except under COMPUTE_BUDGET_REQUIRE_TORCH=1
(``.ci/run`` sets it after installing the CPU build of torch), where they fail instead. Nothing
here imports torch at collection, so the quick suite needs neither."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from typing import Any

import pytest

REQUIRED = os.environ.get("COMPUTE_BUDGET_REQUIRE_TORCH") == "1"


def torch_or_skip() -> Any:
    """torch, after checking transformers imports too; a skip (a failure when required) if
    either is missing."""
    for name in ("torch", "transformers"):
        if REQUIRED:
            importlib.import_module(name)
        else:
            pytest.importorskip(name, reason=f"{name} is not installed: the probe extra "
                                             "(pip install 'compute-budget[probe]')")
    return importlib.import_module("torch")


@pytest.fixture
def torch() -> Iterator[Any]:
    """torch on one thread for the test: on a shared two-core machine two threads wait for
    each other whenever another process holds a core, which makes step times erratic."""
    module = torch_or_skip()
    threads = module.get_num_threads()
    module.set_num_threads(1)
    yield module
    module.set_num_threads(threads)
