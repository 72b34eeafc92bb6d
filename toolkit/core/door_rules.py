"""The door classifier's rules: verb families crossed with object families, over words.

Imported by ``toolkit.core.doors`` only when a text has to be read, so checks without a summary
never load it. ``match(normalised)`` names the first rule that fires on text already
normalised by ``doors.normalise``; ``RULE_NAMES`` lists them in order.

The words, the shapes of rules and the word index are in ``door_words``, the named
families in ``door_families``. The other readings of a text (shell command lines, method
calls, disguised spellings) are in ``door_readings``, loaded only when the words as
written fire no rule.
"""

# Rules: verb families x object families, over words.
#
# A pair rule fires when a verb-family word has an object-family word within a few words
# after it, in the same sentence (or, for the passive voice, the object first). Families
# hold every inflection and multi-word phrases, and are plain sets: nothing to compile, so
# the rules cost nothing to import.

from toolkit.core.door_families import (
    _ABOUT_IT,
    _ALL_QUALIFIER,
    _BROAD_AUDIENCE,
    _CANCEL,
    _CANCELLABLE,
    _CRED_OBJ,
    _CRED_PASSIVE,
    _CRED_UI,
    _CRED_VERB,
    _DBS,
    _DEAL,
    _DEAL_VERB,
    _DEPLOY,
    _DETERMINERS,
    _DOMAIN,
    _DOMAIN_CODE,
    _DOMAIN_VERB,
    _DURABLE,
    _DURABLE_UNLESS_AFTER,
    _DURABLE_UNLESS_BEFORE,
    _GRANT,
    _HARMLESS,
    _ID_TYPE,
    _INFRA,
    _INFRA_TOOL,
    _INFRA_TOOL_VERB,
    _INFRA_UNLESS_BEFORE,
    _INTERNAL,
    _MAKE,
    _MASS_VERB,
    _MIGRATE,
    _MIGRATE_OBJ,
    _MIGRATION,
    _MIGRATION_TOOLING,
    _MONEY_OBJ,
    _MONEY_VERB,
    _NAMING_NEXT,
    _NAMING_PREV,
    _NONPROD,
    _NOT_PROD_AFTER,
    _OPEN,
    _OUTSIDE,
    _PASSIVE_GONE,
    _POST_VERB,
    _PRIV,
    _PRIV_UI,
    _PROD,
    _PUBLIC,
    _PUBLIC_CODE,
    _PUBLIC_PLACE,
    _QUANT,
    _RELEASE_OBJ,
    _RELEASE_UNLESS_AFTER,
    _RELEASE_VERB,
    _REMOVE,
    _REWRITE_VALUES,
    _ROLLBACK_OBJ,
    _ROLLBACK_VERB,
    _RUN,
    _SANDBOX,
    _SCHEMA_OBJ,
    _SCHEMA_VERB,
    _SECURITY,
    _SEND,
    _SENSITIVE,
    _SHARE_VERB,
    _STRONG,
    _SWITCH,
    _TEARDOWN,
    _WEAK_SEC_PASSIVE,
    _WEAKEN,
    _WORLD,
    renames_only,
)
from toolkit.core.door_words import (
    _BREAKS,
    _F,
    _W,
    _Any,
    _chmod_mode,
    _close_families,
    _flag_with,
    _forms,
    _is_flag,
    _nouns,
    _or,
    _Pair,
    _Referent,
    _Text,
    _Then,
    _words,
    record_source,
)

record_source(__file__)  # the file as read: the word-index cache is named for it

__all__ = ["RULE_NAMES", "match", "words"]

