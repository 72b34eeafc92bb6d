"""Execute the analysis notebooks against a database and save shareable copies.

The notebooks in ``notebooks/`` are committed without outputs. Each has a cell tagged
``parameters`` (database path from ``$PLANTUNE_DB`` by default); running them here inserts
an ``injected-parameters`` cell right after it, the way papermill does, so an executed
copy records exactly what it ran against. Copies are written as ``.ipynb`` and as a
self-contained ``.html`` page (plots embedded) that opens without Jupyter.

nbclient and nbformat are imported lazily: nothing on the hot path imports this module.
"""

import base64
import html
import os
import re
import tempfile
import time

from toolkit.store import resources

NOTEBOOKS_DIR = resources.path("notebooks")
KERNEL_NAME = "python3"
DEFAULT_TIMEOUT = 600


class NotebookError(Exception):
    """A notebook that could not be run, explained in one line."""


def notebook_paths(directory=NOTEBOOKS_DIR):
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".ipynb"))
    except OSError:
        raise NotebookError(resources.missing_message("notebooks folder", directory)) from None
    if not names:
        raise NotebookError(f"no notebooks in {directory}")
    return [os.path.join(directory, n) for n in names]


def inject_parameters(nb, params):
    """Insert a cell assigning ``params`` right after the cell tagged ``parameters``."""
    import nbformat

    source = "# Parameters injected by `plantune notebooks run`\n" + "".join(
        f"{name} = {value!r}\n" for name, value in params.items()
    )
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": ["injected-parameters"]})
    position = 0
    for i, c in enumerate(nb.cells):
        if "parameters" in c.get("metadata", {}).get("tags", []):
            position = i + 1
            break
    nb.cells.insert(position, cell)
    return nb


def parameters(nb):
    """``{name: default}`` assigned in the notebook's ``parameters`` cell, in order.

    A default that is not a plain literal (``os.environ.get(...)``) is recorded as None.
    """
    import ast

    for cell in nb.cells:
        if "parameters" not in cell.get("metadata", {}).get("tags", []):
            continue
        try:
            tree = ast.parse("".join(cell.get("source", "")))
        except SyntaxError:
            return {}
        names = {}
        for node in tree.body:
            if isinstance(node, ast.Assign):
                targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif (
                isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value
            ):
                targets = [node.target.id]
            else:
                continue
            try:
                default = ast.literal_eval(node.value)
            except ValueError:
                default = None
            for t in targets:
                names[t] = default
        return names
    return {}


_TRUE = ("true", "yes", "1", "on")
_FALSE = ("false", "no", "0", "off")


def _typed(name, text, default):
    """``text`` as the type of the parameter's default (papermill's -p infers types too)."""
    low = text.strip().lower()
    if isinstance(default, bool):
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise NotebookError(f"--param {name} takes true or false, got {text!r}")
    if isinstance(default, (int, float)):
        try:
            number = (
                float(text)
                if isinstance(default, float) or not low.lstrip("-").isdigit()
                else int(text)
            )
        except ValueError:
            raise NotebookError(f"--param {name} takes a number, got {text!r}") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise NotebookError(f"--param {name} takes a finite number, got {text!r}")
        return number
    if low in ("none", "null"):
        return None
    return text


def parse_params(pairs, directory=NOTEBOOKS_DIR):
    """``["project=acme-web", ...]`` → ``{NAME: value}`` named as the notebooks name them.

    A name matches a parameters-cell name without regard to case (``project`` fills
    ``PROJECT``); the value takes the type of that parameter's default. A name no notebook
    declares, a pair without ``=`` or a name given twice is an error.
    """
    import nbformat

    if not pairs:
        return {}
    declared = {}
    for path in notebook_paths(directory):
        for name, default in parameters(nbformat.read(path, as_version=4)).items():
            declared.setdefault(name.lower(), (name, default))
    out = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        key = key.strip()
        if not eq or not key:
            raise NotebookError(f"--param must look like name=value, got {pair!r}")
        if key.lower() not in declared:
            known = ", ".join(sorted(n.lower() for n, _ in declared.values())) or "none"
            raise NotebookError(f"no notebook has a parameter named {key!r} (they take: {known})")
        name, default = declared[key.lower()]
        if name in out:
            raise NotebookError(f"--param {key} is given twice")
        out[name] = _typed(key, value, default)
    return out


