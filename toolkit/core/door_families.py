"""The door rules' named word families: the verbs (delete, rotate, deploy, send ...), the
things they act on (tables, keys, production, customers ...), and the word sets that make
a match harmless ("the unused import", "the deploy script", "the password field").

Each ``_F(...)`` takes the next family id, so the families are made in this fixed order,
before ``door_rules`` makes the ones written inside its rules.
"""

from toolkit.core.door_words import _F, _SKIP, _W, _forms, _nouns, record_source

record_source(__file__)  # the file as read: the word-index cache is named for it

# ---- verb families -------------------------------------------------------------
_STRONG = _F(
    _forms(
        "delete, erase, wipe, purge, destroy, nuke, obliterate, shred, expunge, "
        "annihilate, zap, blow away, wipe out"
    ),
    "deletion, deletions, erasure, destruction, del",
)
_REMOVE = _F(
    _STRONG,
    _forms(
        "drop, remove, truncate, discard, overwrite, lose, get rid of, tear down, "
        "decommission, deprovision, terminate, deactivate, kill, unlink, replace, "
        "empty, clear, reset, flush, clean up, restore, reinitialise, reinitialize, "
        "format, revert, throw away, trash, scrap, delete all, remove all, "
        "clean out, dump, evict, expire, bin, ditch, axe, junk, chuck, toss, "
        "toss out, nix, kill off, throw out, do away with, dispose of, "
        "deep-six, shitcan, blow up, zero out, eradicate, eliminate, demolish, "
        "cull, prune, rip out, excise, liquidate, dispose, void"
    ),
    "rm, removal, teardown, tore down, torn down, overwrote, overwritten, lost, "
    "got rid of, emptied, emptying, empties, threw away, thrown away, reinit",
)
_PASSIVE_GONE = _F(
    "dropped, deleted, removed, truncated, wiped, purged, erased, destroyed, "
    "discarded, overwritten, emptied, cleared, flushed, lost, gone, torn down, "
    "decommissioned, terminated, deactivated, reset, nuked, shredded, reverted, "
    "replaced, restored, reinitialised, reinitialized, formatted, trashed, "
    "scrapped, expired, evicted, binned, ditched, axed, junked, chucked, "
    "tossed, nixed, killed off, thrown out, disposed of"
)
# ---- object families ------------------------------------------------------------
_DURABLE = _F(
    _nouns(
        "table, column, database, db, schema, index, indice, collection, keyspace, bucket, "
        "namespace, cluster, volume, disk, drive, partition, record, row, entry, account, user, "
        "customer, tenant, member, subscriber, data, dataset, datastore, data store, document, "
        "blob, object, upload, attachment, message, email, order, invoice, transaction, payment, "
        "secret, credential, certificate, cert, log file, audit log, audit trail, history, backup, "
        "snapshot, archive, dump, replica, shard, repo, repository, branch, commit, environment, "
        "env, server, instance, vm, node, pod, deployment, statefulset, pvc, persistent volume, "
        "queue, kafka topic, pubsub topic, sns topic, message topic, stream, dns record, "
        "dns zone, zone, domain, workspace, organisation, "
        "organization, org, project, stack, state file, tfstate, migration, file, folder, "
        "directory, dir, home directory, filesystem, file system, warehouse, lake, ledger, "
        "subscription, registry, image, container, mailbox, inbox, channel, wiki, volume claim, "
        "profile, photo, video, asset, recording, conversation, chat history, key, table row, "
        "distribution, cdn distribution, hosted zone, load balancer, vpc, subnet, nat gateway, "
        "user pool, identity pool, secret, kms key, vault, keystore, cron job, scheduled job, "
        "webhook, integration, app registration, oauth app, github app, service account, "
        "spreadsheet, sheet, crm, contact, lead, ticket, calendar, shared drive, drive folder, "
        "google drive, notion page, confluence space, slack workspace, metric, analytics, "
        "telemetry, catalog, release, artifact registry, package version, published version"
    ),
    "keys, logs, tokens, production, prod, storage, everything, inventory, indices, "
    "user data, customer data, personal data, client data, production data, prod data, "
    "patient data, payment data, billing data, all of it, all of them, the lot, pii",
)
_DURABLE_UNLESS_AFTER = _W(
    "js ts tsx jsx mjs py go rb rs java kt swift md txt css scss html yaml yml toml cfg ini "
    "variable variables var vars test tests spec specs mock mocks fixture "
    "fixtures stub stubs placeholder placeholders prop props type types "
    "name names label labels field in_ui style styles tag tags list "
    "component components element elements class classes method "
    "methods function functions helper helpers import imports "
    "comment comments docstring docstrings link links icon icons "
    "button buttons header headers row_ column_ width widths "
    "heading headings layout padding margin border borders color "
    "colors template templates hint hints tooltip tooltips "
    "animation animations note notes picker selector selectors "
    "dropdown dropdowns filter filters sort sorting preview "
    "previews cache caches model models view views".split()
)
_DURABLE_UNLESS_BEFORE = _W(
    "unused dead stale obsolete redundant debug temp tmp generated "
    "temporary scratch dummy fake mock sample example test local "
    "empty blank trailing extra stray dev development build dist "
    "output cache throwaway preview demo css js ts tsx jsx scss "
    "less html md markdown txt svg png snapshot spec stories notes "
    "storybook lint readme changelog go py rb rs java kt swift json yml yaml sh".split()
)

