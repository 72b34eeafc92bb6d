"""Browse the plantune database in Datasette, read-only, with plantune's metadata.

The database is served under the name ``plantune`` whatever its file is called, so the
metadata (descriptions, facets, canned queries, chart links) always applies. It is opened
read-only but not immutable: hooks keep writing while it is served (WAL lets readers and
one writer work side by side), and every page shows the rows committed so far.

Owner-only by default, as Jupyter is: the database file is 0600, and a server that let any
local user read it would undo that. Each run makes a token and a signing secret of its own
and prints a sign-in link; the link sets a cookie signed with that secret, and Datasette's
own permission check refuses every page, JSON or SQL query to a request without it (only
the sign-in page and Datasette's static assets are served to anyone). The database's path
is never shown (``/-/databases.json`` leaves it out).

Datasette is imported inside the functions: this module is never on the hot path, but the
CLI lists it.
"""

import errno
import hmac
import html
import json
import os
import secrets
import signal
import socket
import urllib.parse

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
    from toolkit.core import seeded_db
    from toolkit.store import db

    if not os.path.exists(db_path):
        raise ServeError(db.no_database_message(db_path))
    try:
        conn = seeded_db.connect(db_path)
    except db.DatabaseError as e:
        raise ServeError(str(e)) from None
    conn.close()


# Datasette's suggested facets probe every column of a page with a GROUP BY over the whole
# table or view: on a million-event log that costs most of a page's time. The facets that
# matter (project, phase, synthetic, ...) are named in the metadata instead.
DEFAULT_SETTINGS = {"suggest_facets": False}


SIGN_IN_PATH = "/-/sign-in"
OWNER_COOKIE = "plantune_owner"
OWNER_ID = "owner"


def new_token():
    """A sign-in token for one run of the server (as Jupyter's, long enough not to guess)."""
    return secrets.token_urlsafe(32)


def sign_in_url(host, port, token):
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{SIGN_IN_PATH}?" + urllib.parse.urlencode({"token": token})


def _sign_in_page(next_path, wrong=False):
    note = "<p><strong>That token is not this server's.</strong></p>" if wrong else ""
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Sign in · plantune</title>"
        "</head><body><h1>Sign in to plantune</h1>"
        "<p>This server shows only its owner's history. Open the sign-in link "
        "<code>plantune serve</code> printed when it started, or paste its token:</p>"
        f"{note}<form method='get' action='{SIGN_IN_PATH}'>"
        f"<input type='hidden' name='next' value='{html.escape(next_path, quote=True)}'>"
        "<input type='password' name='token' autocomplete='off' aria-label='token'> "
        "<button type='submit'>Sign in</button></form></body></html>"
    )


async def _sign_in(datasette, request):
    from datasette.utils.asgi import Response

    token = request.args.get("token") or ""
    wanted = datasette.plantune_token
    next_path = request.args.get("next") or f"/{DATABASE_NAME}"
    if not next_path.startswith("/") or next_path.startswith("//"):
        next_path = f"/{DATABASE_NAME}"  # only ever back into this server
    if not token:
        return Response.html(_sign_in_page(next_path))
    if not hmac.compare_digest(token.encode(), wanted.encode()):
        return Response.html(_sign_in_page(next_path, wrong=True), status=403)
    response = Response.redirect(next_path)
    response.set_cookie(
        OWNER_COOKIE,
        datasette.sign({"a": OWNER_ID}, OWNER_COOKIE),
        httponly=True,
        samesite="lax",
    )
    return response


_PLUGIN = None


def _owner_only_plugin():
    """The plugin instance (built on first use: this module must not import Datasette)."""
    global _PLUGIN
    if _PLUGIN is not None:
        return _PLUGIN
    from datasette import hookimpl

    class _OwnerOnly:
        """Datasette plugin, registered in code: only the holder of the run's token reads.

        Every hook does nothing for a Datasette without ``plantune_token`` (``--no-auth``, the
        in-process tests and ``serve --get``), so registering it once per process is safe.
        """

        @hookimpl
        def actor_from_request(self, datasette, request):
            if not getattr(datasette, "plantune_token", None):
                return None
            cookie = request.cookies.get(OWNER_COOKIE)
            if not cookie:
                return None
            try:
                value = datasette.unsign(cookie, OWNER_COOKIE)
            except Exception:  # noqa: BLE001 - a forged or stale cookie is no actor
                return None
            return {"id": OWNER_ID, "plantune": True} if value == {"a": OWNER_ID} else None

        @hookimpl
        def permission_allowed(self, datasette, actor, action, resource):
            if not getattr(datasette, "plantune_token", None):
                return None
            if isinstance(actor, dict) and actor.get("plantune") and actor.get("id") == OWNER_ID:
                return None  # Datasette's defaults: read everything (the database is read-only)
            return False

        @hookimpl
        def forbidden(self, datasette, request, message):
            if not getattr(datasette, "plantune_token", None):
                return None
            from datasette.utils.asgi import Response

            return Response.html(_sign_in_page(request.path), status=403)

        @hookimpl
        def register_routes(self, datasette):
            if not getattr(datasette, "plantune_token", None):
                return []
            return [(r"^/-/sign-in$", _sign_in)]

    _PLUGIN = _OwnerOnly()
    _PLUGIN.__name__ = "plantune_owner_only"  # Datasette lists plugins by their module name
    return _PLUGIN


def _datasette_class():
    from datasette.app import Datasette
    from datasette.plugins import pm

    plugin = _owner_only_plugin()
    if not pm.is_registered(plugin):
        pm.register(plugin, name="plantune-owner-only")

    class PlantuneDatasette(Datasette):
        """Datasette that never shows where the database file is (``/-/databases.json``)."""

        def _connected_databases(self):
            return [
                {k: v for k, v in d.items() if k != "path"} for d in super()._connected_databases()
            ]

    return PlantuneDatasette


def build_datasette(db_path, metadata=None, settings=None, token=None):
    """A Datasette instance serving ``db_path`` read-only as ``/plantune``.

    With ``token``, only a browser signed in with it reads anything (``sign_in_url``);
    without, anyone who reaches the server does.

    Example (in-process, as the tests do)::

        ds = build_datasette("plantune.db")
        response = await ds.client.get("/plantune/phase_counts.json?_shape=array")
    """
    Datasette = _datasette_class()
    ds = Datasette(
        [],
        metadata=load_metadata() if metadata is None else metadata,
        settings={**DEFAULT_SETTINGS, **(settings or {})},
        # A secret of this run's own: a cookie signed by an earlier run is worth nothing.
        secret=secrets.token_hex(32),
    )
    ds.plantune_token = token
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


def serve(db_path, host=DEFAULT_HOST, port=DEFAULT_PORT, on_ready=None, auth=True):
    """Serve ``db_path`` until interrupted. ``on_ready(url, sign_in)`` is called just
    before (``sign_in`` is the run's sign-in link, None without ``auth``)."""
    import asyncio

    import uvicorn

    prepare_database(db_path)
    port = pick_port(host, port)
    token = new_token() if auth else None
    ds = build_datasette(db_path, token=token)
    asyncio.run(ds.invoke_startup())
    if on_ready:
        on_ready(url_for(host, port), sign_in_url(host, port, token) if token else None)
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