def _failed_cell(nb):
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                return i + 1
    return None


def execute(path, params=None, timeout=DEFAULT_TIMEOUT, notebook_params=None):
    """Run one notebook with ``params`` injected; returns the executed notebook node.

    ``notebook_params`` (from ``parse_params``) are injected too, but only those the
    notebook's own parameters cell declares.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(path, as_version=4)
    nb.metadata["kernelspec"] = {
        "name": KERNEL_NAME,
        "display_name": "Python 3",
        "language": "python",
    }
    if notebook_params:
        # --param values go only where a notebook's parameters cell names them.
        declared = parameters(nb)
        params = dict(params or {}, **{k: v for k, v in notebook_params.items() if k in declared})
    if params:
        inject_parameters(nb, params)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=KERNEL_NAME,
        resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}},
    )
    name = os.path.basename(path)
    # The kernel's own stderr is start-up noise (ipykernel warns about TCP transport on
    # every start); it is kept aside and only shown when the kernel itself fails.
    with tempfile.TemporaryFile() as kernel_stderr:
        try:
            client.execute(stderr=kernel_stderr)
        except CellExecutionError as e:
            cell = _failed_cell(nb)
            where = f" in cell {cell}" if cell else ""
            evalue = " ".join(str(e.evalue).split())
            raise NotebookError(f"{name} failed{where}: {e.ename}: {evalue}") from None
        except Exception as e:  # noqa: BLE001 - kernel start-up, timeouts, dead kernels
            message = " ".join(str(e).split()) or type(e).__name__
            kernel_stderr.seek(0)
            tail = [
                l for l in kernel_stderr.read().decode("utf-8", "replace").splitlines() if l.strip()
            ]
            if tail:
                message += f" (kernel said: {tail[-1].strip()})"
            raise NotebookError(f"{name} could not be executed: {message}") from None
    return nb


def default_out_dir(db_path=None, env=None):
    """A ``notebooks`` folder beside the database (``<state root>/notebooks`` for the state
    root's own): executed copies go beside the data they show, never into the package."""
    if db_path:
        return os.path.join(os.path.dirname(os.path.abspath(db_path)), "notebooks")
    from toolkit.store import paths

    return os.path.join(paths.state_root(env), "notebooks")


def _write_private(path, text):
    """Write an executed copy readable by its owner only: it holds what the 0600
    database holds (questions, answers, free text), so it gets the same mode."""
    from toolkit.store import safe_io

    safe_io.write_atomic(path, text, mode=0o600)
    os.chmod(path, 0o600)  # an earlier copy written 0644 is tightened too


def run(
    db_path,
    out_dir=None,
    params=None,
    directory=NOTEBOOKS_DIR,
    html_copy=True,
    timeout=DEFAULT_TIMEOUT,
    on_done=None,
    notebook_params=None,
):
    """Execute every notebook in ``directory`` against ``db_path`` and save copies in ``out_dir``.

    Returns one dict per notebook: name, seconds, notebook path and html path (or None).
    ``on_done(result)`` is called after each notebook. ``notebook_params`` fill the
    parameters each notebook declares (``parse_params``).
    """
    import nbformat

    if not os.path.exists(db_path):
        from toolkit.store.db import no_database_message

        raise NotebookError(no_database_message(db_path))
    paths = notebook_paths(directory)
    out_dir = out_dir or default_out_dir(db_path)
    try:
        os.makedirs(out_dir, mode=0o700, exist_ok=True)
    except OSError as e:
        raise NotebookError(f"cannot create output folder {out_dir}: {e.strerror}") from None
    values = {"PLANTUNE_DB": os.path.abspath(db_path)}
    values.update(params or {})
    results = []
    for path in paths:
        name = os.path.basename(path)
        started = time.perf_counter()
        nb = execute(path, values, timeout, notebook_params)
        seconds = time.perf_counter() - started
        nb_out = os.path.join(out_dir, name)
        _write_private(nb_out, nbformat.writes(nb))
        html_out = None
        if html_copy:
            html_out = os.path.splitext(nb_out)[0] + ".html"
            _write_private(html_out, to_html(nb, os.path.splitext(name)[0]))
        result = {"name": name, "seconds": seconds, "notebook": nb_out, "html": html_out}
        results.append(result)
        if on_done:
            on_done(result)
    return results


# --------------------------------------------------------------------------- HTML

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:980px;margin:2rem auto;padding:0 1rem;
color:#222;line-height:1.45}
pre{background:#f6f8fa;padding:.6rem .8rem;overflow-x:auto;border-radius:4px;font-size:.85rem}
pre.code{border-left:3px solid #8ab4f8}
pre.error{background:#fdecea;border-left:3px solid #d93025}
.output img{max-width:100%}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
td,th{border:1px solid #ddd;padding:.2rem .5rem;text-align:right}
code{background:#f6f8fa;padding:0 .2rem;border-radius:3px}
.params{font-size:.8rem;color:#555}
"""
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _inline(text):
    text = html.escape(text)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)
    text = re.sub(r"(?<![*\w])\*([^*]+)\*(?!\*)", r"<em>\1</em>", text)
    return text


def markdown_to_html(source):
    """Just enough Markdown for our notebooks: headings, paragraphs, lists, code spans."""
    out, para, items = [], [], []

    def close():
        if para:
            out.append("<p>" + _inline(" ".join(para)) + "</p>")
            para.clear()
        if items:
            out.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in items) + "</ul>")
            items.clear()

    for line in source.splitlines():
        stripped = line.strip()
        heading = re.match(r"^(#{1,6})\s+(.*)$", stripped)
        if not stripped:
            close()
        elif heading:
            close()
            level = len(heading.group(1))
            out.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif re.match(r"^[-*]\s+", stripped):
            if para:
                close()
            items.append(re.sub(r"^[-*]\s+", "", stripped))
        elif items and line.startswith("  "):
            items[-1] += " " + stripped
        else:
            if items:
                close()
            para.append(stripped)
    close()
    return "\n".join(out)


def _text(value):
    return "".join(value) if isinstance(value, list) else str(value)


def _output_html(out):
    kind = out.get("output_type")
    if kind == "stream":
        return f"<pre>{html.escape(_text(out.get('text', '')))}</pre>"
    if kind == "error":
        trace = _ANSI.sub("", "\n".join(out.get("traceback", [])))
        return f'<pre class="error">{html.escape(trace)}</pre>'
    data = out.get("data", {})
    if "image/png" in data:
        png = _text(data["image/png"]).replace("\n", "")
        base64.b64decode(png, validate=True)  # never embed something that is not base64
        return f'<img alt="figure" src="data:image/png;base64,{png}">'
    if "text/html" in data:
        # Produced by our own kernel (pandas tables), not by untrusted input.
        return _text(data["text/html"])
    if "text/plain" in data:
        return f"<pre>{html.escape(_text(data['text/plain']))}</pre>"
    return ""


def to_html(nb, title):
    """A self-contained HTML page for an executed notebook."""
    parts = [
        '<!doctype html><html><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
    ]
    for cell in nb.cells:
        source = _text(cell.get("source", ""))
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.get("cell_type") == "markdown":
            parts.append(markdown_to_html(source))
        elif cell.get("cell_type") == "code":
            css = "code params" if "injected-parameters" in tags or "parameters" in tags else "code"
            parts.append(f'<pre class="{css}">{html.escape(source)}</pre>')
            parts.append(
                '<div class="output">'
                + "".join(_output_html(o) for o in cell.get("outputs", []))
                + "</div>"
            )
    parts.append("</body></html>\n")
    return "\n".join(parts)
