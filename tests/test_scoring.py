import pytest

from toolkit.core import scoring


def f(s, i, d):
    return {"severity": s, "irreversibility": i, "decision_matters": d}


def test_additive_score_is_the_sum():
    assert scoring.score(f(2, 1, 1)) == 4.0


def test_weighted_score_uses_weights_and_defaults_missing_to_one():
    assert scoring.score(f(2, 1, 1), "weighted", {"severity": 0.5, "irreversibility": 2}) == 4.0


def test_unknown_function_is_refused():
    with pytest.raises(ValueError, match="unknown score function"):
        scoring.score(f(0, 0, 0), "product")


def test_above_and_below_threshold_ignore_the_tie_rule():
    assert scoring.reaches_threshold(5, "x", 4, tie_fraction=0.0)
    assert not scoring.reaches_threshold(3, "x", 4, tie_fraction=1.0)


def test_ties_surface_by_stable_hash_under_the_fraction():
    ids = [f"finding-{i}" for i in range(4000)]
    share = sum(scoring.reaches_threshold(4, i, 4, 0.25) for i in ids) / len(ids)
    assert abs(share - 0.25) < 0.03
    # deterministic: the same id always gets the same answer
    assert [scoring.reaches_threshold(4, i, 4, 0.25) for i in ids[:50]] == [
        scoring.reaches_threshold(4, i, 4, 0.25) for i in ids[:50]
    ]
    assert all(scoring.reaches_threshold(4, i, 4, 1.0) for i in ids[:50])
    assert not any(scoring.reaches_threshold(4, i, 4, 0.0) for i in ids[:50])


def test_tie_hash_in_unit_interval():
    assert all(0 <= scoring.tie_hash(i) < 1 for i in range(1000))