# (rule name, test over the word list); the first rule that fires names the decision.
RULES = (
    (
        "irreversible-wording",
        _or(
            _Any(
                _F(
                    "irreversible, irreversibly, irrevocable, irrevocably, unrecoverable, "
                    "nonrecoverable, non-recoverable, unrecoverably, permanent, permanently, "
                    "cannot be undone, can not be undone, can t be undone, cannot be reversed, "
                    "can t be reversed, cannot be recovered, can t be recovered, no way back, "
                    "no way to undo, no undo, point of no return, one way door, one-way door, "
                    "data loss, lose data, lose all data, losing data, lost data, destructive, "
                    "destructively, unrecoverable data, not reversible, non-reversible, "
                    "nonreversible, can never be undone, for good, once and for all, "
                    "never come back, no going back"
                )
            ),
            _Pair(
                _F(_forms("lose"), "lost"),
                _F("data, work, changes, history, everything, records, customers, users"),
                3,
            ),
        ),
    ),
    (
        "sql-destructive",
        _or(
            _Then(_F("drop, truncate"), lambda w: w in _SQL_OBJECTS, 2),
            _Any(
                _F(
                    "delete from, alter table, alter column, alter type, dropdb, flushall, flushdb, "
                    "dropdatabase, drop database, deletemany, delete many, dropcollection, "
                    "drop collection, replace into, merge into, vacuum full, drop owned, "
                    "deleteall, delete all rows, destroyall, removeall, truncate cascade, "
                    "on delete cascade, cascade delete, cascading delete"
                )
            ),
            _Then(_F("update"), lambda w: w == "set", 3),
        ),
    ),
    (
        "filesystem-destructive",
        _or(
            _Any(
                _F(
                    "rm, rmdir, shred, mkfs, wipefs, fdisk, parted, srm, rmtree, rimraf, "
                    "secure delete, secure-delete, remove-item, del /s, rd /s, dd, "
                    "shutil rmtree, rm rf, rm -rf, rm -r, rm -fr, unlink"
                )
            ),
            _Then(_F("find"), _is_flag("-delete"), 12),
            _Then(_F("truncate"), _is_flag("-s", "--size"), 2),
            _Then(_F("crontab"), _is_flag("-r", "-ir", "-ri"), 2),
            _Any(
                _F(
                    "db drop, db reset, db purge, db wipe, db flush, database drop, "
                    "database reset, migrate fresh, migrate reset, migrate refresh, "
                    "force reset, --force-reset, accept data loss, --accept-data-loss, pg reset, "
                    "sqlflush, schema load, db schema load, drop all, dropall, drop_all, "
                    "reset --force, wipe data, factory reset"
                )
            ),
            _Pair(_F(_forms("move"), "mv"), _F("dev null"), 8),
            _Then(
                _F("format, formatting, reformat, reformatting, wipe, partition, repartition"),
                lambda w: (
                    w
                    in _W(
                        "disk disks drive drives volume volumes partition partitions "
                        "ssd hdd sd card c usb".split()
                    )
                ),
                3,
            ),
        ),
    ),
    (
        "history-rewrite",
        _or(
            _Any(
                _F(
                    "force push, force pushed, force pushing, force pushes, forcepush, "
                    "force-push, --force-with-lease, force with lease, hard reset, "
                    "filter branch, filter-branch, filter repo, filter-repo, bfg, "
                    "reflog expire, reflog delete, stash drop, stash clear, update-ref -d, "
                    "force the push, force a push, push --force, push -f, push --delete, "
                    "push --mirror, --force-push, forced push, git push --force, git clean, "
                    "checkout --, checkout ., restore ., restore --staged ., "
                    "rewrite history, rewriting history, rewrote history, history rewrite, "
                    "reset --hard, --hard"
                )
            ),
            _Then(
                _F("push, pushes, pushed, pushing, git"),
                _is_flag(
                    "--force",
                    "-f",
                    "--force-with-lease",
                    "--force-if-includes",
                    "--mirror",
                    "--delete",
                    "-d",
                    "--prune",
                    "-fu",
                    "-uf",
                    "+main",
                    "+master",
                ),
                6,
            ),
            _Then(_F("reset"), _is_flag("--hard", "--merge", "--keep"), 3),
            _Then(_F("push"), lambda w: w == "force", 3),
            _Then(_F("tag"), _is_flag("-d", "--delete"), 2),
            _Then(_F("clean"), _flag_with("fdx"), 2),
            _Then(_F("branch"), _is_flag("-d", "--delete", "-dr", "--force"), 2),
            _Then(_F("gc"), _is_flag("--prune", "--aggressive"), 2),
            _Pair(
                _F(
                    _forms(
                        "rewrite, overwrite, clobber, force, scrub, purge, alter, edit, change, "
                        "rebase, squash, amend, reorder, drop, discard, reset, revert, "
                        "filter, rewind, truncate, prune, mess with, tamper with, "
                        "fix up, fixup, delete, remove, wipe"
                    ),
                    "rewrote, overwrote",
                ),
                _F(
                    "history, git history, commit history, branch history, repo history, "
                    "repository history, project history, published commit, published commits, "
                    "pushed commit, pushed commits, public commit, public commits, shared "
                    "branch, shared history, shared commits, remote branch, remote history, "
                    "remote commits, upstream, the remote, remote, origin, origin main, "
                    "origin master, published history, public history, published branch, "
                    "merged commits, released commits, tags, release tag, release tags, "
                    "the tag, a tag, published tag, main history, master history, "
                    "commits on main, commits on master, main branch history"
                ),
                6,
                passive=_F(
                    "rewritten, rewrote, overwritten, overwrote, rebased, squashed, "
                    "amended, altered, changed, reordered, dropped, reset, force pushed, "
                    "force-pushed, clobbered, truncated, pruned, deleted, removed"
                ),
            ),
            _Pair(
                _F(
                    _forms(
                        "overwrite, clobber, force, rewrite, reset, rebase, squash, amend, "
                        "force push, replace, wipe, nuke, delete, remove"
                    ),
                    "rewrote, overwrote",
                ),
                _F(
                    "main, master, trunk, the main branch, the master branch, the default "
                    "branch, default branch, release branch, production branch, prod branch, "
                    "develop, develop branch, origin/main, origin/master"
                ),
                5,
            ),
            _Pair(
                _F(
                    _forms(
                        "discard, drop, lose, throw away, wipe, reset, nuke, blow away, "
                        "delete, remove, clear, trash, erase, overwrite, clobber, stash drop"
                    ),
                    "lost, threw away, thrown away",
                ),
                _F(
                    _nouns(
                        "uncommitted change, unstaged change, local change, unsaved change, "
                        "unpushed commit, working tree, working copy, working directory "
                        "change, local commit, uncommitted work, local work, unsaved work, "
                        "unpushed work, stash, my change, your change, their change, "
                        "pending change, staged change, in-progress work, work in progress, "
                        "wip, changes, edits, local edit, unsaved edit, uncommitted edit, "
                        "local branch, dirty tree, dirty working tree"
                    )
                ),
                5,
            ),
        ),
    ),
    (
        "infra-teardown",
        _or(
            _Any(
                _F(
                    "terraform destroy, tofu destroy, terraform state rm, terraform apply -destroy, "
                    "terraform apply --destroy, pulumi destroy, cdk destroy, sls remove, "
                    "serverless remove, kubectl delete, kubectl drain, helm uninstall, helm delete, "
                    "docker system prune, docker volume prune, docker volume rm, docker rm, "
                    "docker rmi, compose down -v, down -v, down --volumes, --volumes, "
                    "prune --volumes, prune -a, prune --all, delete-stack, s3 rb, aws s3 rm, "
                    "terminate-instances, delete-db-instance, delete-cluster, delete-bucket, "
                    "cloud-nuke, aws-nuke, permanent shutdown, permanently shut down, "
                    "shut down permanently, shut it down permanently, shut down for good, "
                    "decommission, decommissioned, decommissioning, deprovision, "
                    "deprovisioned, deprovisioning"
                )
            ),
            _Any(  # tests tear down their fixtures
                _F("tear down, tore down, torn down, tearing down, tears down"),
                unless_near=_W("test tests fixture fixtures suite spec specs".split()),
            ),
            _Then(
                _INFRA_TOOL,
                lambda w: (
                    w in _INFRA_TOOL_VERB
                    or w.startswith(
                        (
                            "delete-",
                            "remove-",
                            "terminate-",
                            "destroy-",
                            "deregister-",
                            "purge-",
                            "disable-",
                            "detach-",
                            "revoke-",
                        )
                    )
                ),
                6,
            ),
            _Pair(
                _TEARDOWN,
                _INFRA,
                6,
                passive=_F(
                    "terminated, decommissioned, deprovisioned, sunset, sunsetted, retired, shut down, "
                    "taken down, torn down, dismantled, uninstalled, deregistered, spun down, "
                    "destroyed, deleted, removed, nuked, wiped, released, deactivated, wound down, "
                    "turned down, switched off, powered off, scaled to zero"
                ),
                unless_before=_INFRA_UNLESS_BEFORE,
                unless_after=_W("modules module js version versions".split()),
            ),
        ),
    ),
    (
        "rollback",
        _or(
            _Any(
                _F(
                    "rollback, rollbacks, roll back, rolls back, rolled back, rolling back, "
                    "roll-back, rollback of, rolled-back, roll it back, roll this back, "
                    "roll that back, roll everything back"
                ),
                unless_next=_ABOUT_IT,
            ),
            _Pair(
                _ROLLBACK_VERB,
                _ROLLBACK_OBJ,
                5,
                passive=_F("reverted, downgraded, undone, backed out, rolled back"),
            ),
        ),
    ),
    (
        "production-deploy",
        _or(
            _Pair(
                _DEPLOY,
                _PROD,
                7,
                unless_after=_NOT_PROD_AFTER,
                passive=_F(
                    "deploy, deploys, deployed, deployment, release, "
                    "released, rollout, rolled out, push, pushed, "
                    "launch, launched, cutover, shipped, migration, "
                    "upgrade, upgraded, enabled, flipped, change, "
                    "changes, ship, ships, go-live, promotion"
                ),
            ),
            _Pair(
                _F(
                    _forms(
                        "merge, land, push, commit, fast-forward, fast forward, cherry-pick, "
                        "cherry pick, squash-merge, squash merge, rebase-merge, auto-merge, "
                        "automerge, ship, release, deploy"
                    ),
                    "merged, landed",
                ),
                _F(
                    "into main, into master, to main, to master, onto main, onto master, "
                    "on main, on master, into trunk, to trunk, into the main branch, "
                    "into the master branch, into the default branch, to the main branch, "
                    "to the default branch, into release, into production, to production, "
                    "to prod, into prod, origin main, origin master, it into main, "
                    "it to main, it to master, the branch into main"
                ),
                6,
            ),
            _Pair(
                _F(
                    _forms(
                        "merge, land, squash-merge, squash merge, rebase-merge, auto-merge, "
                        "automerge"
                    ),
                    "merged, landed",
                ),
                _F(
                    "the pr, this pr, that pr, the pull request, this pull request, "
                    "the merge request, this merge request, the mr, this mr, pr #, "
                    "pull request #, the prs, these prs, it, the change, the branch"
                ),
                3,
            ),
            _Any(
                _F(
                    "go live, goes live, going live, went live, go-live, golive, land and deploy, "
                    "land & deploy, land-and-deploy, terraform apply, tofu apply, pulumi up, "
                    "cdk deploy, sls deploy, serverless deploy, fly deploy, vercel --prod, "
                    "netlify deploy --prod, git push heroku, eb deploy, kubectl apply, "
                    "helm upgrade, helm install, kubectl rollout, kubectl set image, "
                    "ansible-playbook, push origin main, push origin master, push to main, "
                    "push to master, merge to main, merge to master, "
                    "deploy, deploys, deploying, deployed, redeploy, redeploys, redeploying, "
                    "redeployed, cut over, cutover, cutting over, switch traffic, shift traffic, "
                    "flip traffic, dns cutover, dns switch, blue green switch, promote to"
                ),
                unless_near=_NONPROD,
                unless_next=_ABOUT_IT,
            ),
        ),
    ),
    (
        "publish-release",
        _or(
            _Any(_F(_forms("publish, unpublish, yank, republish")), unless_near=_INTERNAL),
            _Any(
                _F(
                    "unpublish, yank, yanked, yanking, republish, unpublished, "
                    "npm publish, twine upload, cargo publish, cargo yank, gem push, gem yank, "
                    "poetry publish, flit publish, hatch publish, uv publish, docker push, "
                    "gh release create, gh release upload, gh release delete, npm deprecate, "
                    "npm unpublish, npm dist-tag, cut a release, cut the release, cut a new release, "
                    "cut release, cutting a release, tag a release, tag the release, "
                    "release it, ship it to customers, app store submission, "
                    "submit to the app store, submit for review, submit to apple, "
                    "submit to google play, publicly release, public release, public launch, "
                    "general availability, make it generally available, press release"
                )
            ),
            _Pair(
                _RELEASE_VERB,
                _RELEASE_OBJ,
                7,
                passive=_F(
                    "released, shipped, pushed, uploaded, submitted, published, announced, tagged, "
                    "launched, posted, out"
                ),
                unless_after=_RELEASE_UNLESS_AFTER,
            ),
        ),
    ),
    (
        "credentials",
        _or(
            _Pair(_CRED_VERB, _CRED_OBJ, 6, passive=_CRED_PASSIVE, unless_after=_CRED_UI),
            _Any(
                _F(
                    "compromise, compromised, compromising, credential stuffing, secret leak, "
                    "key leak, leaked key, leaked token, leaked secret, leaked credentials"
                )
            ),
        ),
    ),
    (
        "security-posture",
        _or(
            _Pair(_WEAKEN, _SECURITY, 6, passive=_WEAK_SEC_PASSIVE),
            _Pair(_MAKE, _PUBLIC, 8, unless_after=_PUBLIC_CODE, unless_between=_PUBLIC_CODE),
            _Any(
                _F(
                    "public read, public-read, public write, public-write, publicly readable, "
                    "publicly writable, publicly accessible, public access, public acl, "
                    "public url, public link, public bucket, public repo, public repository, "
                    "public ip, public endpoint, public listing, public sharing, "
                    "anonymous access, anonymous read, anonymous write, anonymous user, "
                    "anonymous users, allusers, allauthenticatedusers, world readable, "
                    "world writable, world-readable, world-writable, world writeable, "
                    "0.0.0.0, ::/0, allow all, allow-all, grant all, sudoers, nopasswd, "
                    "setuid, suid, 777, 0777, 666, 0666, verify false, verify=false, "
                    "ssl verify false, sslverify false, insecure skip verify, "
                    "insecureskipverify, --insecure, --no-verify-ssl, "
                    "rejectunauthorized false, reject unauthorized false, "
                    "strict host key checking no, stricthostkeychecking no, "
                    "privileged true, --privileged, run as root, as root, "
                    "disable_auth, no auth, noauth, auth none, without authentication, "
                    "without auth, unauthenticated access, open to the internet, "
                    "anyone with the link, anyone on the internet, anyone can edit, "
                    "anyone can write, anyone can read, everyone can edit, publicly editable, "
                    "open to the world, internet-facing, internet facing"
                )
            ),
            _Pair(_OPEN, _WORLD, 6),
            _Pair(
                _F(_forms("let, allow, permit, invite")),
                _F(
                    "anyone, everybody, the public, "
                    "the internet, the world, strangers, "
                    "anonymous users, unauthenticated "
                    "users"
                ),
                2,
            ),
            _Then(_F("chmod"), _chmod_mode, 4),
            _Then(_F("--visibility"), lambda w: w in _W("public internal".split()), 2),
            _Any(
                _F(
                    "--visibility=public, --visibility=internal, --public, --access=public, "
                    "--acl=public-read, --acl=public-read-write"
                )
            ),
            _Then(_F("chown"), lambda w: w.startswith("root"), 4),
            _Pair(_GRANT, _PRIV, 6, unless_after=_PRIV_UI),
            _Pair(
                _F(_forms("remove, revoke, strip, drop, take away, downgrade, demote")),
                _PRIV,
                5,
                unless_after=_PRIV_UI,
            ),
        ),
    ),
    (
        "data-model",
        _or(
            _Any(
                _F(
                    "primary key, primary keys, pk type, backfill, backfills, backfilled, "
                    "backfilling, back fill, back-fill, data migration, data migrations, "
                    "schema migration, schema migrations, schema change, schema changes, "
                    "data model change, data model changes, data-model change, "
                    "datamodel change, breaking change, breaking changes, architecture change, "
                    "architectural change, architecture fork, architectural fork, "
                    "architecture shift, architectural shift, architecture decision, "
                    "architectural decision, architecture rewrite, database engine, "
                    "db engine, storage engine, database backend, database vendor, "
                    "database provider, column type, column types, data type change, "
                    "denormalise, denormalize, denormalising, denormalizing, reshard, "
                    "resharding, re-shard, re-sharding, sharding, shard key, partition key, "
                    "alter table, change the schema, schema rewrite, rewrite the schema, "
                    "id type, id format, key format, one-way migration, irreversible migration, "
                    "destructive migration, split the database, split the monolith, "
                    "merge the databases, database split, db split, database merge, "
                    "foreign key, foreign keys, cascade, cascading"
                )
            ),
            _Pair(
                _SWITCH,
                _DBS,
                8,
                passive=_F("to, with, for, replaced, swapped"),
                verb_unless_after=_MIGRATION_TOOLING,
            ),
            _Pair(
                _F(_nouns("id, identifier, key, primary key, user id, account id, order id")),
                _F(_ID_TYPE),
                6,
                passive=_F(_ID_TYPE),
            ),
            _Pair(_REWRITE_VALUES, _F(_ALL_QUALIFIER), 6),
            _Pair(
                _SCHEMA_VERB,
                _SCHEMA_OBJ,
                6,
                unless_after=_DURABLE_UNLESS_AFTER,
                unless_before=_DURABLE_UNLESS_BEFORE,
            ),
            _Pair(
                _RUN,
                _MIGRATION,
                5,
                unless_after=_MIGRATION_TOOLING,
                passive=_F(
                    "run, ran, applied, executed, deployed, shipped, "
                    "squashed, edited, rewritten, reverted"
                ),
            ),
            _Pair(
                _MIGRATE, _MIGRATE_OBJ, 6, passive=_MIGRATE, verb_unless_after=_MIGRATION_TOOLING
            ),
        ),
    ),
    (
        "outbound-action",
        _or(
            _Any(
                _F(
                    _forms("refund"),
                    "mass email, mass emails, mass mail, mass mailing, "
                    "bulk email, bulk emails, bulk mail, bulk sms, bulk message, bulk messages, "
                    "mass sms, mass message, mass notification, blast email, email blast, "
                    "sms blast, push blast, newsletter, newsletters, email campaign, "
                    "marketing campaign, drip campaign, sms campaign, push campaign, "
                    "marketing email, marketing emails, announcement email, chargeback, "
                    "chargebacks, bulk refund, bulk cancel, bulk cancellation, mass cancel, "
                    "mass cancellation, bulk delete, mass delete, bulk deletion, mass deletion, "
                    "bulk payout, mass payout, bulk charge, bulk invite, mass invite, "
                    "bulk update, mass update, wire transfer, bank transfer, payout, payouts, "
                    "pay out, pays out, paying out, paid out, "
                    "domain transfer, transfer the domain, transfer our domain, "
                    "let the domain expire, let the domain lapse",
                )
            ),
            _Then(_SEND, lambda w: w in _QUANT, 6),
            _Pair(_SEND, _BROAD_AUDIENCE, 8),
            _Pair(_MONEY_VERB, _MONEY_OBJ, 6),
            _Pair(
                _CANCEL,
                _CANCELLABLE,
                6,
                passive=_F(
                    "cancelled, canceled, terminated, voided, ended, closed, suspended, revoked"
                ),
            ),
            _Pair(_DOMAIN_VERB, _DOMAIN, 6, passive=_DOMAIN_VERB, unless_after=_DOMAIN_CODE),
            _Pair(_DEAL_VERB, _DEAL, 6),
            _Pair(
                _SHARE_VERB,
                _SENSITIVE,
                6,
                unless_after=_CRED_UI
                | _DURABLE_UNLESS_AFTER
                | _W("calculator calculators page pages screen widget".split()),
            ),
            _Pair(_SHARE_VERB, _OUTSIDE, 8),
            _Then(_MASS_VERB, lambda w: w in _QUANT, 4),
            _Pair(_MASS_VERB, _BROAD_AUDIENCE, 6),
            _Any(_F("mass unsubscribe, bulk unsubscribe, unsubscribe everyone, unsubscribe all")),
            _Pair(_POST_VERB, _PUBLIC_PLACE, 7),
        ),
    ),
    ("destructive-verb", None),  # strong verbs: see _strong_free
    (
        "remove-durable",
        _or(
            _Pair(
                _REMOVE,
                _DURABLE,
                7,
                passive=_PASSIVE_GONE,
                unless_after=_DURABLE_UNLESS_AFTER,
                unless_before=_DURABLE_UNLESS_BEFORE,
                located=True,
                verb_unless_after=_NAMING_NEXT,
                direct_unless=_HARMLESS,
            ),
            _Referent(_REMOVE, _DURABLE),
        ),
    ),
)
RULE_NAMES = tuple(name for name, _ in RULES)

