"""How a finding is scored and whether its score surfaces it (shared by pacing and calibration).

A calibration row names a score function and a threshold. Scores are small integers
(or weighted sums of them), so many findings tie at the threshold: a finding exactly at
the threshold surfaces when a stable hash of its id falls under the calibration's tie
fraction. That makes the surfaced share hit a target rate deterministically, the same
way in `pacing rank`, in `plantune calibrate` and in the notebooks.

Standard library only: `pacing rank` runs on the hot path.
"""

from toolkit.store.digest import sha1 as _sha1

DEFAULT_SCORE_FUNCTION = "additive"
DEFAULT_THRESHOLD = 4.0
DEFAULT_TIE_FRACTION = 1.0  # the uncalibrated rule is "score >= 4": every tie surfaces
FACTORS = ("severity", "irreversibility", "decision_matters")
# Scores are compared after rounding so that weighted sums computed in numpy and in
# Python agree on which findings sit exactly at the threshold.
SCORE_DECIMALS = 9


def score(finding, function=DEFAULT_SCORE_FUNCTION, weights=None):
    """Score one finding (a mapping with severity, irreversibility, decision_matters 0-2)."""
    if function == "additive":
        value = sum(finding[f] for f in FACTORS)
    elif function == "weighted":
        weights = weights or {}
        value = sum(float(weights.get(f, 1.0)) * finding[f] for f in FACTORS)
    else:
        raise ValueError(f"unknown score function {function!r} (expected additive or weighted)")
    return round(float(value), SCORE_DECIMALS)


def tie_hash(finding_id):
    """A stable number in [0, 1) derived from a finding id (sha1, first 32 bits)."""
    digest = _sha1(str(finding_id).encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") / 2**32


def reaches_threshold(
    value, finding_id, threshold=DEFAULT_THRESHOLD, tie_fraction=DEFAULT_TIE_FRACTION
):
    """True when a two-way finding with this score is eligible to surface."""
    value = round(float(value), SCORE_DECIMALS)
    threshold = round(float(threshold), SCORE_DECIMALS)
    if value > threshold:
        return True
    if value < threshold:
        return False
    return tie_hash(finding_id) < tie_fraction
