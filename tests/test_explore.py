"""`tilewise explore` (issue 14): the grid, per-point rows and refusals, the cache and resuming
after SIGINT, identity of a sweep run through a real Dask scheduler on localhost, Pareto fronts,
outputs, and the CLI's errors (one sentence, exit 2). Small grids: speed is measured in
bench/explore_studies.py, never asserted here."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tilewise.cli import main
from tilewise.errors import TilewiseError
from tilewise.explore import cache as cache_mod
from tilewise.explore import explore
from tilewise.explore.cache import Cache, code_files, point_key, tree_digest
from tilewise.explore.grid import build_grid, parse_list
from tilewise.explore.pareto import front

from .conftest import absent, mlperf_path

BIN = Path(sys.executable).parent


def _points(d: Path) -> list[dict]:
    return json.loads((d / "points.json").read_text())["points"]


# --- grid -------------------------------------------------------------------------------------

def test_parse_list_values_and_default():
    assert parse_list("--l1", "8, 16,32.5", float) == [8.0, 16.0, 32.5]
    assert parse_list("--l1", None, float) == [None]


@pytest.mark.parametrize("text", ["8,,16", "8,abc", "0", "-4", "8,8", ""])
def test_parse_list_refuses_bad_items(text):
    with pytest.raises(TilewiseError, match="--l1"):
        parse_list("--l1", text, float)


def test_grid_is_the_product_in_a_fixed_order():
    m = str(mlperf_path("ad_autoencoder"))
    g = build_grid([m], "gap8", l1="8,16,32", l2="256,512", tiler="model,dory",
                   modules="cluster+cpu,cpu")
    assert len(g) == 3 * 2 * 2 * 2
    assert [(p.tiler, p.modules, p.l2_kb, p.l1_kb) for p in g[:4]] == [
        ("model", ("cluster", "cpu"), 256.0, 8.0), ("model", ("cluster", "cpu"), 256.0, 16.0),
        ("model", ("cluster", "cpu"), 256.0, 32.0), ("model", ("cluster", "cpu"), 512.0, 8.0)]
    assert {p.cores for p in g} == {None} and len({point_key(p) for p in g}) == len(g)


# --- pareto -----------------------------------------------------------------------------------

def test_pareto_front_drops_dominated_points_and_keeps_ties():
    pairs = [(8, 10.0), (16, 6.0), (16, 7.0), (32, 6.0), (64, 3.0), (64, 3.0), (128, 4.0)]
    assert front(pairs) == [0, 1, 4, 5]


# --- rows, refusals, hypothetical chips --------------------------------------------------------

def test_refused_points_are_rows_with_their_reason(tmp_path):
    m = mlperf_path("ad_autoencoder")
    r = explore([m], "pulp-open", tmp_path, l1="8", l2="16,512", workers=1, progress=False)
    small, big = r.rows
    assert small["status"] == "refused" and "L2" in small["reason"] and small["latency_ms"] is None
    assert big["status"] == "ok" and big["latency_ms"] > 0 and big["reason"] == ""
    assert not small["pareto"] and big["pareto"]
    csv = (tmp_path / "points.csv").read_text().splitlines()
    assert len(csv) == 3 and "refused" in csv[1]
    assert "could not run" in (tmp_path / "index.html").read_text()


def test_rows_match_analyze_and_mark_hypothetical_chips(tmp_path, capsys):
    m = mlperf_path("kws_dscnn")
    r = explore([m], "gap8", tmp_path, l1="16,128", l2="416", tiler="dory", workers=1,
                progress=False)
    real, hyp = r.rows
    assert not real["hypothetical"] and hyp["hypothetical"] and "L1 128 kB" in hyp["beyond"]
    assert main(["analyze", str(m), "--target", "gap8", "--l1", "16", "--l2", "416",
                 "--tiler", "dory", "--json"]) == 0
    tot = json.loads(capsys.readouterr().out)["totals"]
    assert real["cycles"] == tot["cycles"] and real["peak_l2_bytes"] == tot["peak_l2_bytes"]
    assert real["mac_per_cycle"] == tot["mac_per_cycle"]
    # gap8 has an energy figure per cycle: energy is given, and grows with the cycles
    assert real["energy_uj"] > 0 and hyp["energy_uj"] <= real["energy_uj"]
    assert {"points.csv", "points.json", "index.html", "latency_vs_l1.png",
            "pareto_latency.png", "pareto_energy.png"} <= {p.name for p in tmp_path.iterdir()}


def test_weights_in_l2_and_l3_add_up_at_every_l2(tmp_path):
    """A layer whose weights the L3 tiler streams by output-channel tiles keeps all its channels'
    constants in L3 (NetworkSchedule.const_bytes of the whole layer, not of one L2 tile): L2 + L3
    is the network's constants at every L2 (it shrank with L2 when k tiles were counted)."""
    from tilewise.frontend import load_model
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.targets.registry import get_target

    m = mlperf_path("ad_autoencoder")
    ns = schedule_network(lower(load_model(m)), get_target("gap8", l2_kb=24), "model")
    assert any(t.w_tiled for t in ns.l3.tilings.values())
    total = sum(s.weight_bytes for s in ns.l3.steps)
    assert ns.weights_l2_bytes + ns.weights_l3_bytes == total
    r = explore([m], "gap8", tmp_path, l2="24,48,128,512", workers=1, progress=False)
    assert [row["weights_l2_bytes"] + row["weights_l3_bytes"] for row in r.rows] == [total] * 4
    assert r.rows[-1]["weights_l3_bytes"] == 0