_HARMLESS = _F(
    _nouns(
        "snapshot file, generated file, generated types, generated code, codegen output, "
        "never used, unused import, import, comment, comma, semicolon, whitespace, space, tab, blank line, empty line, "
        "line, typo, todo, fixme, print, print statement, console log, console.log, debug log, debug line, "
        "debug statement, debug output, debug print, log line, log statement, log call, "
        "logging statement, logging call, dead code, cache, cdn cache, build cache, browser cache, "
        "npm cache, pip cache, cookie, lint error, lint warning, warning, placeholder, emoji, "
        "variable, var, helper, wrapper, stub, mock, fixture, breakpoint, character, char, word, "
        "sentence, paragraph, highlight, selection, style, class, classname, tag, element, div, "
        "span, button, icon, label, chart, chart instance, widget, modal, dialog, popup, tooltip, border, margin, padding, draft, feature flag, flag, "
        "test, test case, example, deprecation warning, note, lockfile, lock file, node module, "
        "venv, pyc file, pycache, build artifact, artifact, prompt, suggestion, dependency, "
        "parameter, param, argument, arg, field, property, prop, attribute, method, function, "
        "docstring, annotation, decorator, header comment, banner, badge, link, tooltip, "
        "duplicate, duplicate line, extra newline, newline, trailing newline, bracket, brace, "
        "parenthesis, quote, alias, shortcut, keybinding, hint, animation, screenshot, "
        "thumbnail, image cache, query cache, page cache, asset cache, layer cache, "
        "compiled file, stale comment, temp variable, cell output, notebook output, output, "
        "code, commented out code, pencil mark, mark, tempfile, temp file, tmp file, tmpfile, "
        "temporary file, scratch file"
    ),
    "unused, dead, trailing, redundant, extra, stray, commented, obsolete comment, "
    "node_modules, __pycache__, dist, build",
)
_DETERMINERS = _SKIP | _W(
    "unused dead stale redundant extra stray trailing temporary temp "
    "tmp old obsolete leftover orphaned debug local duplicate".split()
)
# Words that make a strong verb a column or feature name rather than an act.
_NAMING_NEXT = _W(
    "support at by flag flags column columns field fields timestamp timestamps marker "
    "markers button buttons icon icons key keys event events endpoint "
    "handler handlers hook hooks permission permissions confirmation "
    "dialog modal click clicked callback callbacks listener listeners "
    "action actions target targets".split()
)
_NAMING_PREV = _W("soft un undo is_ has_ confirm the_".split())
# Places where deleting is editing: "erase the marks in the mockup".
_SANDBOX = _W(
    "mockup mockups wireframe wireframes figma sketch design designs draft drafts "
    "readme docs doc notebook editor whiteboard slide slides screenshot test tests "
    "fixture fixtures example examples storybook prototype snippet snippets notes "
    "comment comments template templates css stylesheet markdown story copy "
    "text diff patch scratchpad playground ui frontend dialog modal button page "
    "form screen menu view memory".split()
)

