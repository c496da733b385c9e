"""Session-wide settings: compiled templates are cached in a temporary directory, never in the
home directory of whoever runs the tests (subprocesses inherit the setting)."""

from collections.abc import Iterator

import pytest

from compute_budget.prompts.render import CACHE_ENV, environment


@pytest.fixture(autouse=True, scope="session")
def _template_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    patch = pytest.MonkeyPatch()
    patch.setenv(CACHE_ENV, str(tmp_path_factory.mktemp("cache")))
    environment.cache_clear()
    yield
    patch.undo()
    environment.cache_clear()