_SQL_OBJECTS = _W(
    "table tables database databases schema schemas index indexes column columns "
    "view views user users role roles owned collection collections keyspace "
    "materialized materialised constraint constraints trigger triggers function "
    "functions procedure procedures extension extensions sequence sequences type "
    "types tablespace partition partitions if".split()
)


_PRONOUNS = _W("it them this that".split())
_EASY = _W("easy easier simple trivial cheap safe quick fine okay ok".split())


def _strong_free(t):
    """A strong verb (delete, wipe, purge, ...) not aimed at a harmless object fires.

    Ambiguity decides one-way: "delete it?" or "wipe everything" fire; "delete the unused
    import" or "purge the CDN cache" do not. The object is in the first words after the
    verb (determiners skipped) or, when nothing follows, the words before it (passive:
    "can the stale comment be deleted?").
    """
    strong = t.at(_STRONG)
    if not strong:
        return False
    words, size = t.words, len(t.words)
    harmless = {i for i, _ in t.at(_HARMLESS)}
    for i, n in strong:
        j = i + n
        if (j < size and words[j] in _NAMING_NEXT) or (i and words[i - 1] in _NAMING_PREV):
            continue  # a name, not an act: "the deleted_at column", "soft delete"
        if i >= 2 and words[i - 1] == "to" and words[i - 2] in _EASY:
            continue  # a property, not an act: "cheap, easy to delete"
        while j < size and words[j] in _DETERMINERS:
            j += 1
        if j < size and words[j] not in _BREAKS:
            ahead = range(j, min(size, j + 3))
        else:
            ahead = range(max(0, i - 5), i)
        if any(k in harmless for k in ahead):
            continue
        if j < size and words[j] in _PRONOUNS and i:
            # "There's a trailing blank line at the bottom. Delete it?": "it" is the
            # harmless thing named before, when nothing durable is named there too.
            before = range(max(0, i - 15), i)
            durable = {k for k, _ in t.at(_DURABLE)}
            if any(k in harmless for k in before) and not any(k in durable for k in before):
                continue
        if any(w in _SANDBOX for w in words[i + n : i + n + 7]):
            continue
        return True
    return False


