"""A realistic synthetic plan-tuning history, for demos, tests and calibration practice.

One simulated developer works on a few projects. On most days some project has a review
chain (autoplan-style): CEO and Eng phases always, Design and DX sometimes, 5-10 findings
per phase drawn from the question registry. Each finding gets severity, irreversibility
and decision-matters (0-2) from a shared latent "how big is this" variable plus per-question
traits, so the three are skewed towards 0-1 and correlated, and one-way questions are
always irreversible. The uncalibrated pacing rule (score >= 4, at most 3 per phase,
one-way always, gates always) decides what is asked; the developer follows the
recommendation most of the time, overrides more when the decision matters to them, and
now and then flips a silent decision back.

Every row written is marked ``synthetic = 1`` so real and simulated data never mix
unnoticed: ``plantune calibrate`` ignores it unless asked (``--include-synthetic``).
Output is deterministic for the same seed, days, projects and end date; event keys are
hashes of the records, so writing the same simulation twice adds nothing.

Standard library only (``random.Random`` streams are stable across Python versions).
"""

import hashlib
import json
import math
import random
import uuid
from datetime import date, datetime, time, timedelta, timezone

from toolkit.core import identity, scoring
from toolkit.core.vocabulary import DIMENSIONS, REVIEW_PHASES
from toolkit.store import db

PHASES = REVIEW_PHASES
# autoplan runs CEO and Eng always, Design when the plan has UI scope, DX when it is
# developer-facing.
PHASE_PROBABILITY = {"ceo": 1.0, "design": 0.45, "eng": 1.0, "dx": 0.35}
PHASE_SKILLS = {
    "ceo": ("plan-ceo-review", "autoplan"),
    "design": ("plan-design-review", "autoplan"),
    "eng": ("plan-eng-review", "review", "qa", "autoplan"),
    "dx": ("plan-devex-review", "autoplan"),
}
# One-way questions are rarer than two-way ones in a real review.
ONE_WAY_WEIGHT = 0.35
FINDINGS_PER_PHASE = (5, 10)
# The pacing rule in force before any calibration.
RANK_CAP_PER_PHASE = 3
UNCALIBRATED_THRESHOLD = scoring.DEFAULT_THRESHOLD
GATE_PROBABILITY = 0.12  # a phase ends with an approval gate
MIGRATION_PROBABILITY = 0.06  # the eng phase includes a migration gate
FLIP_PROBABILITY = 0.35  # a silent decision the developer disagrees with gets flipped back
MAX_DAYS = 3650
PROJECT_NAMES = (
    "acme-storefront",
    "acme-billing-api",
    "lab-notebook",
    "river-mobile",
    "ops-dotfiles",
    "atlas-search",
    "harbor-infra",
    "quill-docs",
    "orbit-analytics",
    "pine-cli",
    "summit-auth",
    "delta-etl",
)
AREAS = (
    "checkout-form",
    "login-flow",
    "billing-webhook",
    "search-index",
    "csv-export",
    "onboarding-email",
    "rate-limiter",
    "settings-page",
    "audit-log",
    "image-upload",
    "session-store",
    "feature-flags",
    "cli-output",
    "retry-queue",
    "api-pagination",
)
# Short words for what a finding of each registry question is about (ids and summaries).
TOPICS = {
    "plan-ceo-review-mode": ("review-mode", "Which review mode fits the plan"),
    "plan-ceo-review-expansion-proposal": ("expand-scope", "Proposed scope expansion"),
    "plan-ceo-review-premise-revise": ("premise", "The plan's premise looks wrong"),
    "plan-ceo-review-outside-voice": ("outside-voice", "Get an outside opinion"),
    "plan-ceo-review-promote-to-docs": ("promote-docs", "Promote the plan to project docs"),
    "plan-eng-review-arch-finding": ("architecture", "Architecture issue"),
    "plan-eng-review-scope-reduce": ("reduce-scope", "Cut scope to ship sooner"),
    "plan-eng-review-test-gap": ("test-gap", "No test covers"),
    "plan-eng-review-outside-voice": ("second-opinion", "Second opinion on the design"),
    "plan-eng-review-todo-add": ("todo", "Follow-up work noticed"),
    "plan-design-review-mode": ("design-mode", "Design review depth"),
    "plan-design-review-fix": ("design-fix", "Design problem in"),
    "plan-devex-review-mode": ("dx-mode", "Developer-experience review depth"),
    "plan-devex-review-friction-fix": ("dx-friction", "Friction for developers in"),
    "review-finding-fix": ("code-finding", "Code review finding in"),
    "review-sql-safety": ("sql-safety", "Unsafe SQL in"),
    "review-llm-trust-boundary": ("llm-trust", "LLM output trusted without checks in"),
    "qa-bug-fix-scope": ("bug-scope", "Bug found while testing"),
    "autoplan-taste-decision": ("taste", "Taste call on"),
    "autoplan-user-challenge": ("challenge", "The plan contradicts what you asked for in"),
}
GATE_QUESTIONS = {
    "ceo": "plan-ceo-review-promote-to-docs",
    "design": "plan-design-review-fix",
    "eng": "plan-eng-review-todo-add",
    "dx": "plan-devex-review-friction-fix",
}
MIGRATION_QUESTION = "preamble-vendored-migration"
DECLARED_DIMENSIONS = DIMENSIONS
PREFERENCE_CHOICES = ("never-ask", "always-ask", "ask-only-for-one-way")


