"""``plantune resident``: the resident server that runs the hot commands warm."""

import click


def _path():
    from toolkit import resident

    return resident.socket_path()


@click.group()
def resident():
    """The resident server: one warm process that runs the hot commands.

    The hot commands (gstack-question-log, gstack-question-preference, the profile and
    pacing commands, plantune hook pre-tool-use/post-tool-use, plantune check/log) hand
    their work to it when it runs, which saves each call Python's start-up, the imports
    and the database's schema. The first such call starts it in the background; it
    leaves after 10 minutes without a call (PLANTUNE_SERVER_IDLE, in seconds) and
    whenever plantune's files change. PLANTUNE_SERVER=off runs every call in its own
    process and starts no server.

    \b
    Example:
        plantune resident status
        plantune resident stop
    """


@resident.command()
def status():
    """Say whether the server of this install runs, and how many calls it served.

    \b
    Example:
        plantune resident status
        # running: pid 4242, 1,337 calls served, socket /run/user/1000/plantune/….sock
    """
    from toolkit import resident as server

    path = _path()
    info = server.server_info(path)
    if info is None:
        click.echo(f"not running (the next hot command starts it; socket {path})")
        return
    pid, served = info
    calls = "1 call" if served == 1 else f"{served:,} calls"
    click.echo(f"running: pid {pid}, {calls} served, socket {path}")


@resident.command()
def stop():
    """Stop the server of this install (after the call it is running).

    The next hot command starts a new one. Stop it before moving, restoring or replacing
    the database file by hand (a server that finds its file replaced also leaves).

    \b
    Example:
        plantune resident stop
    """
    from toolkit import resident as server

    path = _path()
    info = server.server_info(path)
    if info is None:
        click.echo("not running")
        return
    if server.stop(path):
        click.echo(f"stopped (pid {info[0]})")
        return
    raise click.ClickException(f"pid {info[0]} did not stop within 5 seconds")
