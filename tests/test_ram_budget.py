"""--ram-budget (issue 30): the fastest schedule within a RAM budget (pipeline.py: fused chains only
where the budget needs them), its refusal when no schedule reaches it (one sentence, exit 2), and
explore's RAM × cycles front (explore/pareto.py `pareto_ram`, pareto_ram.png). vww on stm32h7: the
unfused plan and the plan with its expand 1x1 fused into the stride-2 depthwise (schedule/chain.py)
are the two ends."""

from __future__ import annotations

import json

import pytest

from tilewise.cli import main
from tilewise.errors import TilewiseError
from tilewise.explore import explore
from tilewise.frontend import load_model
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target

from .conftest import mlperf_path


@pytest.fixture(scope="module")
def vww():
    return lower(load_model(mlperf_path("vww_mobilenet_v1_025")))


@pytest.fixture(scope="module")
def ends(vww):
    """The schedules without a budget (least RAM) and without chains (fewest cycles)."""
    t = get_target("stm32h7")
    return schedule_network(vww, t), schedule_network(vww, t, chains=False)


def test_the_ends_trade_ram_for_cycles(ends):
    least, fastest = ends
    assert least.chains and not fastest.chains
    assert least.ram_bytes < fastest.ram_bytes and least.cycles > fastest.cycles


def test_a_budget_takes_the_fastest_schedule_within_it(vww, ends):
    least, fastest = ends
    t = get_target("stm32h7")
    roomy = schedule_network(vww, t, ram_budget=fastest.ram_bytes)
    assert not roomy.chains and roomy.cycles == fastest.cycles
    tight = schedule_network(vww, t, ram_budget=fastest.ram_bytes - 1)
    assert tight.chains and tight.ram_bytes <= fastest.ram_bytes - 1
    assert tight.ram_bytes == least.ram_bytes      # vww has one chain: it is the least RAM


def test_a_budget_below_the_least_ram_is_refused(vww, ends):
    least, _ = ends
    with pytest.raises(TilewiseError, match=f"the least RAM tilewise finds is {least.ram_bytes:,} B"):
        schedule_network(vww, get_target("stm32h7"), ram_budget=least.ram_bytes - 1)


def test_cli_budget_exit_2_one_sentence(capsys):
    assert main(["analyze", str(mlperf_path("vww_mobilenet_v1_025")), "--target", "stm32h7",
                 "--ram-budget", "8"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tilewise: error: --ram-budget 8 kB cannot be met on stm32h7")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_analyze_json_follows_the_budget(capsys, ends):
    least, fastest = ends
    kb = fastest.ram_bytes / 1024
    assert main(["analyze", str(mlperf_path("vww_mobilenet_v1_025")), "--target", "stm32h7",
                 "--ram-budget", f"{kb:.3f}", "--json"]) == 0
    totals = json.loads(capsys.readouterr().out)["totals"]
    assert totals["ram_bytes"] == fastest.ram_bytes


def test_explore_draws_the_ram_cycles_front(tmp_path, ends):
    least, fastest = ends
    kb = (least.ram_bytes // 1024 + 1, fastest.ram_bytes // 1024 + 1, least.ram_bytes // 1024 - 1)
    r = explore([mlperf_path("vww_mobilenet_v1_025")], "stm32h7", tmp_path,
                ram_budget=",".join(map(str, kb)), workers=1, progress=False)
    rows = {row["ram_budget_kb"]: row for row in r.rows}
    assert rows[kb[0]]["ram_bytes"] == least.ram_bytes and rows[kb[0]]["pareto_ram"]
    assert rows[kb[1]]["ram_bytes"] == fastest.ram_bytes and rows[kb[1]]["pareto_ram"]
    assert rows[kb[1]]["cycles"] < rows[kb[0]]["cycles"]
    assert rows[kb[2]]["status"] == "refused" and "--ram-budget" in rows[kb[2]]["reason"]
    assert "pareto_ram.png" in r.plots and (tmp_path / "pareto_ram.png").stat().st_size > 0
    assert "pareto_ram" in (tmp_path / "points.csv").read_text().splitlines()[0]