_CRED_OBJ = _F(
    _nouns(
        "api key, access key, secret key, private key, signing key, ssh key, gpg key, pgp key, "
        "deploy key, encryption key, master key, root key, kms key, jwt secret, tls key, ssl key, "
        "aws key, stripe key, oauth token, oauth secret, client secret, license key, webhook "
        "secret, github token, npm token, pypi token, personal access token, app secret, "
        "admin token, key pair, keypair, token, secret, credential, password, passwd, "
        "passphrase, certificate, cert, env file, kubeconfig, pem, session token, refresh token, "
        "access token, bearer token, service account key, service account, root account, "
        "public key, host key, tls certificate, ssl certificate, api token, auth token, "
        "signing secret, salt, pepper, encryption secret, vault token, root password, "
        "admin password, database password, db password"
    ),
    "keys, creds, dotenv, pats, sessions, all sessions, env",
)
_CRED_UI = _W(
    "field fields form forms input inputs label labels placeholder validation strength "
    "hint hints page pages screen screens ui component components modal prompt rule "
    "rules length regex meter toggle visibility icon email emails template templates "
    "link links flow flows button buttons reset_link policy text copy docs "
    "documentation input_type type tests test mock mocks fixture fixtures "
    "example examples manager".split()
)
_CRED_VERB = _F(
    _forms(
        "rotate, revoke, reset, regenerate, reissue, re-issue, invalidate, expire, roll, change, "
        "replace, leak, expose, share, print, log, commit, push, paste, post, send, echo, disclose, "
        "publish, upload, hardcode, hard-code, check in, cycle, renew, swap, delete, remove, "
        "disable, deactivate, kill, transfer, rekey, re-key, dump, export, email, tweet, store, "
        "write, reveal, hand out, give out, copy"
    ),
    "revocation, rotation, sent, wrote, shown, show, display, displays, displayed",
)
_CRED_PASSIVE = _F(
    "rotated, revoked, regenerated, leaked, exposed, committed, invalidated, "
    "compromised, reset, expired, published, shared, printed, logged, pasted, "
    "pushed, reissued, deleted, removed, disabled, changed, replaced, renewed, "
    "rolled, dumped, exported, revealed, stolen"
)

_WEAKEN = _F(
    _forms(
        "disable, turn off, switch off, remove, bypass, skip, relax, weaken, loosen, drop, "
        "deactivate, circumvent, ignore, opt out of, kill, strip, rip out, suspend, downgrade, "
        "unenforce, unprotect, lift, reduce, lower, shorten, stop requiring, stop enforcing, "
        "stop checking, stop verifying, no longer require, no longer enforce, get rid of, "
        "comment out, allow login without, allow access without, override, overrule, neuter, "
        "defeat, break, pause, exempt, whitelist, allowlist, open up"
    ),
    "without, off",
)
_SECURITY = _F(
    _nouns(
        "2fa, two factor, two factor auth, two factor authentication, two-factor, mfa, "
        "multi factor, multi factor auth, multi factor authentication, otp, totp, sso, saml, "
        "auth, authentication, authorisation, authorization, authn, authz, login requirement, "
        "login check, password requirement, password policy, password rule, firewall, "
        "firewall rule, waf, security group, network policy, acl, iam policy, iam check, rbac, "
        "permission check, access control, access check, csrf, csrf protection, csrf token, "
        "csrf check, cors, cors check, cors restriction, csp, content security policy, ssl, "
        "ssl verification, ssl check, tls, tls verification, https, hsts, certificate "
        "verification, cert verification, certificate validation, cert validation, "
        "certificate pinning, cert pinning, signature verification, signature check, "
        "verification, encryption, encryption at rest, rate limit, rate limiting, rate limiter, "
        "ratelimit, throttling, captcha, audit log, audit logging, audit trail, security logging, "
        "security check, security scan, security scanning, security feature, security header, "
        "security review, security control, security policy, branch protection, protected "
        "branch, required review, review requirement, code review requirement, status check, "
        "sandbox, sandboxing, selinux, apparmor, seccomp, antivirus, endpoint protection, "
        "secret scanning, vulnerability scan, vulnerability scanning, vulnerability alert, "
        "account lockout, lockout, session timeout, session expiry, password expiry, "
        "permission, access restriction, ip allowlist, ip whitelist, allowlist, whitelist, "
        "vpn, intrusion detection, guardrail, safety check, safeguard, protection, "
        "login protection, brute force protection, email verification, "
        "identity verification, approval requirement, required approval, approval gate, "
        "signed commit, commit signing, dmarc, dkim, spf, password hashing, hashing, "
        "private network, private networking, private endpoint, private access, security, "
        "tls certificate check, token check, token validation, jwt validation, "
        "jwt verification, webhook signature, hmac check, hmac verification, backup, "
        "automated backup, nightly backup, snapshot, replication, point in time recovery, "
        "pitr, versioning, bucket versioning, object lock, retention, log retention, "
        "data retention, soft delete, deletion protection, termination protection, "
        "delete protection, recycle bin, trash retention, audit, monitoring, alerting"
    )
)
_WEAK_SEC_PASSIVE = _F(
    "disabled, turned off, switched off, removed, bypassed, skipped, relaxed, "
    "weakened, loosened, dropped, off, optional, not required, deactivated, "
    "ignored, suspended, lifted, commented out, no longer required, "
    "no longer enforced, opened up"
)

