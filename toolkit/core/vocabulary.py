"""The shared words of plantune: phases, door types, categories, preferences, id rules, limits.

Every module that validates, records or reports uses these names from here, so a phase or
a limit cannot mean one thing in the question log and another in pacing. Most are gstack's
(its question-log and preference scripts define them); the phases are plantune's.

Hot path: plain constants and a few string checks; nothing imported when it loads
(``source_refusal`` takes the JS formatting only when asked).
"""

# Review phases, in chain order. A simulated history has the four review phases; a pacing
# finding may also be "other"; a logged question whose phase is not known is "unknown".
REVIEW_PHASES = ("ceo", "design", "eng", "dx")
FINDING_PHASES = REVIEW_PHASES + ("other",)
PHASES = FINDING_PHASES + ("unknown",)

# One-way doors are never decided without the user; two-way doors may be.
DOOR_TYPES = ("one-way", "two-way")

# gstack's question categories (question-log events and registry entries).
CATEGORIES = ("approval", "clarification", "routing", "cherry-pick", "feedback-loop")

# Question preferences, and the ones that let an agent skip asking.
PREFERENCES = ("always-ask", "never-ask", "ask-only-for-one-way")
SILENCING_PREFERENCES = ("never-ask", "ask-only-for-one-way")
# The only sources allowed to write a preference: the user, directly (/plan-tune itself, or
# a `tune:` reply the user typed in chat). Anything an agent read (tool output, files, PR
# text) is refused with exit 2, the defence against profile poisoning.
USER_PREFERENCE_SOURCES = ("plan-tune", "inline-user")


def source_refusal(source):
    """The user-origin gate: only the user may tune their own questions. ``(message,
    exit code)`` when ``source`` is not theirs (1 when missing, 2 for any other source),
    else None. Preference writes and allows both ask it."""
    from toolkit.core.jscompat import is_falsy, value_string

    if is_falsy(source):
        return "source field required (one of: plan-tune, inline-user)", 1
    if source not in USER_PREFERENCE_SOURCES:
        return (
            f'rejected — source "{value_string(source)}" is not user-originated'
            " (profile poisoning defense)",
            2,
        )
    return None


# The five dimensions of a developer profile (gstack's psychographic signals).
DIMENSIONS = (
    "scope_appetite",
    "risk_tolerance",
    "detail_preference",
    "autonomy",
    "architecture_care",
)

# Pacing findings: approval and migration gates never count against a budget.
FINDING_KINDS = ("finding", "approval", "migration")
GATE_KINDS = ("approval", "migration")

# The registry's one-time prompts ("meta-prompts": asked once per install or upgrade, about
# gstack itself rather than the work): every preamble-* question, the inline upgrade and
# plan-tune's setup. A finding standing for one is a migration gate, and plan-tune's
# confirmation of a profile change is a mutation (approval) gate, whatever kind the agent
# sent; the first-run report counts meta-prompts asked before the first real question.
META_PROMPT_PREFIX = "preamble-"
META_PROMPT_IDS = ("gstack-upgrade-inline", "plan-tune-enable-setup")
MUTATION_GATE_IDS = ("plan-tune-confirm-mutation",)

# Limits gstack's scripts enforce on question events and preferences.
QUESTION_ID_MAX = 64
SESSION_ID_MAX = 64
FREE_TEXT_MAX = 300
OPTIONS_MAX = 26

# gstack's id rule for question ids and skills: lowercase letters, digits and hyphens.
KEBAB_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789-"


def is_kebab(s) -> bool:
    """True for a non-empty string of ``[a-z0-9-]`` only (gstack's id and skill shape)."""
    return isinstance(s, str) and s != "" and not s.strip(KEBAB_CHARS)


def is_meta_prompt(question_id) -> bool:
    """True for one of the registry's one-time prompts (see ``META_PROMPT_IDS``)."""
    return isinstance(question_id, str) and (
        question_id.startswith(META_PROMPT_PREFIX) or question_id in META_PROMPT_IDS
    )


def gate_kind(question_id, kind="finding"):
    """The kind a finding is ranked as: a meta-prompt is a migration gate and a mutation
    confirmation an approval gate, whatever ``kind`` it was sent with."""
    if kind == "finding":
        if is_meta_prompt(question_id):
            return "migration"
        if question_id in MUTATION_GATE_IDS:
            return "approval"
    return kind


def plural(n, noun, nouns=None) -> str:
    """``1 session``, ``2 sessions``, ``1,024 rows``: a count and its noun, agreed.

    ``nouns`` is the plural when it is not ``noun + "s"`` (``entry``/``entries``).
    """
    return f"{n:,} {noun if n == 1 else (nouns or noun + 's')}"