_strong_free.needs = _STRONG.id
RULES = tuple((name, _strong_free if test is None else test) for name, test in RULES)
# (rule name, test, family id the test cannot fire without), in rule order.
_CHECKS = tuple(
    (name, test, test.needs)
    for name, tests in RULES
    for test in (tests if isinstance(tests, tuple) else (tests,))
)
# Every family is made: the word index may be built.
_close_families()


def _match_words(found):
    t = _Text(found)
    hits = t.hits
    if not hits:
        return None
    for name, test, needs in _CHECKS:
        if needs in hits and test(t):
            return name
    return None


def match(normalised):
    """The name of the first rule that fires on already normalised text, or None.

    The words are read as written; then, only if nothing fired, shell command lines,
    method calls and disguised spellings are read too.
    """
    found = _words(normalised)
    if not found or renames_only(found):
        return None
    rule = _match_words(found)
    if rule:
        return rule
    shell, code_calls, repair = _READERS or _load_readers()
    rule = shell(normalised)
    if rule:
        return rule
    calls = code_calls(normalised)
    if calls:
        rule = _match_words(_words(calls))
        if rule:
            return rule
    fixed = repair(found, normalised)
    if fixed is not found:
        return _match_words(fixed)
    return None


# The other readings (door_readings), loaded on the first text whose words fire no rule.
_READERS = None


def _load_readers():
    global _READERS
    from toolkit.core.door_readings import _code_calls, _repair, _shell

    _READERS = (_shell, _code_calls, _repair)
    return _READERS


words = _words