_GRANT = _F(
    _forms(
        "grant, give, assign, promote, elevate, escalate, upgrade, make, add, set, "
        "transfer, hand over, hand, invite"
    ),
    "gave, given, made",
)
_PRIV = _F(
    _nouns(
        "owner, ownership, admin, administrator, admin right, admin access, "
        "admin role, superuser, super user, super admin, superadmin, root access, "
        "sudo access, sudo right, full access, full control, full permission, "
        "write access, push access, org owner, owner role, billing admin, "
        "maintainer, admin privilege, elevated privilege, elevated permission, "
        "global admin, domain admin, cluster admin, cluster-admin, "
        "organization owner, organisation owner, repo admin"
    ),
    "root, sudo, sudoers, wheel, god mode, all privileges, all permissions, "
    "all scopes, admins group, owners group, administrators, admins, owners",
)
_PRIV_UI = _W(
    "page pages panel panels dashboard dashboards ui view views route routes screen "
    "screens tab tabs menu menus link links button buttons section sections form "
    "forms endpoint endpoints doc docs guide template templates layout layouts "
    "component components sidebar nav theme style styles css test tests fixture "
    "fixtures mock mocks check checks badge badges label labels column field "
    "fields filter filters flag flags tool tools area portal console mode "
    "interface api login role_badge icon icons avatar list table toggle toggles "
    "switch setting settings option options feature features widget widgets "
    "report reports command commands cli script scripts tab".split()
)
_MAKE = _F(
    _forms("make, set, turn, flip, switch, change, mark, open, expose, configure, convert"), "made"
)
_PUBLIC = _F(
    "public, publicly, world readable, world writable, world-readable, "
    "world-writable, public read, public-read, anyone with the link, open to all, "
    "open to everyone, open to the world, readable by anyone, writable by anyone"
)
_PUBLIC_CODE = _W(
    "method methods function functions api class classes field fields member "
    "members property properties getter getters setter setters interface "
    "interfaces constructor static variable variables helper helpers type "
    "types constant constants export exports attribute attributes modifier "
    "key key_ fn accessor accessors struct enum trait module modules".split()
)
_OPEN = _F(
    _forms(
        "open, expose, bind, listen, allow, unblock, forward, whitelist, allowlist, permit, accept"
    )
)
_WORLD = _F(
    "internet, the internet, world, the world, public, everyone, anyone, all ips, "
    "all traffic, all origins, all hosts, any ip, any host, any origin, 0.0.0.0, "
    "all inbound, all ingress, every ip, all ports, wildcard origin, wildcard"
)

_DEPLOY = _F(
    _forms(
        "deploy, ship, release, roll out, promote, push, go live, launch, cut over, "
        "apply, migrate, run, upgrade, switch over, enable, turn on, flip, "
        "roll, activate, execute, trigger, publish, cut"
    ),
    "rollout, rollouts, cutover, went live, ran, deployment, deployments, shipped, go-live, golive",
)
_PROD = _F(
    "prod, production, prd, prod-1, live, live site, the live site, live environment, "
    "live traffic, live database, live db, live cluster, live server, live servers, "
    "live users, to live, customers, all users, all customers, everyone, the public, "
    "100%, all regions, every region, all tenants, every tenant, general availability, "
    "ga, main site, real users, real customers, paying customers, production traffic, "
    "prod traffic, the fleet, entire fleet"
)
# Words that make "deploy" or "rollback" a noun modifier: work on the tooling, not the act.
_ABOUT_IT = _W(
    "script scripts config configuration docs doc documentation guide guides readme "
    "workflow workflows job jobs step steps pipeline pipelines file files yaml yml "
    "template templates tool tools tooling command commands target targets hook "
    "hooks button buttons notes checklist process instructions helper helpers "
    "function functions test tests plan plans logic code handler handlers "
    "mechanism procedure runbook runbooks strategy option options flag flags "
    "support status dashboard page log logs history sh py js ts json toml md cfg "
    "ini ps1 bat".split()
)
# Destinations that stay inside the team: publishing there is an ordinary edit.
_INTERNAL = _W(
    "pr description comment comments wiki internal team slack thread notebook "
    "draft drafts readme locally local staging preview sandbox intranet "
    "confluence notion jira ticket channel".split()
)
_NOT_PROD_AFTER = _W(
    "reload reloading preview previews server demo chat updates update share "
    "sharing coding edit editing mode view views stream streams region "
    "regions example examples".split()
)
_NONPROD = _W(
    "staging stage stg dev development preview previews test testing qa sandbox "
    "local localhost canary branch feature ephemeral review scratch demo".split()
)

