"""`tilewise validate`: the four MLPerf Tiny models bit-exact with the golden model and LiteRT
BUILTIN_REF on gap8 at 64 kB and 16 kB of L1 with both tilers (20 random inputs + the extremes
each; DMA bytes, transfers and chunks measured = predicted); a deliberately removed DMA wait is
caught and located; a sanitizer build runs clean; the CLI's JSON and exit codes."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from tilewise.cli import main as cli_main
from tilewise.codegen import generate
from tilewise.examples import EXAMPLE_ONNX
from tilewise.frontend import load_model
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target
from tilewise.validate import check_project, golden_outputs, make_inputs, new_report, validate_model, validate_network

from .codegen_cases import c_cache  # noqa: F401 (fixture)
from .conftest import MLPERF, mlperf_path

REQUIRED_KEYS = {"bit_exact", "mismatches", "reference", "inputs", "peak_l2_bytes",
                 "dma_bytes_measured", "dma_bytes_predicted"}


@pytest.mark.parametrize("tiler", ["model", "dory"])
@pytest.mark.parametrize("l1_kb", [None, 16])
@pytest.mark.parametrize("name", MLPERF)
def test_mlperf_bit_exact_with_litert_and_dma_as_predicted(name, l1_kb, tiler, tmp_path, c_cache):
    path = mlperf_path(name)
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target("gap8", l1_kb=l1_kb), tiler)
    report = validate_model(path, ns, graph, n_random=20, seed=l1_kb or 36, out_dir=tmp_path / "p",
                            cache=c_cache)
    r = report.to_json()
    assert r["bit_exact"], r
    assert r["reference"] == "LiteRT BUILTIN_REF" and r["golden_vs_reference"] == 0
    assert r["inputs"] == 22
    assert r["dma_bytes_measured"] == r["dma_bytes_predicted"] == sum(s.dma_bytes for s in ns.schedules)
    assert r["dma_transfers_measured"] == r["dma_transfers_predicted"]
    assert r["dma_chunks_measured"] == r["dma_chunks_predicted"]
    assert r["hal"]["races"] == r["hal"]["bad_waits"] == r["hal"]["pending"] == 0
    if l1_kb == 16:   # the small L1 forces multi-tile schedules
        assert any(s.n_tiles > 1 for s in ns.schedules)


def _resnet_project(tmp_path, name="p"):
    lg = lower(load_model(mlperf_path("ic_resnet8")))
    ns = schedule_network(lg, get_target("gap8", l1_kb=16), "model")
    return ns, generate(ns, tmp_path / name)


def _tamper_and_check(tmp_path, c_cache, name: str, pattern: str, keep: str = ""):
    """Generate ic_resnet8 at 16 kB, replace the first line matching `pattern` in the first layer
    whose input moves in several row tiles by `keep` (nothing by default), build, run and
    compare."""
    ns, p = _resnet_project(tmp_path, name)
    lg = ns.layers
    idx = next(i for i, s in enumerate(ns.schedules)
               if not s.untiled and s.buffering == 2 and s.tiling("oy").count > 1)
    f = p.path / "layers" / f"layer_{idx:02d}.c"
    text = f.read_text()
    line = re.search(r"\n[^\n]*" + pattern + r"[^\n]*", text)
    assert line is not None, pattern
    f.write_text(text[:line.start()] + (f"\n    {keep}" if keep else "") + text[line.end():])
    xs = make_inputs(lg, 3)
    report = new_report(ns, p, f"ic_resnet8 (tampered {name})", len(xs), None)
    check_project(report, p, lg, xs, golden_outputs(lg, xs), cache=c_cache)
    return report, lg.layers[idx].name


def test_removing_one_dma_wait_fails_validation_and_names_the_layer(tmp_path, c_cache):
    # the wait for the current input tile: the kernel reads the host DMA's garbage. (x_id is
    # then set but never read, which -Werror refuses: the edit leaves `(void)x_id;` in its place,
    # so the build shares the normal flags and the cached kernels.)
    report, layer = _tamper_and_check(tmp_path, c_cache, "x_wait", re.escape("tw_dma_wait_id(&x_id[x_cur]);"),
                                      "(void)x_id;")
    assert not report.bit_exact
    kinds = {m.kind for m in report.mismatches}
    assert "output" in kinds or "run" in kinds, report.mismatches
    fd = report.first_difference
    assert fd is not None and fd["layer"] == layer, fd
    assert "oy" in fd["tile"] and fd["expected"] != fd["got"]
    # the wait for the store that last used an output buffer: that store is never completed (the
    # host DMA leaves its garbage in L2) and stays pending, which the HAL reports
    report, layer = _tamper_and_check(tmp_path, c_cache, "y_wait", re.escape("tw_dma_wait_id(&y_id[y_cur]);"))
    assert not report.bit_exact
    kinds = {m.kind for m in report.mismatches}
    assert ("hal" in kinds and report.hal["pending"] > 0) or "run" in kinds, report.mismatches
    assert report.first_difference is not None and report.first_difference["layer"] == layer


def test_sanitizer_build_runs_clean(tmp_path, c_cache):
    """ASan + UBSan (abort on any finding) over a multi-tile, C-tiled, double-buffered network
    and the onnx-mode kernels of the example at 8 kB of L1."""
    ns, _ = _resnet_project(tmp_path, "unused")
    lg = ns.layers
    report, _ = validate_network(ns, tmp_path / "asan", make_inputs(lg, 2), cache=c_cache, sanitize=True)
    assert report.bit_exact, report.to_json()
    ex = schedule_network(lower(load_model(EXAMPLE_ONNX)), get_target("gap8", l1_kb=8), "model")
    report, _ = validate_network(ex, tmp_path / "asan_ex", make_inputs(ex.layers, 2), cache=c_cache,
                                 sanitize=True)
    assert report.bit_exact, report.to_json()


def test_cli_validate_json_and_exit_codes(tmp_path, capsys, monkeypatch):
    args = ["validate", str(EXAMPLE_ONNX), "--target", "gap8", "--l1", "8", "--inputs", "3", "--json"]
    assert cli_main(args) == 0
    r = json.loads(capsys.readouterr().out)
    assert REQUIRED_KEYS <= set(r) and r["bit_exact"] and r["reference"] == "onnxruntime"
    assert r["inputs"] == 5 and r["dma_bytes_measured"] == r["dma_bytes_predicted"]
    # a wrong golden answer must turn into exit code 1 and a located difference
    import tilewise.validate.check as check

    real = check.golden_outputs

    def off_by_one(lg, inputs):
        outs = [np.array(o) for o in real(lg, inputs)]
        outs[1].reshape(-1)[0] ^= 1
        return outs

    monkeypatch.setattr(check, "golden_outputs", off_by_one)
    assert cli_main(args[:-1] + ["-o", str(tmp_path / "kept")]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and "input 1: 1 output elements differ from golden" in out
    assert (tmp_path / "kept" / "network.c").exists()
    assert cli_main(["validate", str(EXAMPLE_ONNX), "--target", "gap8", "--inputs", "0"]) == 2


# --------------------------------------------------------------- a program that misbehaves at exit

def _tamper_main_exit(project_dir, how: str) -> None:
    """Edit the generated main_host.c so that, after writing every output and its TW_STATS line
    (the outputs stay complete and correct), it exits with code 3 ("exit") or reports a
    sanitizer-style error on stderr and still exits 0 ("stderr")."""
    f = project_dir / "main_host.c"
    text = f.read_text()
    at = text.rindex("\n    return ")   # main's final return, after the outputs are written
    assert text.rindex("TW_STATS") < at
    end = text.index(";", at) + 1
    tail = ("\n    return 3;" if how == "exit" else
            '\n    fprintf(stderr, "main_host.c:1:1: runtime error: tampered\\n");\n    return 0;')
    f.write_text(text[:at] + tail + text[end:])


@pytest.mark.parametrize("how", ["exit", "stderr"])
def test_complete_outputs_with_nonzero_exit_or_stderr_fail_validation(how, tmp_path, c_cache):
    """The outputs are bit-exact, but the program exits 3 (or writes a sanitizer report on stderr
    and exits 0): validate must report a `run` mismatch, not BIT-EXACT."""
    ns = schedule_network(lower(load_model(EXAMPLE_ONNX)), get_target("gap8", l1_kb=8), "model")
    lg = ns.layers
    p = generate(ns, tmp_path / "p")
    _tamper_main_exit(p.path, how)
    xs = make_inputs(lg, 2)
    report = new_report(ns, p, f"example (tampered {how})", len(xs), None)
    check_project(report, p, lg, xs, golden_outputs(lg, xs), cache=c_cache, locate=False)
    assert not report.bit_exact
    assert not [m for m in report.mismatches if m.kind == "output"], report.mismatches  # outputs were right
    runs = [m for m in report.mismatches if m.kind == "run"]
    assert len(runs) == 1, report.mismatches
    want = "exited with code 3" if how == "exit" else "wrote to stderr: main_host.c:1:1: runtime error: tampered"
    assert want in runs[0].error, runs[0]


def test_cli_validate_exits_1_when_the_program_exits_nonzero_after_correct_outputs(tmp_path, capsys,
                                                                                   monkeypatch):
    """Exit code 1 (mismatch class): the model and options were fine (not 2), tilewise did not
    fail (not 3); the generated program misbehaved, which is what validate exists to catch."""
    import tilewise.validate.check as check

    real = check.build_host

    def tampered(project, *a, **kw):
        _tamper_main_exit(project.path, "exit")
        return real(project, *a, **kw)

    monkeypatch.setattr(check, "build_host", tampered)
    args = ["validate", str(EXAMPLE_ONNX), "--target", "gap8", "--l1", "8", "--inputs", "2"]
    assert cli_main(args) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and "mismatch:    run: error network_host exited with code 3" in out, out
    assert "output elements differ" not in out


@pytest.mark.parametrize("status,done,ok", [(0, True, True), (1, True, False), (0, False, False)])
def test_firmware_run_with_complete_outputs_fails_on_a_nonzero_status(status, done, ok, tmp_path):
    """The firmware runners (GVSoC, QEMU) share fill_report: complete, correct TW_OUT lines count
    only with exit status 0 and the TW_DONE line; otherwise a `run` mismatch (exit 1)."""
    from tilewise.validate.firmware_run import fill_report, parse_run

    ns = schedule_network(lower(load_model(EXAMPLE_ONNX)), get_target("gap8", l1_kb=8), "model")
    lg = ns.layers
    xs = make_inputs(lg, 2)
    golden = golden_outputs(lg, xs)
    text = "".join(f"TW_OUT {i} {np.asarray(g).astype(np.int8).tobytes().hex()}\n" for i, g in enumerate(golden))
    run = parse_run(status, text + ("TW_DONE\n" if done else ""))
    assert len(run.outputs) == len(xs)
    report = new_report(ns, generate(ns, tmp_path / "p"), "example (firmware)", len(xs), None)
    fill_report(report, ns, run, xs, golden)
    assert not [m for m in report.mismatches if m.kind == "output"], report.mismatches
    runs = [m for m in report.mismatches if m.kind == "run"]
    assert (not runs) == ok and (len(runs) == 1 or ok), report.mismatches
    assert report.bit_exact == ok, report.mismatches
    if not ok:
        assert runs[0].status == status


def test_default_object_cache(tmp_path, monkeypatch):
    """validate's builds reuse the shared kernels' objects from the user's cache directory unless
    TILEWISE_CC_CACHE says otherwise (empty: no cache); an uncreatable place: no cache."""
    from tilewise.validate.build import default_cache

    monkeypatch.setenv("TILEWISE_CC_CACHE", str(tmp_path / "mine"))
    assert default_cache() == tmp_path / "mine"
    monkeypatch.setenv("TILEWISE_CC_CACHE", "")
    assert default_cache() is None
    monkeypatch.delenv("TILEWISE_CC_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache() == tmp_path / "xdg" / "tilewise" / "cc" and default_cache().is_dir()
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    assert default_cache() is None
