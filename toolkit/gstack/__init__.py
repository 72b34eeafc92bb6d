"""gstack's file protocol: its compat scripts, the sync contract with its JSONL and JSON
files, profile sync, importing its stores, and the spool for writes that must wait."""