_ROLLBACK_VERB = _F(
    _forms("revert, downgrade, undo, back out, roll back, unship, unrelease, pull back"), "undid"
)
_ROLLBACK_OBJ = _F(
    _nouns(
        "deploy, deployment, release, migration, version, rollout, "
        "schema, database, db, upgrade, cutover, production, prod, "
        "launch, ship, push, hotfix, infrastructure change, infra change"
    )
)

_RELEASE_VERB = _F(
    _forms(
        "release, ship, push, upload, submit, distribute, announce, post, "
        "tweet, deprecate, launch, tag, cut, promote, publish, unpublish, "
        "yank, list"
    ),
    "unpublish",
)
_RELEASE_OBJ = _F(
    "#version, npm, pypi, crates, crates.io, crate, rubygems, maven, "
    "maven central, nuget, packagist, cocoapods, the registry, package registry, "
    "the package registry, app store, the app store, play store, "
    "the play store, google play, docker hub, dockerhub, ghcr, ecr, gcr, "
    "testflight, homebrew, marketplace, the marketplace, publicly, the public, "
    "press release, status page, blog, twitter, linkedin, social media, "
    "customers, everyone, all users, new version, major version, "
    "minor version, patch version, release candidate, stable channel, "
    "stable release, new release, the release, a release, release branch, "
    "general availability, ga, chrome web store, app stores, "
    "extension store, vs code marketplace, helm repo, artifactory, "
    "package, packages, sdk, library, the library, our library, the package, "
    "our package, the sdk, our sdk, the gem, the crate, the module, "
    "the image, the chart, the app, the binary, the cli, the plugin, "
    "the extension"
)
_RELEASE_UNLESS_AFTER = _W(
    "notes note lock locks mutex semaphore handle handles memory "
    "resources resource connection connections cursor cursors "
    "pressure button key keys focus date dates".split()
)

_DBS = _F(
    "postgres, postgresql, pg, mysql, mariadb, sqlite, sqlite3, mongo, mongodb, "
    "dynamo, dynamodb, cassandra, oracle, sql server, sqlserver, mssql, redis, "
    "cockroach, cockroachdb, spanner, bigquery, snowflake, aurora, firestore, "
    "firebase, supabase, planetscale, elasticsearch, elastic search, opensearch, "
    "clickhouse, couchdb, couchbase, neo4j, db2, redshift, timescale, timescaledb, "
    "influx, influxdb, duckdb, scylla, scylladb, fauna, faunadb, vitess, tidb, "
    "yugabyte, yugabytedb, cosmos db, cosmosdb, memcached, kafka, rabbitmq, "
    "another database, a different database, a new database, another db, "
    "a different db, a new db, nosql, a document store, a document database, "
    "a key value store, a key-value store, a graph database, another datastore, "
    "a different datastore, a new datastore, a different storage engine, "
    "another storage engine, a new storage engine, d1, turso, neon, "
    "mysql 8, postgres 16, a managed database, managed postgres, rds"
)
_SWITCH = _F(
    _forms(
        "switch, migrate, move, port, convert, replace, swap, transition, change, "
        "go, rewrite, rebuild, re-platform, replatform, standardise, standardize, "
        "consolidate"
    ),
    "moving off, move off",
)
_REWRITE_VALUES = _F(
    _forms(
        "update, modify, change, overwrite, rewrite, normalise, normalize, convert, transform, "
        "mutate, migrate, reformat, recompute, recalculate, scrub, sanitise, sanitize, trim, "
        "lowercase, uppercase, merge, dedupe, deduplicate, de-duplicate, collapse, consolidate, "
        "reassign, renumber, remap, re-map, correct, patch, fix, rehash, re-hash, reencode, "
        "re-encode, reencrypt, re-encrypt, encrypt, decrypt, hash, anonymise, anonymize, "
        "pseudonymise, pseudonymize, redact, rekey, re-key, backfill, populate, set, reset, "
        "touch, round, truncate, strip, replace, mask, obfuscate, recode, re-id, reindex, "
        "re-index, repair, adjust, rescale, reprice, re-price, reclassify"
    ),
    "rewrote",
)
_ALL_QUALIFIER = _W(
    "all every each existing stored historical old legacy past production "
    "prod live millions thousands hundreds entire whole".split()
)
_DATA_NOUN = _F(
    _nouns(
        "row, record, value, entry, document, user, account, data, customer, "
        "order, password, email, id, field, column, table, invoice, "
        "transaction, price, balance, timestamp, address, profile, event, "
        "object, item, product, sku, payment, message, hash, phone number, "
        "username, slug, url, file, upload, key, amount, date, score, tag, "
        "rating, review, comment, post"
    )
)
_SCHEMA_VERB = _F(
    _forms(
        "rename, split, merge, drop, change, retype, narrow, widen, shrink, "
        "alter, restructure, reshape, repartition, re-partition, "
        "denormalise, denormalize, normalise, normalize, reorganise, "
        "reorganize, re-key, rekey"
    )
)
_SCHEMA_OBJ = _F(
    _nouns(
        "table, column, collection, schema, bucket, kafka topic, keyspace, index, "
        "database, db, data model, datamodel, field in the database, "
        "database field, db field, database column, db column, "
        "partition key, sort key, shard key, primary index"
    )
)
_MIGRATION = _F(
    _nouns(
        "migration, data migration, schema migration, db migration, "
        "database migration, pending migration, alembic migration, "
        "django migration, rails migration, flyway migration, "
        "liquibase changeset, prisma migration"
    ),
    "migrations, migrate",
)
_RUN = _F(
    _forms(
        "run, apply, execute, trigger, kick off, start, perform, ship, deploy, "
        "squash, edit, rewrite, delete, remove, drop, revert, roll back, "
        "fake"
    ),
    "ran",
)
_MIGRATE = _F(_forms("migrate"), "migration, migrations")
# "a migration test", "the migration guide": writing about migrations changes no data.
_MIGRATION_TOOLING = _W(
    "test tests testing guide guides docs doc documentation tool tools "
    "tooling framework helper helpers script scripts template templates "
    "linter lint plan plans checklist example examples".split()
)
_MIGRATE_OBJ = _F(
    _nouns(
        "prod, production, database, db, schema, data, table, record, row, "
        "user, account, customer, storage, datastore, cluster, tenant, "
        "region, order, payment, document"
    ),
    _DBS,
)
_ID_WORD = _F(
    "id, ids, key, keys, identifier, identifiers, primary key, primary keys, "
    "user id, user ids, order id, order ids, account id, account ids"
)
_ID_TYPE = _W(
    "uuid uuids ulid ulids bigint bigints snowflake autoincrement auto_increment "
    "serial integer integers int int32 int64 uuidv4 uuidv7 guid guids".split()
)

