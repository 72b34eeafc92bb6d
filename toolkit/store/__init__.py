"""Storage: the database file and its migrations, paths, safe file I/O, small JSON.

Standard library only, and imports nothing else of plantune; whatever fills a new database
is handed in by the layer above (``toolkit.core.seeded_db``)."""
