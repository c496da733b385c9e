"""``python -m compute_budget.cli``: the same as the ``compute-budget`` command."""

from . import main

raise SystemExit(main())
