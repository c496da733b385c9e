"""``python -m compute_budget.tools``: the same as ``compute-budget-mcp``."""

from .server import main

raise SystemExit(main())