class SimulationError(ValueError):
    """Bad simulation settings, explained in one sentence."""


def _canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _key(*parts):
    return hashlib.sha1(_canonical(parts).encode("utf-8")).hexdigest()


def _iso(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _level(x, low, high):
    return 0 if x < low else (1 if x < high else 2)


def _sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


class _Question:
    """A registry question with the simulated developer's fixed traits for it."""

    def __init__(self, row):
        self.id = row["id"]
        self.skill = row["skill"]
        self.category = row["category"]
        self.door_type = row["door_type"]
        self.options = json.loads(row["options_json"])
        self.topic, self.phrase = TOPICS.get(
            self.id, (self.id.split("-")[-1], self.id.replace("-", " "))
        )
        # How severe and how hard to undo findings of this kind tend to be, and how much
        # this developer cares about deciding them personally. These traits belong to the
        # simulated developer, not to the seed: two seeds are two stretches of the same
        # person's history, so a threshold fitted on one should carry over to the other.
        rng = random.Random(f"plantune-simulate-traits:{self.id}")
        self.sev_bias = rng.gauss(0.0, 0.35)
        self.irr_bias = rng.gauss(0.0, 0.35)
        self.care = rng.gauss(0.0, 0.6)


def _load_questions(conn):
    rows = conn.execute(
        "SELECT id, skill, category, door_type, options_json FROM registry_questions"
        " WHERE options_json IS NOT NULL AND json_array_length(options_json) >= 2 ORDER BY id"
    ).fetchall()
    by_id = {r["id"]: _Question(r) for r in rows}
    pools = {}
    for phase in PHASES:
        pool = [
            q for q in by_id.values() if q.skill in PHASE_SKILLS[phase] and q.category != "routing"
        ]
        if not pool:
            raise SimulationError(
                f"the registry has no questions for the {phase} phase; run `plantune registry sync` "
                "with a registry that has plan-review questions"
            )
        pools[phase] = pool
    return by_id, pools


def _weights(pool):
    return [ONE_WAY_WEIGHT if q.door_type == "one-way" else 1.0 for q in pool]


class Simulation:
    """Draws the history day by day; rows are collected in plain lists for bulk insert."""

    def __init__(self, conn, seed, days, projects, end):
        self.rng = random.Random(f"plantune-simulate:{seed}")
        self.seed = seed
        self.days = days
        self.end = end
        self.start = end - timedelta(days=days - 1)
        self.questions, self.pools = _load_questions(conn)
        self.projects = [
            {"slug": name, "rate": self.rng.uniform(0.45, 1.0)} for name in PROJECT_NAMES[:projects]
        ]
        self.origin = f"simulate:seed={seed}"
        self.reset_rows()
        self.totals = {
            "sessions": 0,
            "findings": 0,
            "question_log": 0,
            "preferences": 0,
            "declared_profile": 0,
            "surfaced": {"one-way": 0, "gate": 0, "rank": 0, "flip": 0},
            "silent": 0,
        }

    def reset_rows(self):
        self.events, self.findings, self.prefs, self.pref_events, self.declared = [], [], [], [], []

    # ------------------------------------------------------------------ history

    def declare_profile(self):
        ts = _iso(datetime.combine(self.start, time(9, 0), timezone.utc))
        for dim in DECLARED_DIMENSIONS:
            value = round(min(1.0, max(0.0, self.rng.gauss(0.55, 0.2))), 2)
            self.declared.append((db.GLOBAL_SCOPE, dim, value, "plan-tune", 1, ts))

    def day(self, index):
        day = self.start + timedelta(days=index)
        weekend = day.weekday() >= 5
        for project in self.projects:
            rate = project["rate"] * (0.3 if weekend else 1.0)
            sessions = min(3, self._poisson(rate))
            hour = self.rng.uniform(8.0, 11.0)
            for _ in range(sessions):
                start = datetime.combine(day, time(0, 0), timezone.utc) + timedelta(hours=hour)
                end = self.session(project["slug"], start)
                hour = min(
                    22.0,
                    (end - datetime.combine(day, time(0, 0), timezone.utc)).total_seconds() / 3600
                    + self.rng.uniform(0.5, 3.0),
                )
            if self.rng.random() < 0.02:
                self.preference(project["slug"], day)

    def _poisson(self, lam):
        # Knuth's method: fine for the small rates used here.
        limit, k, p = math.exp(-lam), 0, 1.0
        while True:
            p *= self.rng.random()
            if p <= limit:
                return k
            k += 1

    def session(self, project, start):
        session_id = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        self.totals["sessions"] += 1
        clock = start
        used_ids = set()
        for phase in PHASES:
            if self.rng.random() >= PHASE_PROBABILITY[phase]:
                continue
            clock = self.phase(project, session_id, phase, clock, used_ids)
            clock += timedelta(minutes=self.rng.uniform(1, 6))
        return clock

    def _finding_id(self, question, used):
        while True:
            area = self.rng.choice(AREAS)
            fid = f"{question.topic}-{area}-{self.rng.getrandbits(24):06x}"
            if fid not in used:
                used.add(fid)
                return fid, area

    def _factors(self, q):
        z = self.rng.gauss(0.0, 1.0)
        severity = _level(0.8 * z + q.sev_bias + self.rng.gauss(0.0, 0.6), -0.45, 0.75)
        if q.door_type == "one-way":
            irreversibility = 2
        else:
            irreversibility = _level(0.5 * z + q.irr_bias + self.rng.gauss(0.0, 0.7), -0.1, 1.0)
        decision_matters = _level(0.35 * z + q.care + self.rng.gauss(0.0, 0.6), -0.35, 0.65)
        return severity, irreversibility, decision_matters

    def _overrides(self, q, f):
        p = _sigmoid(-3.4 + 1.05 * f["decision_matters"] + 0.45 * q.care + 0.2 * f["severity"])
        return self.rng.random() < p

    def phase(self, project, session_id, phase, clock, used_ids):
        pool = self.pools[phase]
        items = []
        for _ in range(self.rng.randint(*FINDINGS_PER_PHASE)):
            q = self.rng.choices(pool, weights=_weights(pool))[0]
            items.append(self._finding(q, "finding", used_ids))
        if self.rng.random() < GATE_PROBABILITY and GATE_QUESTIONS[phase] in self.questions:
            items.append(self._finding(self.questions[GATE_QUESTIONS[phase]], "approval", used_ids))
        if (
            phase == "eng"
            and self.rng.random() < MIGRATION_PROBABILITY
            and MIGRATION_QUESTION in self.questions
        ):
            items.append(self._finding(self.questions[MIGRATION_QUESTION], "migration", used_ids))

        self._decide(items)
        # Surfaced items are asked one at a time; the silent ones are logged together
        # when the phase's Silent Decisions block is shown.
        for f in items:
            if f["disposition"] == "surfaced":
                clock += timedelta(seconds=self.rng.uniform(40, 240))
                f["ts"] = clock
        clock += timedelta(seconds=self.rng.uniform(20, 90))
        for f in items:
            if f["disposition"] == "silent":
                f["ts"] = clock
        for f in items:
            self._record(project, session_id, phase, f)
        return clock

    def _finding(self, q, kind, used_ids):
        fid, area = self._finding_id(q, used_ids)
        severity, irreversibility, decision_matters = self._factors(q)
        return {
            "q": q,
            "kind": kind,
            "finding_id": fid,
            "summary": f"{q.phrase} {area.replace('-', ' ')}",
            "severity": severity,
            "irreversibility": irreversibility,
            "decision_matters": decision_matters,
            "door_type": q.door_type,
        }

    def _decide(self, items):
        ranked = []
        for f in items:
            f["score"] = scoring.score(f)
            if f["door_type"] == "one-way":
                f["disposition"], f["reason"] = "surfaced", "one-way"
            elif f["kind"] != "finding":
                f["disposition"], f["reason"] = "surfaced", "gate"
            elif scoring.reaches_threshold(f["score"], f["finding_id"], UNCALIBRATED_THRESHOLD):
                ranked.append(f)
            else:
                f["disposition"], f["reason"] = "silent", None
        ranked.sort(
            key=lambda f: (-f["score"], -f["irreversibility"], -f["severity"], f["finding_id"])
        )
        for i, f in enumerate(ranked):
            if i < RANK_CAP_PER_PHASE:
                f["disposition"], f["reason"] = "surfaced", "rank"
            else:
                f["disposition"], f["reason"] = "silent", None

    def _event(self, project, session_id, phase, f, source, choice, ts, tool_use_id):
        q = f["q"]
        recommended = q.options[0]
        record = {
            "skill": q.skill,
            "question_id": q.id,
            "question_summary": f["summary"],
            "category": q.category,
            "door_type": q.door_type,
            "options_count": len(q.options),
            "user_choice": choice,
            "recommended": recommended,
            "session_id": session_id,
        }
        if tool_use_id:
            record["tool_use_id"] = tool_use_id
        record.update(
            {
                "phase": phase,
                "finding_id": f["finding_id"],
                "source": source,
                "followed_recommendation": choice == recommended,
                "ts": _iso(ts),
            }
        )
        event_key = _key("question_log", project, record)
        self.events.append(
            (
                event_key,
                project,
                record["ts"],
                q.skill,
                q.id,
                f["summary"],
                q.category,
                q.door_type,
                len(q.options),
                choice,
                recommended,
                int(choice == recommended),
                session_id,
                source,
                tool_use_id,
                phase,
                q.door_type,
                "registry",
                _canonical({"finding_id": f["finding_id"], "kind": f["kind"]}),
                json.dumps(record, separators=(",", ":"), ensure_ascii=False),
                self.origin,
                record["ts"],
            )
        )
        self.totals["question_log"] += 1
        return event_key

    def _record(self, project, session_id, phase, f):
        q = f["q"]
        recommended = q.options[0]
        overrides = self._overrides(q, f)
        other = self.rng.choice(q.options[1:])
        flipped_at = None
        if f["disposition"] == "surfaced":
            choice = other if overrides else recommended
            tool_use_id = f"toolu_sim{self.rng.getrandbits(64):016x}"
            answer = self._event(
                project, session_id, phase, f, "agent", choice, f["ts"], tool_use_id
            )
            disposition, reason = "surfaced", f["reason"]
        else:
            choice = recommended
            answer = self._event(
                project, session_id, phase, f, "auto-decided", choice, f["ts"], None
            )
            disposition, reason = "silent", None
            if overrides and self.rng.random() < FLIP_PROBABILITY:
                flip_ts = f["ts"] + timedelta(minutes=self.rng.uniform(3, 90))
                choice = other
                answer = self._event(project, session_id, phase, f, "flip", choice, flip_ts, None)
                disposition, reason, flipped_at = "surfaced", "flip", _iso(flip_ts)
        if disposition == "silent":
            self.totals["silent"] += 1
        else:
            self.totals["surfaced"][reason] += 1
        created = _iso(f["ts"])
        self.findings.append(
            (
                project,
                session_id,
                session_id,
                phase,
                f["finding_id"],
                f["summary"],
                f["severity"],
                f["irreversibility"],
                f["decision_matters"],
                f["door_type"],
                "registry",
                f["kind"],
                recommended,
                json.dumps(q.options),
                f["score"],
                UNCALIBRATED_THRESHOLD,
                disposition,
                reason,
                choice,
                answer,
                flipped_at,
                created,
                flipped_at or created,
            )
        )
        self.totals["findings"] += 1

    def preference(self, project, day):
        """The developer occasionally tunes a question through /plan-tune."""
        q = self.rng.choice(sorted(self.questions.values(), key=lambda q: q.id))
        if q.door_type == "one-way":
            value = "always-ask"
        elif q.care > 0.4:
            value = "always-ask"
        elif q.care < -0.4:
            value = "never-ask"
        else:
            value = "ask-only-for-one-way"
        scope = db.GLOBAL_SCOPE if self.rng.random() < 0.25 else project
        ts = _iso(
            datetime.combine(day, time(0, 0), timezone.utc)
            + timedelta(hours=self.rng.uniform(9, 18))
        )
        self.prefs.append((scope, q.id, value, value, "plan-tune", 1, ts))
        extra = _canonical({})
        self.pref_events.append(
            (
                _key("preference_events", scope, q.id, value, ts),
                scope,
                ts,
                "preference-set",
                q.id,
                value,
                "plan-tune",
                extra,
                self.origin,
            )
        )

    # ------------------------------------------------------------------ writing

    def flush(self, conn):
        """Write the collected rows in one transaction; returns how many were new.

        Counts come from each statement's own rowcount: the analysis rollups' triggers
        make more changes per row, which the connection's total change count includes.
        """
        written = {"question_log": 0, "findings": 0, "preferences": 0, "declared_profile": 0}
        developer = identity.developer()
        with db.transaction(conn):
            written["question_log"] = conn.executemany(
                "INSERT OR IGNORE INTO question_log (event_key, project, ts, skill, question_id,"
                " question_summary, category, door_type, options_count, user_choice, recommended,"
                " followed_recommendation, session_id, source, tool_use_id, phase, door_class, door_reason,"
                " extra_json, raw_json, ingested_from, recorded_at, synthetic, developer)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)",
                [row + (developer,) for row in self.events],
            ).rowcount
            written["findings"] = conn.executemany(
                "INSERT OR IGNORE INTO findings (project, session_id, chain_id, phase, finding_id, summary,"
                " severity, irreversibility, decision_matters, door_type, door_reason, kind, recommended,"
                " options_json, score, threshold, disposition, surface_reason, choice, answer_event_id,"
                " flipped_at, created_at, updated_at, synthetic, developer)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                " (SELECT id FROM question_log WHERE event_key = ?), ?, ?, ?, 1, ?)",
                [row + (developer,) for row in self.findings],
            ).rowcount
            # A real preference or declared value always wins over a simulated one.
            written["preferences"] = conn.executemany(
                "INSERT INTO preferences (scope, question_id, preference, raw_value, source,"
                " synthetic, updated_at, developer) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (scope, question_id) DO UPDATE SET preference = excluded.preference,"
                " raw_value = excluded.raw_value, updated_at = excluded.updated_at"
                " WHERE preferences.synthetic = 1 AND excluded.updated_at > preferences.updated_at",
                [row + (developer,) for row in self.prefs],
            ).rowcount
            conn.executemany(
                "INSERT OR IGNORE INTO preference_events (event_key, scope, ts, event_type, question_id,"
                " preference, source, extra_json, ingested_from, synthetic, developer)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)",
                [row + (developer,) for row in self.pref_events],
            )
            written["declared_profile"] = conn.executemany(
                "INSERT OR IGNORE INTO declared_profile (scope, dimension, value, source, synthetic, declared_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                self.declared,
            ).rowcount
        self.reset_rows()
        return written


