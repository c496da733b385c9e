"""Where a model comes from and what it is: configs, Hub ids and presets, exact parameter
counts, the shape the memory formulas read, and the FLOP terms per token."""
