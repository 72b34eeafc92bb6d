"""plantune: a SQLite-centric data toolkit for plan tuning of AI coding agents."""

__version__ = "0.1.0"
