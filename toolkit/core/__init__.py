"""The rules: vocabulary, question events, preferences, one-way doors, screening, registry,
scoring, profile, JS-compatible formatting, and the one error boundary of every command.

Imports only ``toolkit.store``; the hot path (hooks and compat scripts) runs on these two."""
