"""``plantune gstack link | unlink | status``: put plantune where gstack's skills call it."""

import os

import click

from toolkit.cli.app import fail, json_option, print_json

gstack_dir_option = click.option(
    "--gstack-dir",
    "gstack_dirs",
    multiple=True,
    type=click.Path(file_okay=False),
    help="A gstack tree (repeatable; default: every install under your home: "
    "~/.claude/skills/gstack, ~/.<host>/skills/gstack, ~/.config/opencode/skills/gstack).",
)
executable_option = click.option(
    "--executable",
    default=None,
    help="The plantune whose gstack commands the shims run (default: this one).",
)


def _plantune_bin(executable):
    from toolkit.claude import settings

    try:
        return os.path.dirname(settings.resolve_executable(executable))
    except settings.SettingsError as e:
        fail(str(e))


def _roots(gstack_dirs):
    from toolkit.gstack import link as gl

    if gstack_dirs:
        return [os.path.abspath(os.path.expanduser(d)) for d in gstack_dirs]
    roots = gl.find_installs()
    if not roots:
        fail("no gstack install found under your home; name one with --gstack-dir")
    return roots


@click.group()
def gstack():
    """Run plantune where gstack's skills call their plan-tune bins.

    \b
    Example:
        plantune gstack link
        plantune gstack status
        plantune gstack unlink
    """


@gstack.command()
@gstack_dir_option
@executable_option
@click.option(
    "--force",
    is_flag=True,
    help="Link even a gstack whose bins this plantune does not know (a newer release).",
)
def link(gstack_dirs, executable, force):
    """Replace gstack's four plan-tune bins with shims that run plantune's commands.

    gstack's originals are kept byte for byte (in the tree's .git folder), run by the
    shims when plantune is gone, and put back by `plantune gstack unlink`. A tree that is
    not gstack's, bins of a release plantune does not know (see --force) or a tree it
    cannot write are refused with nothing changed. After gstack upgrades itself, the
    SessionStart hook of `plantune hook install` links again the installs linked here.

    \b
    Example:
        plantune gstack link
        plantune gstack link --gstack-dir ~/.claude/skills/gstack
    """
    from toolkit.gstack import link as gl

    plantune_bin = _plantune_bin(executable)
    roots = _roots(gstack_dirs)
    for root in roots:  # every tree is checked before any is changed
        _try(lambda: gl.check_linkable(root, plantune_bin, force=force))
    for root in roots:
        outcome = _try(lambda: gl.link(root, plantune_bin, force=force))
        verbs = set(outcome.values())
        verb = "already linked" if verbs == {"already linked"} else "linked"
        click.echo(f"{os.path.realpath(root)}: {verb} to {plantune_bin} ({len(outcome)} bins)")


@gstack.command()
@gstack_dir_option
def unlink(gstack_dirs):
    """Put gstack's own bins back; the tree is then byte-identical to before the link.

    \b
    Example:
        plantune gstack unlink
        plantune gstack unlink --gstack-dir ~/.claude/skills/gstack
    """
    from toolkit.gstack import link as gl

    for root in _roots(gstack_dirs):
        outcome = _try(lambda: gl.unlink(root))
        restored = sum(v == "restored" for v in outcome.values())
        what = f"{restored} gstack bins restored" if restored else "was not linked"
        click.echo(f"{os.path.realpath(root)}: {what}")


@gstack.command()
@gstack_dir_option
@executable_option
@click.option(
    "--settings",
    "settings_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="The Claude settings to look for gstack's own hooks in (default: "
    "$CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json).",
)
@json_option
def status(gstack_dirs, executable, settings_path, as_json):
    """Show, per gstack install, whether it is linked and which plantune its shims run.

    Also says whether gstack's own plan-tune hooks are still in the Claude settings (then
    an AskUserQuestion would be judged and logged twice). Exits 0 when every install found
    is linked to this plantune, 1 otherwise.

    \b
    Example:
        plantune gstack status
        plantune gstack status --json
    """
    from toolkit.claude import settings as cs
    from toolkit.gstack import link as gl

    plantune_bin = _plantune_bin(executable)
    roots = [os.path.abspath(os.path.expanduser(d)) for d in gstack_dirs] or gl.find_installs()
    # Claude Code's user settings (gstack's setup registers its hooks there too).
    claude_dir = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(
        os.path.expanduser("~"), ".claude"
    )
    settings_path = settings_path or os.path.join(claude_dir, "settings.json")
    gstack_hooks = cs.gstack_hooks_in(cs.read_settings_quietly(settings_path))
    installs = []
    for root in roots:
        if not gl.is_gstack_tree(root):
            fail(f"{root} is not a gstack tree (no VERSION and bin/{gl.BINS[0]})")
        installs.append(gl.status(root, plantune_bin))
    ok = bool(installs) and all(i["linked_to_this_plantune"] for i in installs)
    if as_json:
        print_json(
            {
                "plantune": plantune_bin,
                "installs": installs,
                "settings": settings_path,
                "gstack_hooks": gstack_hooks,
                "ok": ok,
            }
        )
    else:
        if not installs:
            click.echo("no gstack install found under your home")
        for i in installs:
            state = (
                "linked to this plantune"
                if i["linked_to_this_plantune"]
                else "linked to another plantune"
                if i["linked"]
                else "not linked"
            )
            click.echo(f"{i['root']}: {state} (gstack {i['version']})")
            for name, b in i["bins"].items():
                runs = f", runs {b['runs']}" if b["runs"] else ""
                if b["state"] == "plantune" and not os.access(b["runs"] or "", os.X_OK):
                    runs += " (gone: gstack's own answers)"
                click.echo(f"  bin/{name}: {b['state']}{runs}")
        if gstack_hooks:
            click.echo(
                f"{settings_path}: gstack's own plan-tune hooks are also registered, so a "
                "question is judged and logged twice; `plantune hook install --settings "
                f"{settings_path}` replaces them"
            )
    if not ok:
        raise click.exceptions.Exit(1)


def _try(action):
    from toolkit.gstack import link as gl

    try:
        return action()
    except gl.LinkError as e:
        fail(str(e))
    except OSError as e:
        from toolkit.store import safe_io

        fail(f"{e.filename or 'gstack tree'}: {safe_io.describe(e)}; nothing more was changed")
