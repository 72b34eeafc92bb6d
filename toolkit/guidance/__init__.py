"""Project-local guidance: the guidance files, each run's trace and the trace index, and
evidence-backed proposals (one rule per kind) that apply only when nothing moved."""
