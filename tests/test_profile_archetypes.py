"""Archetypes for --vibe (what gstack's tests pin about scripts/archetypes.ts)."""

import pytest

from toolkit.core import archetypes


def test_names_unique_centres_in_range_tightness_positive():
    names = [a[0] for a in archetypes.ARCHETYPES]
    assert len(names) == len(set(names)) == 8
    for name, centre, tightness, description in archetypes.ARCHETYPES:
        assert len(centre) == 5 and all(0 <= x <= 1 for x in centre), name
        assert tightness > 0 and description.strip()


def test_name_list_is_archetypes_plus_polymath():
    assert archetypes.NAMES == tuple(a[0] for a in archetypes.ARCHETYPES) + ("Polymath",)
    assert set(archetypes.NAMES) == {
        "Cathedral Builder",
        "Ship-It Pragmatist",
        "Deep Craft",
        "Taste Maker",
        "Solo Operator",
        "Consultant",
        "Wedge Hunter",
        "Builder-Coach",
        "Polymath",
    }


@pytest.mark.parametrize(
    "vector,name",
    [
        ((0.5, 0.5, 0.5, 0.5, 0.5), "Builder-Coach"),
        ((0.88, 0.55, 0.5, 0.5, 0.85), "Cathedral Builder"),
        ((0.22, 0.78, 0.25, 0.7, 0.38), "Ship-It Pragmatist"),
        ((0.05, 0.95, 0.95, 0.05, 0.05), "Polymath"),
    ],
)
def test_upstream_vectors(vector, name):
    assert archetypes.classify(vector)[0] == name


def test_every_centre_classifies_as_itself():
    for name, centre, _, description in archetypes.ARCHETYPES:
        assert archetypes.classify(centre) == (name, description)


def test_dict_input_and_cutoff():
    values = {
        "scope_appetite": 0.5,
        "risk_tolerance": 0.5,
        "detail_preference": 0.5,
        "autonomy": 0.5,
        "architecture_care": 0.5,
    }
    assert archetypes.classify(values)[0] == "Builder-Coach"
    nearest = archetypes.scores((1, 0, 1, 0, 1))[0][1]
    assert nearest > archetypes.MAX_DISTANCE
    assert archetypes.classify((1, 0, 1, 0, 1))[0] == "Polymath"