def test_energy_is_unknown_without_figures(tmp_path):
    r = explore([mlperf_path("ad_autoencoder")], "stm32h7", tmp_path, l1="64", workers=1,
                progress=False)
    assert r.rows[0]["status"] == "ok" and r.rows[0]["energy_uj"] is None


# --- cache and resume --------------------------------------------------------------------------

def test_cache_resumes_only_missing_points(tmp_path):
    m = mlperf_path("ad_autoencoder")
    kw = dict(l1="4,8,16", l2="256", tiler="model,dory", progress=False)
    first = explore([m], "gap8", tmp_path, workers=2, **kw)
    assert (first.stats.cached, first.stats.computed) == (0, 6)
    cache = Cache(tmp_path)
    assert len(cache) == 6
    gone = [r["key"] for r in first.rows[1:3]]
    for k in gone:
        cache.path(k).unlink()
    again = explore([m], "gap8", tmp_path, workers=1, **kw)
    assert (again.stats.cached, again.stats.computed) == (4, 2)
    assert again.rows == first.rows
    assert not list(cache.dir.glob("*.tmp"))


def test_cached_rows_take_the_name_of_the_model_given(tmp_path):
    """The cache is keyed by the model's bytes: a renamed file, or a copy beside it, reads the rows
    another name wrote; each row is named after the file of this sweep, with its own Pareto."""
    src = mlperf_path("ad_autoencoder").read_bytes()
    x, out = tmp_path / "x.tflite", tmp_path / "o"
    x.write_bytes(src)
    kw = dict(l1="16", workers=1, progress=False)
    assert [r["model"] for r in explore([x], "gap8", out, **kw).rows] == ["x"]
    z = x.rename(tmp_path / "z.tflite")
    again = explore([z], "gap8", out, **kw)
    assert again.stats.cached == 1 and [r["model"] for r in again.rows] == ["z"]
    y = tmp_path / "y.tflite"
    y.write_bytes(src)
    both = explore([y, z], "gap8", out, **kw)
    assert both.stats.cached == 2
    assert [(r["model"], r["pareto"]) for r in both.rows] == [("y", True), ("z", True)]
    assert [r["model"] for r in _points(out)] == ["y", "z"]
    assert [line.split(",")[0] for line in (out / "points.csv").read_text().splitlines()[1:]] \
        == ["y", "z"]


def test_two_models_of_one_name_are_refused(tmp_path):
    m = mlperf_path("ad_autoencoder")
    (tmp_path / "b").mkdir()
    copy = tmp_path / "b" / m.name
    copy.write_bytes(m.read_bytes())
    with pytest.raises(TilewiseError, match="both named 'ad_autoencoder'"):
        build_grid([m, copy], "gap8")


