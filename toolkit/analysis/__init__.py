"""Analysis: calibration, simulation, notebooks, Datasette, team datasets (merge, export,
DuckDB, Spark); the only room that imports numpy, pandas, datasette, nbclient or duckdb."""
