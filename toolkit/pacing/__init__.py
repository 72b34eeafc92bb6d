"""Pacing: rank a review phase's findings within the chain's budget, store every decision,
and report and flip the silent ones (one-way findings always surface)."""
