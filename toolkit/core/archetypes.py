"""Builder archetypes for ``--vibe``: a name and a short portrait for a profile.

Each archetype is a centre in the five profile dimensions (scope_appetite,
risk_tolerance, detail_preference, autonomy, architecture_care) and a tightness. A
profile belongs to the archetype with the smallest Euclidean distance divided by that
archetype's tightness, provided the scaled distance is at most 0.55; anything further
from every centre is a Polymath. The centres and portraits are plantune's own; only the
names, the rule and the test vectors come from gstack.
"""

import math

from toolkit.core.vocabulary import DIMENSIONS

MAX_DISTANCE = 0.55
POLYMATH = "Polymath"
POLYMATH_DESCRIPTION = (
    "Your answers do not cluster around one style: you switch approach with the problem "
    "in front of you."
)

# name, centre (dimension order), tightness, description
ARCHETYPES = (
    (
        "Cathedral Builder",
        (0.85, 0.45, 0.60, 0.50, 0.85),
        1.0,
        "You aim big and build it to last: ambitious scope, and the structure done right.",
    ),
    (
        "Ship-It Pragmatist",
        (0.25, 0.80, 0.30, 0.65, 0.35),
        1.0,
        "Small slices, shipped today; you accept rough edges to keep moving.",
    ),
    (
        "Deep Craft",
        (0.30, 0.30, 0.80, 0.40, 0.85),
        1.0,
        "Narrow and meticulous: you would rather do less and do it properly.",
    ),
    (
        "Taste Maker",
        (0.60, 0.45, 0.85, 0.20, 0.55),
        1.0,
        "You care how it looks and reads, and you want a say in the details.",
    ),
    (
        "Solo Operator",
        (0.50, 0.70, 0.20, 0.90, 0.45),
        1.0,
        "Hand it over and get out of the way: you delegate and want short updates.",
    ),
    (
        "Consultant",
        (0.55, 0.20, 0.70, 0.30, 0.60),
        1.0,
        "Careful and explained: you weigh options and want to be asked before changes.",
    ),
    (
        "Wedge Hunter",
        (0.10, 0.65, 0.40, 0.45, 0.30),
        1.0,
        "You look for the smallest thing that proves the idea, and cut everything else.",
    ),
    (
        "Builder-Coach",
        (0.50, 0.50, 0.50, 0.50, 0.50),
        0.8,
        "Balanced on every axis: you steer case by case and let the work decide.",
    ),
)

NAMES = tuple(a[0] for a in ARCHETYPES) + (POLYMATH,)


def _vector(values):
    if isinstance(values, dict):
        return tuple(float(values.get(d, 0.5)) for d in DIMENSIONS)
    return tuple(float(v) for v in values)


def scores(values):
    """``[(name, scaled distance)]`` nearest first."""
    v = _vector(values)
    out = [(name, math.dist(v, centre) / tightness) for name, centre, tightness, _ in ARCHETYPES]
    return sorted(out, key=lambda x: x[1])


def classify(values):
    """``(name, description)`` for a profile given as a dict or a 5-tuple."""
    name, distance = scores(values)[0]
    if distance > MAX_DISTANCE:
        return POLYMATH, POLYMATH_DESCRIPTION
    return name, next(a[3] for a in ARCHETYPES if a[0] == name)
