"""A live ``plantune serve`` for the tests that talk to it over HTTP.

``http_get`` keeps cookies, as a browser does: once a test opened the server's sign-in link
through it, its later requests are signed in. ``anonymous_get`` never sends one.
"""

import http.cookiejar
import re
import socket
import time
import urllib.error
import urllib.request

COOKIES = http.cookiejar.CookieJar()
_SIGNED_IN = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(COOKIES))
_ANONYMOUS = urllib.request.build_opener()
SIGN_IN_LINE = re.compile(r"^\s+(http://\S+/-/sign-in\?token=\S+)$")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=10):
    with _SIGNED_IN.open(url, timeout=timeout) as response:
        return response.status, response.read().decode("utf-8")


def anonymous_get(url, timeout=10):
    """``(status, body)`` without any cookie; an HTTP error status is returned, not raised."""
    try:
        with _ANONYMOUS.open(url, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


def read_banner(proc, seconds=30):
    """The lines ``plantune serve`` prints on start, up to its sign-in link (or the
    ``--no-auth`` warning); ``(lines, sign-in URL or None)``."""
    deadline = time.monotonic() + seconds
    lines = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"plantune serve exited early: {''.join(lines)}")
        lines.append(line)
        found = SIGN_IN_LINE.match(line.rstrip("\n"))
        if found:
            return lines, found.group(1)
        if line.startswith("No sign-in"):
            return lines, None
    raise AssertionError(f"plantune serve printed no sign-in link: {''.join(lines)}")


def wait_until_up(url, proc, seconds=30):
    """Wait until the server answers ``url`` at all (a refusal is an answer too)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"plantune serve exited early: {proc.stdout.read()}")
        try:
            return anonymous_get(url, timeout=2)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    raise AssertionError(f"plantune serve did not answer {url} within {seconds} s")