def test_code_digest_covers_kernels_and_templates(tmp_path):
    """The key's code digest covers every file of the package a result depends on — C kernels,
    headers, jinja templates, linker scripts —, not bytecode."""
    root = tmp_path / "pkg"
    for rel, text in (("a.py", "x = 1\n"), ("k/tw.c", "int f;\n"), ("k/tw.h", "#define A\n"),
                      ("t/conv.c.j2", "{{ x }}\n"), ("fw/link.ld", "SECTIONS {}\n"),
                      ("__pycache__/a.cpython-311.pyc", "junk")):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    d0 = tree_digest(root)
    for rel in ("k/tw.c", "k/tw.h", "t/conv.c.j2", "fw/link.ld", "a.py"):
        f = root / rel
        old = f.read_text()
        f.write_text(old + "// changed\n")
        assert tree_digest(root) != d0, rel
        f.write_text(old)
    assert tree_digest(root) == d0
    (root / "__pycache__" / "a.cpython-311.pyc").write_text("other junk")
    assert tree_digest(root) == d0
    real = {f.suffix for f in code_files(Path(cache_mod.__file__).resolve().parent.parent)}
    assert {".py", ".c", ".h", ".j2", ".ld", ".S"} <= real and ".pyc" not in real


def test_point_key_follows_the_code_digest(monkeypatch):
    p = build_grid([mlperf_path("ad_autoencoder")], "gap8")[0]
    k = point_key(p)
    monkeypatch.setattr(cache_mod, "code_digest", lambda: "a kernel changed")
    assert point_key(p) != k


