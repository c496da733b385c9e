"""How assistants call compute-budget: the MCP server (tools, prompt, resources, completions).

Importing the server defines some hundreds of pydantic models and their schemas, all of which
live as long as the process: the garbage collector, run meanwhile, finds nothing to free and
only delays the first answer (about 35 ms of 250 on a two-core machine), so it is paused for
the import and resumed after it, whatever the import does.
"""

import gc

_collecting = gc.isenabled()
gc.disable()
try:
    from .server import TOOL_NAMES, build_server, main
finally:
    if _collecting:
        gc.enable()

__all__ = ["TOOL_NAMES", "build_server", "main"]
