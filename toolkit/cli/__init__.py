"""The command line: the click app (one module per command group) and the click-free fast
entry that runs the hot commands (``check``, ``log``, the hooks) without importing click."""