_SEND = _F(
    _forms(
        "send, email, e-mail, mail, text, sms, notify, message, blast, announce, "
        "broadcast, push, alert, contact, ping, invite, remind, dispatch, "
        "bulk email, bulk send, mass email, mass mail, mass send, spam, "
        "reach out to, write to, inform, warn, tell, post to, reply all, "
        "reply to all, cc, bcc, unsubscribe, opt out, resubscribe, subscribe"
    ),
    "sent, e-mails, emailed, mailed",
)
_AUDIENCE = _F(
    _nouns(
        "user, customer, subscriber, client, member, contact, recipient, "
        "mailing list, list, audience, userbase, user base, tenant, lead, "
        "employee, vendor, buyer, seller, partner, merchant, donor, patient, "
        "student, account holder, signup, sign up, follower, person, people, "
        "team, company, staff, developer, owner, admin, investor, "
        "shareholder, parent, teacher"
    ),
    "everyone, everybody",
)
_QUANT = _W(
    "all every each entire whole our the_full everyone everybody thousands millions "
    "hundreds".split()
)
_BROAD_AUDIENCE = _F(
    _nouns(
        "customer, subscriber, client, mailing list, newsletter, "
        "investor, regulator, journalist, shareholder, press, "
        "entire company, whole company, all hands, board, "
        "user base, userbase, audience, follower, every user, "
        "all user, every customer, all customer, our user, "
        "paying user, paying customer, waitlist, wait list, "
        "beta user, beta tester, end user"
    ),
    "everyone, everybody, the list, the press",
)
_MONEY_VERB = _F(
    _forms(
        "charge, bill, invoice, debit, pay, wire, remit, transfer, send, "
        "disburse, refund, credit, comp, pay out, reimburse, compensate, "
        "withdraw, deposit, fund, donate, spend, top up, settle"
    ),
    "paid, sent, payout, payouts, paying",
)
_MONEY_OBJ = _F(
    _nouns(
        "customer, card, credit card, account, client, money, fund, payment, "
        "payout, balance, invoice, salary, payroll, vendor, contractor, "
        "dollar, euro, pound, usd, eur, gbp, bitcoin, btc, eth, crypto, "
        "commission, affiliate, reward, royalty, dividend, bounty, rebate, "
        "credit, refund, compensation, settlement, reimbursement, invoice, "
        "bonus, stipend, deposit, fee, cash, wage, bank account, "
        "stripe balance, treasury"
    ),
    "salaries, $, everyone, all",
)
_CANCEL = _F(
    _forms(
        "cancel, terminate, void, end, downgrade, close, suspend, revoke, "
        "discontinue, stop, expire, unsubscribe"
    ),
    "cancellation, cancellations, cancelled, canceled, termination",
)
_CANCELLABLE = _F(
    _nouns(
        "subscription, order, account, plan, contract, reservation, booking, "
        "membership, payment, invoice, license, licence, domain, "
        "agreement, policy, lease, trial, shipment, delivery, transfer, "
        "wire, employee, contractor, vendor, partnership, customer, "
        "enterprise plan, support plan, seat, service agreement, "
        "insurance, mandate, standing order, direct debit, pledge, "
        "sponsorship, offer"
    )
)
_DOMAIN_VERB = _F(
    _forms(
        "transfer, move, point, repoint, re-point, let, allow, release, sell, "
        "buy, purchase, renew, register, expire, change, switch, update, "
        "drop, delete, park, give up, hand over, migrate, delegate, "
        "redirect, abandon"
    ),
    "sold, bought, let lapse, lapse",
)
_DOMAIN = _F(
    _nouns(
        "domain, domain name, nameserver, registrar, dns provider, mx record, "
        "apex record, apex domain, root domain, custom domain, tld"
    )
)
_DOMAIN_CODE = _W(
    "model models logic layer layers object objects driven event events expert "
    "experts service services entity entities type types knowledge language "
    "specific class classes module modules boundary boundaries folder "
    "folders package packages design".split()
)
_DEAL_VERB = _F(
    _forms(
        "buy, purchase, sell, sign, accept, decline, commit to, order, lease, "
        "renew, reserve, countersign, execute, agree to, approve, consent to, "
        "e-sign, sign up for, click accept on, click through, sign off on, agree"
    ),
    "bought, sold",
)
_DEAL = _F(
    _nouns(
        "contract, agreement, nda, lease, offer, license, licence, seat, "
        "terms, terms of service, terms of use, terms and conditions, tos, eula, "
        "license terms, licence terms, user agreement, addendum, dpa, baa, "
        "data processing addendum, data processing agreement, subscription terms, "
        "reserved instance, savings plan, enterprise plan, annual plan, "
        "hardware, purchase order, quote, term sheet, sow, msa, dpa, "
        "statement of work, settlement, acquisition, merger, invoice"
    )
)
_POST_VERB = _F(
    _forms(
        "post, tweet, announce, publish, share, submit, file, report, "
        "disclose, leak, publicize, publicise, broadcast, send"
    )
)
_PUBLIC_PLACE = _F(
    "twitter, x.com, linkedin, publicly, the blog, our blog, company blog, "
    "social media, press release, status page, the status page, hacker news, "
    "reddit, the app store, app store, play store, regulator, regulators, "
    "the sec, the irs, authorities, the authorities, the police, the media, "
    "journalists, the press, the public, mastodon, bluesky, facebook, "
    "instagram, youtube, product hunt, the forum, public forum, "
    "public channel, public slack, public repo, public issue, public issues, "
    "github issue, public github issue, gist, public gist, pastebin"
)

