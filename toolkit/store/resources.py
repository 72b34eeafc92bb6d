"""Where plantune's bundled files live: the SQL schema, the notebooks, the Datasette metadata.

An installed wheel carries them inside the package, as ``toolkit/sql``,
``toolkit/notebooks`` and ``toolkit/datasette-metadata.json`` (pyproject.toml maps the
top-level folders there at build time). A source checkout, which is what an editable
install and the tests run, keeps them at the top level beside ``toolkit/``.

For a package on disk, ``importlib.resources.files("toolkit")`` is the package's own
folder; :func:`package_dir` computes the same folder from the module's location, because
importing importlib.resources (pathlib, zipfile, tempfile, typing) costs every hook process
dearly (measured: see docs/performance.md, section "What the hot path leaves out") and the schema is located on every database open. A test checks that the two
agree in an installed copy. A package that is not a plain folder (a zip import) falls back
to importlib.resources itself.

Only the standard library is imported here: this module is on the hot path.
"""

import os

# What the wheel bundles under the package, by their names in the source tree.
BUNDLED = ("sql", "notebooks", "datasette-metadata.json")

_resolved = {}


def package_dir():
    """The folder of the installed ``toolkit`` package (this module is in its ``store``)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.isdir(here):
        return here
    import importlib.resources  # pragma: no cover - zip imports only

    return os.fspath(importlib.resources.files("toolkit"))  # pragma: no cover


def _source_checkout():
    """The checkout root when ``toolkit`` runs from a source tree, else None."""
    root = os.path.dirname(package_dir())
    return root if os.path.isfile(os.path.join(root, "pyproject.toml")) else None


def path(name):
    """Absolute path of the bundled file or folder ``name`` (one of :data:`BUNDLED`).

    Inside the package when installed from a wheel, else at the top of a source checkout.
    When neither exists the packaged location is returned, so the caller's "not found"
    error names where an installed copy should have it.
    """
    found = _resolved.get(name)
    if found:
        return found
    if name not in BUNDLED:
        raise ValueError(f"{name!r} is not a bundled plantune file")
    installed = os.path.join(package_dir(), name)
    found = installed
    if not os.path.exists(installed):
        root = _source_checkout()
        if root and os.path.exists(os.path.join(root, name)):
            found = os.path.join(root, name)
    if os.path.exists(found):
        _resolved[name] = found
    return found


def missing_message(what, where):
    """The one sentence for a bundled file that is not there: a broken install."""
    return (
        f"{what} not found at {where}: this plantune installation is incomplete; "
        "reinstall it (pipx install --force, or pip install --force-reinstall)"
    )
