"""Browse the plantune database in Datasette, read-only, with plantune's metadata.

The database is served under the name ``plantune`` whatever its file is called, so the
metadata (descriptions, facets, canned queries, chart links) always applies. It is opened
read-only but not immutable: hooks keep writing while it is served (WAL lets readers and
one writer work side by side), and every page shows the rows committed so far.

Datasette is imported inside the functions: this module is never on the hot path, but the
CLI lists it.
"""

import errno
import json
import os
import signal
import socket

from toolkit.store import resources

METADATA_FILE = resources.path("datasette-metadata.json")
DATABASE_NAME = "plantune"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8001


class ServeError(Exception):
    """A serving problem explained in one sentence a user can act on."""


def load_metadata(path=METADATA_FILE):
    """The Datasette metadata shipped with plantune (titles, descriptions, facets, queries)."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise ServeError(resources.missing_message("Datasette metadata", path)) from None
    except json.JSONDecodeError as e:
        raise ServeError(f"Datasette metadata {path} is not valid JSON: {e}") from None


def _read_only_database_class():
    from datasette.database import Database

    class ReadOnlyDatabase(Database):
        """A mutable (live) database that Datasette can never write to.

        Datasette opens its own read connections with ``mode=ro`` already; this also
        turns the write connection into a read-only one and refuses write tasks, so no
        plugin or canned query can change the data, whatever is installed.
        """

        def connect(self, write=False):
            return super().connect(write=False)

        async def execute_write_fn(self, fn, block=True):
            raise PermissionError("plantune serve is read-only")

    return ReadOnlyDatabase


def prepare_database(db_path):
    """Bring the schema and views up to date before serving; refuse a missing file."""
    from toolkit.core import database
    from toolkit.store import db

    if not os.path.exists(db_path):
        raise ServeError(db.no_database_message(db_path))
    try:
        conn = database.connect(db_path)
    except db.DatabaseError as e:
        raise ServeError(str(e)) from None
    conn.close()


# Datasette's suggested facets probe every column of a page with a GROUP BY over the whole
# table or view: on a million-event log that costs most of a page's time. The facets that
# matter (project, phase, synthetic, ...) are named in the metadata instead.
DEFAULT_SETTINGS = {"suggest_facets": False}


def build_datasette(db_path, metadata=None, settings=None):
    """A Datasette instance serving ``db_path`` read-only as ``/plantune``.

    Example (in-process, as the tests do)::

        ds = build_datasette("plantune.db")
        response = await ds.client.get("/plantune/phase_counts.json?_shape=array")
    """
    from datasette.app import Datasette

    ds = Datasette(
        [],
        metadata=load_metadata() if metadata is None else metadata,
        settings={**DEFAULT_SETTINGS, **(settings or {})},
    )
    # Datasette adds an in-memory database when given no files; only ours is served.
    ds.remove_database("_memory")
    ReadOnlyDatabase = _read_only_database_class()
    ds.add_database(
        ReadOnlyDatabase(ds, path=os.path.abspath(db_path), is_mutable=True), name=DATABASE_NAME
    )
    return ds


def pick_port(host, port):
    """Check that ``host:port`` is free (port 0 picks a free one) and return the port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError as e:
            if port and e.errno == errno.EADDRINUSE:
                raise ServeError(
                    f"port {port} on {host} is already in use; choose another with --port"
                ) from None
            raise ServeError(f"cannot listen on {host}:{port}: {e.strerror}") from None
        return s.getsockname()[1]


def url_for(host, port):
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/{DATABASE_NAME}"


def get(db_path, path):
    """Fetch one page of the served database without listening: ``(status, body text)``.

    The same application, metadata and read-only database as :func:`serve`; scripts and
    smoke tests use it to check an installation (``plantune serve --get /plantune``).
    """
    import asyncio

    if not path.startswith("/"):
        raise ServeError(f"--get takes a path starting with /, e.g. /{DATABASE_NAME}")
    prepare_database(db_path)
    ds = build_datasette(db_path)

    async def fetch():
        await ds.invoke_startup()
        return await ds.client.get(path)

    response = asyncio.run(fetch())
    return response.status_code, response.text


def serve(db_path, host=DEFAULT_HOST, port=DEFAULT_PORT, on_ready=None):
    """Serve ``db_path`` until interrupted. ``on_ready(url)`` is called just before."""
    import asyncio

    import uvicorn

    prepare_database(db_path)
    port = pick_port(host, port)
    ds = build_datasette(db_path)
    asyncio.run(ds.invoke_startup())
    if on_ready:
        on_ready(url_for(host, port))
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal; these
    # handlers turn that into a clean exit instead of a traceback or a killed process.
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        uvicorn.run(ds.app(), host=host, port=port, log_level="warning", lifespan="on", workers=1)
    except (KeyboardInterrupt, _Stopped):
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)


class _Stopped(Exception):
    pass


def _stop(signum, frame):
    raise _Stopped()