# Sending data out of the company: a sensitive object is enough ("forward the customer
# list to the vendor"); the destination is rarely named in a way a rule could trust.
_SHARE_VERB = _F(
    _forms(
        "share, forward, send, email, e-mail, mail, upload, post, export, "
        "give, hand over, hand, leak, attach, paste, sync, transfer, "
        "reply all, reply to all, cc, bcc, dm, message, text, publish, "
        "sell, expose, provide, disclose, submit, copy"
    ),
    "sent, gave, given",
)
_SENSITIVE = _F(
    _nouns(
        "customer list, customer data, customer record, customer database, customer export, "
        "customer spreadsheet, customer email, customer detail, customer info, client list, "
        "client data, client record, user list, user data, user record, user database, "
        "user export, user email, email list, contact list, mailing list, subscriber list, "
        "lead list, salary, salary sheet, salary list, salary data, salary spreadsheet, payroll, "
        "payroll data, payroll spreadsheet, payslip, employee list, employee data, "
        "employee record, employee salary, personnel file, hr file, hr record, patient data, "
        "patient record, medical record, health record, health data, pii, personal data, "
        "personal information, personal detail, social security number, ssn, passport, "
        "credit card number, card number, card data, bank detail, bank account detail, "
        "tax record, tax return, financial statement, financials, cap table, board deck, "
        "database dump, db dump, data dump, production data, prod data, production database, "
        "prod database, full export, data export, password list, password file, "
        "confidential document, confidential file, trade secret, source code, private key, "
        "internal document, customer pii, user pii, address list, phone list"
    ),
    "salaries, customers, users, patients, employees",
)
_OUTSIDE = _F(
    "anyone, anybody, anyone who has the link, anyone with the link, "
    "anyone with a link, anybody with the link, the public, the internet, "
    "the world, everyone on the internet, externally, outside the company, "
    "outside the org, outside the organisation, outside the organization, "
    "third party, third parties, third-party, strangers, public link, publicly"
)
# Mass changes to who hears from us.
_MASS_VERB = _F(
    _forms(
        "unsubscribe, opt out, resubscribe, subscribe, enrol, enroll, sign up, "
        "mute, remove from the list, remove from the mailing list"
    )
)

