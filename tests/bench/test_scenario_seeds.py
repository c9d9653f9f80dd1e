"""The scenarios' seed data (``hpcgym/bench/scenario_seeds.json``): drawn by its rules, checked.

Every fresh seed list is drawn again by the rule the file records (``fresh_seeds`` with its
``n_seeds``, ``first`` and exclusions) and compared; the played set is what was played; the
scenarios play exactly these lists; a malformed file is refused.
"""

from __future__ import annotations

import copy
import json
from importlib import resources
from typing import Any

import pytest

from hpcgym.bench import scenario_seeds, scenarios
from hpcgym.envs.registration import PRESETS
from hpcgym.errors import SpecError


def raw() -> dict[str, Any]:
    text = resources.files("hpcgym.bench").joinpath(scenario_seeds.FILE).read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def excluded(names: tuple[str, ...]) -> set[int]:
    """The generator seeds that lists naming ``names`` in ``exclude`` must not draw."""
    out: set[int] = set()
    for name in names:
        if name in raw()["played"]:
            out |= scenario_seeds.played(name)
        else:
            other = scenario_seeds.fresh(name)
            out |= {scenarios.drawn_seed(s, other.n_seeds) for s in other.seeds}
    return out


@pytest.mark.parametrize("name", scenario_seeds.fresh_names())
def test_fresh_list_is_its_rule_drawn_again(name: str) -> None:
    lst = scenario_seeds.fresh(name)
    again = scenarios.fresh_seeds(
        len(lst.seeds), lst.n_seeds, first=lst.first, exclude=tuple(excluded(lst.exclude))
    )
    assert lst.seeds == again
    for scenario in lst.scenarios:
        assert scenarios.get(scenario).seeds == lst.seeds


def test_played_set_is_what_was_played() -> None:
    # studies/probes/fresh_lublin.py's 60 traces and rlsched-synlublin(-bf)-test-v0's draws
    test_v0 = scenarios.get("rlsched-synlublin-test-v0").seeds
    assert test_v0 == tuple(range(1000, 1060))
    assert scenarios.synlublin_seen() == {
        *range(1_000_000, 1_000_060),
        *(scenarios.drawn_seed(s, scenarios.SYNLUBLIN_SEEDS) for s in test_v0),
    }


def test_lists_match_the_presets_and_each_other() -> None:
    for name, env_id in (
        ("shared-dfrs-v1", "hpcgym/Shared-v1"),
        ("multicluster-koala-v1", "hpcgym/MultiCluster-v1"),
    ):
        assert scenario_seeds.fresh(name).n_seeds == PRESETS[env_id]["n_seeds"]
    v0, v1 = (scenario_seeds.fresh(f"evolving-klein-large-v{v}") for v in (0, 1))
    assert v1.first == v0.seeds[-1] + 1  # version 1's seeds continue after version 0's
    for name, table in (
        ("rlsched-lublin-v0", "rlsched-lublin"),
        ("rlsched-lublin-test-v0", "rlsched-lublin-test"),
        ("rlsched-sdsc-sp2-v0", "rlsched-sdsc-sp2-test"),
        ("rlsched-hpc2n-bf-v0", "rlsched-hpc2n"),
    ):
        sc = scenarios.get(name)
        assert sc.env_kwargs["window_starts"] == scenario_seeds.starts(table)
        assert sc.seeds == scenarios.seeds_for_starts(scenario_seeds.starts(table))


def broken(edit: Any) -> dict[str, Any]:
    data = copy.deepcopy(raw())
    edit(data)
    return data


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(format=2), "format 2"),
        (lambda d: d["window_starts"]["rlsched-lublin"].update(starts=[]), "non-empty list"),
        (lambda d: d["window_starts"]["rlsched-lublin"].update(starts=[1, 1]), "twice"),
        (lambda d: d["fresh"]["synlublin-large"].update(seeds=[5, -1]), "not an integer"),
        (lambda d: d["fresh"]["synlublin-large"].update(seeds=[True]), "not an integer"),
        (lambda d: d["fresh"]["synlublin-large"].update(first=10**9), "before 'first'"),
        (lambda d: d["fresh"]["synlublin-large"].update(exclude=["nothing"]), "'nothing'"),
        (lambda d: d["fresh"]["synlublin-large"].update(scenarios="x"), "list of names"),
        (lambda d: d.pop("played"), "'played' must map"),
    ],
)
def test_malformed_data_is_refused(edit: Any, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        scenario_seeds.parse(broken(edit))


def test_unknown_names_are_refused() -> None:
    with pytest.raises(SpecError, match=r"no fresh seed list 'x'.*synlublin-large"):
        scenario_seeds.fresh("x")
    with pytest.raises(SpecError, match="no window starts 'x'"):
        scenario_seeds.starts("x")
