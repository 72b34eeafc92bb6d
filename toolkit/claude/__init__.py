"""Claude Code: the AskUserQuestion hooks (payload parsing, recording, auto-decide),
installing them into settings, and backfilling questions from session transcripts."""