def test_sigint_then_rerun_resumes_from_the_cache(tmp_path):
    m = mlperf_path("vww_mobilenet_v1_025")
    l1 = ",".join(str(8 * k) for k in range(1, 13))  # 12 points of ~1 s each
    cmd = [str(BIN / "tilewise"), "explore", str(m), "--target", "gap8", "--l1", l1,
           "--workers", "1", "-o", str(tmp_path)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cache = tmp_path / "cache"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if cache.is_dir() and len(list(cache.glob("*.json"))) >= 2:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the sweep ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "resume" in err and "Traceback" not in err
    n = len(list(cache.glob("*.json")))
    assert 2 <= n < 12 and not list(cache.glob("*.tmp"))
    assert not (tmp_path / "points.json").exists()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"12 points ({n} from the cache, {12 - n} computed)" in done.stdout
    assert [r["status"] for r in _points(tmp_path)] == ["ok"] * 12


# --- Dask ----------------------------------------------------------------------------------------

@pytest.fixture
def dask_cluster(tmp_path):
    """A real Dask scheduler and 2 single-threaded worker processes on localhost."""
    sched_file = tmp_path / "scheduler.json"
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    procs = [subprocess.Popen([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port",
                               "0", "--no-dashboard", "--scheduler-file", str(sched_file)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)]
    try:
        deadline = time.monotonic() + 60
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sched_file.exists(), "the Dask scheduler did not start"
        procs.append(subprocess.Popen(
            [str(BIN / "dask"), "worker", "--scheduler-file", str(sched_file), "--nworkers", "2",
             "--nthreads", "1", "--no-dashboard"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, env=env, cwd=tmp_path))
        from distributed import Client

        address = json.loads(sched_file.read_text())["address"]
        with Client(address, timeout="30s") as c:
            c.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def test_dask_gives_identical_results(tmp_path, dask_cluster):
    models = [mlperf_path("ad_autoencoder"), mlperf_path("kws_dscnn")]
    kw = dict(l1="8,32", l2="256", tiler="model,dory", progress=False)
    local = explore(models, "gap8", tmp_path / "local", workers=2, **kw)
    assert main(["explore", *map(str, models), "--target", "gap8", "--l1", "8,32", "--l2", "256",
                 "--tiler", "model,dory", "--cluster", dask_cluster,
                 "-o", str(tmp_path / "dask")]) == 0
    a = sorted(_points(tmp_path / "local"), key=lambda r: r["key"])
    b = sorted(_points(tmp_path / "dask"), key=lambda r: r["key"])
    assert len(a) == 8 and a == b
    assert all(r["status"] == "ok" for r in local.rows)


# --- CLI errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("extra,needle", [
    (["--target", "gap8", "--l1", "8,,16"], "--l1"),
    (["--target", "gap8", "--l2", "lots"], "--l2"),
    (["--target", "gap8", "--tiler", "model,magic"], "'magic' is not a tiler; the tilers are "
                                                     "model, dory"),
    (["--target", "gap8", "--objective", "foo"],
     "--objective 'foo' is not one of latency, energy, edp"),
    (["--target", "gap8", "--workers", "two"], "--workers 'two' is not a whole number"),
    (["--target", "gap8", "--cores", "2.5"], "'2.5' is not a whole number of cores"),
    (["--target", "gap8", "--clock", "fast"], "'fast' is not a clock in MHz"),
    (["--target", "gap8", "--modules", "cluster++cpu"], "'cluster++cpu' is not a module set"),
    (["--target", "gap8", "--l1"], "--l1: expected one argument"),
    (["--target", "gap8", "--measure", "yes"], "unrecognized arguments: yes"),
    ([], "the following arguments are required: --target"),
    (["--target", "nosuchchip"], "unknown target 'nosuchchip'"),
    (["--target", "stm32h7", "--cores", "2,4"], "--cores"),
    (["--target", "gap8", "--modules", "cluster+warp"], "warp"),
    (["--target", "gap8", "--cluster", "localhost:8786"], "--cluster"),
    (["--target", "gap8", "--workers", "0"], "--workers"),
    (["--target", "stm32h7", "--objective", "energy"], "needs energy figures"),
])
def test_cli_errors_are_one_sentence_exit_2(tmp_path, capsys, extra, needle):
    m = mlperf_path("ad_autoencoder")
    assert main(["explore", str(m), *extra, "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("tilewise: error: ") and "usage:" not in err


def test_cli_missing_model_exit_2(tmp_path, capsys):
    assert main(["explore", str(tmp_path / "none.tflite"), "--target", "gap8",
                 "-o", str(tmp_path / "o")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_measure_without_a_runner_says_so(tmp_path):
    r = explore([mlperf_path("ad_autoencoder")], "gap8", tmp_path, l1="16", measure=True,
                workers=1, progress=False)
    row = r.rows[0]
    assert row["status"] == "ok" and "has no runner" in row["measure_note"]
    assert row.get("measured_cycles") is None


def test_measure_on_pulp_open_runs_gvsoc(tmp_path):
    """--measure on pulp-open: the point's firmware runs on GVSoC (found as validate finds it) —
    a measured cycle count near the prediction, bit-exact — and the measurement is cached."""
    from tilewise.examples import EXAMPLE_ONNX
    from tilewise.platforms.gvsoc import runner
    from tilewise.platforms.pulp_open import toolchain

    try:
        runner()
        toolchain()
    except TilewiseError as e:
        absent(str(e))
    kw = dict(l1="8", measure=True, workers=1, progress=False)
    r = explore([EXAMPLE_ONNX], "pulp-open", tmp_path, **kw)
    row = r.rows[0]
    assert row["status"] == "ok" and row["measure_note"] == "validate --on gvsoc", row
    assert row["bit_exact"] is True and isinstance(row["measured_cycles"], int)
    assert 0.5 < row["measured_cycles"] / row["cycles"] < 2
    again = explore([EXAMPLE_ONNX], "pulp-open", tmp_path, **kw)
    assert again.stats.cached == 1 and again.rows[0]["measured_cycles"] == row["measured_cycles"]
    assert str(row["measured_cycles"]) in (tmp_path / "points.csv").read_text()


def test_energy_objective_fronts_on_energy(tmp_path):
    r = explore([mlperf_path("ad_autoencoder")], "gap8", tmp_path, l1="8,32", objective="energy",
                workers=1, progress=False)
    assert all(row["status"] == "ok" and row["objective"] == "energy" for row in r.rows)
    best = min(r.rows, key=lambda row: row["energy_uj"])
    assert best["pareto"]
    assert json.loads((tmp_path / "points.json").read_text())["objective"] == "energy"


def test_memoized_schedules_give_the_same_network(monkeypatch):
    """explore tiles each point under schedule.api.memoized_schedules: same schedules, fewer
    tiler calls (DS-CNN repeats its depthwise-separable block)."""
    import tilewise.schedule.api as api
    from tilewise.frontend import load_model
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.targets.registry import get_target

    calls = []
    real = api._schedule_placed
    monkeypatch.setattr(api, "_schedule_placed", lambda *a: calls.append(a) or real(*a))
    lg = lower(load_model(mlperf_path("kws_dscnn")))
    t = get_target("gap8", l1_kb=16)
    plain = schedule_network(lg, t, "model")
    n_plain = len(calls)
    with api.memoized_schedules():
        memo = schedule_network(lg, t, "model")
    n_memo = len(calls) - n_plain
    assert api._MEMO is None
    assert memo.schedules == plain.schedules and memo.cycles == plain.cycles
    assert 0 < n_memo < n_plain
