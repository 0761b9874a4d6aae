"""bench/gap9_subbyte.py (table 14): the greedy choice of weight bits by predicted cycles per
added noise keeps within its budget, takes one width per layer and never a step that saves
nothing; the whole search on the digits CNN holds its quality floor with sub-byte weights and a
lower gap9 prediction than 8-bit; the table's columns."""

from __future__ import annotations

import pytest

from bench import gap9_subbyte as gs
from bench.gap9_subbyte import Step, choose


def test_choose_respects_budget_one_width_per_layer():
    steps = [Step("a", 4, 100.0, 0.5), Step("a", 2, 180.0, 2.0), Step("b", 6, 50.0, 0.1),
             Step("c", 4, 0.0, 0.0), Step("d", 5, -10.0, 0.0), Step("e", 7, 5.0, -0.01)]
    got = choose(steps, budget=0.7)
    layers = [s.layer for s in got]
    assert len(layers) == len(set(layers))
    assert sum(max(s.added_noise, 0.0) for s in got) <= 0.7
    assert {s.layer for s in got} == {"a", "b", "e"}          # c, d save nothing
    assert next(s for s in got if s.layer == "a").bits == 4    # 2 bits alone is over budget
    # a wider budget lets a layer's narrower width replace its wider one
    assert next(s for s in choose(steps, budget=2.2) if s.layer == "a").bits == 2
    assert choose(steps, budget=0.0) == [Step("e", 7, 5.0, -0.01)]


def test_table_columns_and_bits_cell():
    assert gs.COLUMNS[1].startswith("weight bits per layer")
    assert any("GreenWaves" in c for c in gs.COLUMNS) and any("8-bit" in c for c in gs.COLUMNS)
    assert gs.bits_cell({"op0": 8, "op1": 6, "op2": 6}) == "8·6·6 (1×8, 2×6)"


@pytest.fixture(scope="module")
def digits_search(digits_trained):
    data, fm, _ = digits_trained
    base = gs.Search("digits", fm, data.x_train[:200], data.x_eval[:200], 0.0)
    # the floor: 1.5 dB under the 8-bit network's SQNR, leaving room for a few narrowed layers
    floor = base.method_sqnr[base.method] - 1.5
    return gs.Search("digits", fm, data.x_train[:200], data.x_eval[:200], floor)


def test_search_holds_the_floor_on_digits(digits_search):
    r = gs.search(digits_search)
    assert r["sqnr_db"] >= digits_search.floor_db
    assert set(r["bits"]) == {"conv0", "conv1", "fc"}
    assert min(r["bits"].values()) < 8                 # something was narrowed
    assert r["cycles"] < r["cycles_8bit"]
    assert r["blocks"]["ne16"] > 0
    assert r["weight_bytes"] < r["int8_weight_bytes"]