_TEARDOWN = _F(
    _forms(
        "terminate, decommission, deprovision, sunset, retire, shut down, "
        "take down, tear down, dismantle, uninstall, deregister, spin down, "
        "scale down to zero, scale to zero, stop and delete, wind down, "
        "turn down, switch off, power off, pull the plug on, kill off, "
        "release, deactivate, destroy, delete, remove, nuke, wipe"
    ),
    "shutdown, teardown, took down, torn down, tore down, spun down",
)
_INFRA = _F(
    _nouns(
        "instance, ec2 instance, server, vm, node, cluster, droplet, machine, host, "
        "service, api, product, endpoint, region, datacenter, data center, "
        "environment, infrastructure, infra, stack, vpc, network, load balancer, "
        "cdn, site, website, app, application, platform, database, db, "
        "elastic ip, static ip, ip address, phone number, fleet, account, "
        "subnet, gateway, nat gateway, dns, kubernetes cluster, k8s cluster, "
        "eks cluster, gke cluster, aks cluster, rds instance, redis cluster, "
        "kafka cluster, worker, worker pool, node pool, autoscaling group, "
        "asg, lambda, function app, backend, storage account, project, tenant, "
        "org, organisation, organization, subscription, resource group, "
        "namespace, deployment, pod, statefulset, daemonset, ingress, volume, "
        "container registry, registry, queue, topic, mailbox, repo, "
        "repository"
    ),
    "production, prod, live, permanently, forever, for good, everything",
)
_INFRA_UNLESS_BEFORE = _W(
    "local dev development test testing preview scratch temporary temp "
    "tmp sandbox my your ephemeral throwaway demo mock fake "
    "watch chart component widget modal editor player".split()
)
_INFRA_TOOL = _F(
    "pulumi, cdk, cdktf, sls, serverless, eksctl, terragrunt, copilot, amplify, "
    "vercel, netlify, fly, flyctl, heroku, doctl, railway, render, aws, gcloud, "
    "gsutil, az, oci, ibmcloud, s3, ec2, rds, eks, gke, aks, lambda, cloudformation, "
    "azure, gcp, digitalocean, linode, hetzner, openstack, ansible, nomad, "
    "consul, vault, kubectl, k8s, kubernetes, helm, docker, podman, compose, "
    "docker compose, docker-compose, terraform, tf, crossplane, argocd, flux"
)
_INFRA_TOOL_VERB = _W(
    "destroy delete delete-stack delete-bucket delete-cluster "
    "delete-db-instance delete-table rm rb remove teardown down destroy-all "
    "apps:destroy terminate terminate-instances purge prune rmi drain "
    "uninstall deregister kill -destroy --destroy nuke wipe "
    "delete-function delete-service delete-repository delete-secret "
    "delete-user delete-key deletion".split()
)


_ENDS = frozenset("?.!;")
_MORE = _W("and then also plus after before".split())
# A rename of these changes what others read (a table, a branch, a bucket): it stays read.
_RENAMED_STORE = _W(
    "table tables column columns database databases db "
    "schema schemas index indexes collection collections bucket buckets repo repository "
    "repositories branch branches topic topics queue queues field fields key keys env "
    "environment environments domain domains account accounts project projects".split()
)


def renames_only(words):
    """Whether the text only renames a name ("Rename deleteUser to removeUser in the
    store?"): its words are names, not acts. A second act or sentence reads as usual."""
    if words[0] not in ("rename", "renaming") or "to" not in words or words[1] in _DETERMINERS:
        return False
    body = words[:-1] if words[-1] in _ENDS else words
    return not any(w in _ENDS or w in _MORE or w in _RENAMED_STORE or w == "," for w in body)
