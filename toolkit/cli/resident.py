"""``plantune resident``: the resident server that runs the hot commands warm."""

import click


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
    """Say whether servers of this install run, and how many calls each served.

    There is one server for each context callers run in (a sandbox, other limits, another
    locale), at most four; servers whose pids this process cannot see (another pid
    namespace) are not listed.

    \b
    Example:
        plantune resident status
        # running: pid 4242, 1,337 calls served (socket /run/user/1000/plantune/….sock)
    """
    from toolkit import resident as server

    found = server.servers()
    if not found:
        click.echo(f"not running (the next hot command starts one in {server.runtime_dir()})")
        return
    for path, pid, served in found:
        calls = "1 call" if served == 1 else f"{served:,} calls"
        click.echo(f"running: pid {pid}, {calls} served (socket {path})")


@resident.command()
def stop():
    """Stop the servers of this install (each after the call it is running).

    A server still in a call after 15 seconds (longer than a write waits for the
    database's lock) is killed. The next hot command starts a
    new one. Stop them before moving, restoring or replacing the database file by hand
    (a server that finds its database's files replaced also leaves).

    \b
    Example:
        plantune resident stop
    """
    from toolkit import resident as server

    found = server.servers()
    if not found:
        click.echo("not running")
        return
    for path, pid, _served in found:
        outcome = server.stop(path)
        if outcome == "killed":
            click.echo(f"killed pid {pid} (it did not finish its call within 15 seconds)")
        elif outcome == "stopped":
            click.echo(f"stopped pid {pid}")
        else:
            raise click.ClickException(f"pid {pid} could not be stopped")