def clear_synthetic(conn):
    """Delete every simulated row (never a real one). Returns rows deleted per table."""
    deleted = {}
    with db.transaction(conn):
        # findings point at question_log rows, so they go first.
        for table in (
            "findings",
            "question_log",
            "preference_events",
            "preferences",
            "declared_profile",
        ):
            deleted[table] = conn.execute(f"DELETE FROM {table} WHERE synthetic = 1").rowcount
    return deleted


def parse_end(value):
    """``YYYY-MM-DD`` → date; ``None`` → today (UTC)."""
    if value is None:
        return datetime.now(timezone.utc).date()
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise SimulationError(f"--end must be a date like 2026-01-31, got {value!r}") from None


def simulate(
    conn, days=90, seed=0, projects=3, end=None, replace=False, progress=None, flush_every=5000
):
    """Write a synthetic history of ``days`` days ending on ``end`` into ``conn``.

    ``progress(done_days)`` is called after each simulated day. Returns a summary dict.
    Rows are written in transactions of about ``flush_every`` findings; rerunning the same
    settings writes nothing new.
    """
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_DAYS:
        raise SimulationError(f"--days must be a whole number between 1 and {MAX_DAYS}")
    if (
        isinstance(projects, bool)
        or not isinstance(projects, int)
        or not 1 <= projects <= len(PROJECT_NAMES)
    ):
        raise SimulationError(
            f"--projects must be a whole number between 1 and {len(PROJECT_NAMES)}"
        )
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise SimulationError("--seed must be a whole number")
    end = parse_end(end)
    sim = Simulation(conn, seed, days, projects, end)
    cleared = clear_synthetic(conn) if replace else {}
    written = {"question_log": 0, "findings": 0, "preferences": 0, "declared_profile": 0}

    def flush():
        for k, v in sim.flush(conn).items():
            written[k] += v

    sim.declare_profile()
    for i in range(days):
        sim.day(i)
        if len(sim.findings) >= flush_every:
            flush()
        if progress:
            progress(i + 1)
    flush()
    return {
        "seed": seed,
        "days": days,
        "start": sim.start.isoformat(),
        "end": end.isoformat(),
        "projects": [p["slug"] for p in sim.projects],
        "sessions": sim.totals["sessions"],
        "findings": sim.totals["findings"],
        "question_log": sim.totals["question_log"],
        "surfaced": sim.totals["surfaced"],
        "silent": sim.totals["silent"],
        "written": written,
        "cleared": cleared,
    }
