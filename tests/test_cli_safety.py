"""Issue 25, items 6-9, through the real command line: no internal error on a negative seed, a
read-only explore -o or a read-only compile cache (6); validate --on gvsoc under a non-ASCII -o,
and a result line that says what was compared with what (7); nothing left running or behind
after Ctrl-C on GVSoC or after `tilewise demo` (8); -o never deletes the user's files (9).

Read-only places: root writes into mode-555 directories, so as root the place is a read-only
tmpfs mounted in a private mount namespace of the CLI's process (unshare -m), as
test_cli_errors.py does; other users get a mode-555 directory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from .conftest import absent
from .test_cli_errors import EXAMPLE, assert_one_sentence_error, run_cli

EXAMPLES = Path(EXAMPLE).parent
#: tilewise.codegen.owned.RECORD, spelt out so that the tests run against a tree without it
RECORD = ".tilewise_files"
CLI = [sys.executable, "-m", "tilewise.cli"]


def _in_read_only(ro: Path, cmd: list[str]) -> list[str]:
    """`cmd` run with the directory `ro` read-only for it (see the module docstring)."""
    if os.geteuid() == 0:
        return ["unshare", "-m", "sh", "-c", 'mount -t tmpfs -o ro,size=64k none "$0" && exec "$@"',
                str(ro), *cmd]
    ro.chmod(0o555)
    return cmd


# --- item 6: exit 3 on bad input -------------------------------------------------------------

def test_negative_seed_is_refused():
    """`validate --seed -1` was numpy's ValueError (exit 3): now one sentence naming --seed."""
    assert_one_sentence_error(run_cli("validate", EXAMPLE, "--target", "gap8", "--seed", "-1"),
                              "--seed", "'-1'", "0 or more")


def test_explore_out_in_read_only_place(tmp_path):
    """`explore -o` inside a read-only directory, and naming one: one sentence, exit 2."""
    ro = tmp_path / "ro"
    ro.mkdir()
    for out in (ro / "sweep", ro):
        cmd = [*CLI, "explore", EXAMPLE, "--target", "gap8", "--l1", "32", "--workers", "1",
               "-o", str(out)]
        proc = subprocess.run(_in_read_only(ro, cmd), capture_output=True, text=True, timeout=300)
        ro.chmod(0o755)
        assert_one_sentence_error(proc, f"-o {out}", "not writable" if out == ro
                                  else "cannot be created")
        assert list(ro.iterdir()) == []


def test_read_only_compile_cache_builds_without_it(tmp_path):
    """A compile cache ($TILEWISE_CC_CACHE) that cannot be written was an internal error of every
    validate; now the build goes on without it, said in one note."""
    ro = tmp_path / "ro"
    ro.mkdir()
    cmd = [*CLI, "validate", EXAMPLE, "--target", "gap8", "--inputs", "2"]
    proc = subprocess.run(_in_read_only(ro, cmd), capture_output=True, text=True, timeout=600,
                          env={**os.environ, "TILEWISE_CC_CACHE": str(ro / "cc")})
    ro.chmod(0o755)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert "result:      BIT-EXACT" in proc.stdout
    notes = [line for line in proc.stderr.splitlines() if "note:" in line]   # progress lines aside
    assert len(notes) == 1 and notes[0].startswith("tilewise: note: "), proc.stderr
    assert str(ro / "cc") in notes[0] and "without the compile cache" in notes[0]
    assert "error" not in proc.stderr, proc.stderr


# --- item 7: a non-ASCII -o on GVSoC; what a mismatch compared ------------------------------

def _gvsoc() -> None:
    from tilewise.platforms.gvsoc import runner
    from tilewise.platforms.pulp_open import toolchain

    try:
        runner()
        toolchain()
    except Exception as e:   # noqa: BLE001 - the one-sentence TilewiseError
        absent(str(e))


def test_gvsoc_under_a_non_ascii_out_directory(tmp_path):
    """GVSoC's loader cannot open a binary under a non-ASCII path: the run failed and was shown
    as "MISMATCH: generated C vs golden"; the simulator now runs a copy from an ASCII place."""
    _gvsoc()
    out = tmp_path / "projet_é" / "réseau"
    proc = run_cli("validate", EXAMPLE, "--target", "pulp-open", "--on", "gvsoc", "--inputs", "1",
                   "-o", str(out))
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert "result:      BIT-EXACT" in proc.stdout and "measured on gvsoc" in proc.stdout
    assert (out / "build_fw" / "network.elf").is_file()


def _result_line(stdout: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith("  result:"))


def test_expected_mismatch_names_the_expected_file(tmp_path):
    """Outputs that differ from the user's --expected only (the C is bit-exact against the golden
    model and onnxruntime): the headline names the expected file, not the golden model."""
    expected = tmp_path / "expected.npy"
    np.save(expected, np.zeros((32, 10), np.int8))
    proc = run_cli("validate", EXAMPLE, "--target", "gap8", "--data",
                   str(EXAMPLES / "example_inputs.npz"), "--expected", str(expected))
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    line = _result_line(proc.stdout)
    assert line.startswith("  result:      MISMATCH: generated C vs the expected outputs "
                           f"({expected})"), line
    assert "golden" not in line and "onnxruntime" not in line, line


def test_a_run_that_failed_is_said_as_such():
    """A firmware run that did not get to its end (the simulator's own error, in colour): the
    result line says so instead of "generated C vs golden model", no colour codes, no None."""
    from tilewise.frontend import load_model
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.targets.registry import get_target
    from tilewise.validate.firmware_run import FirmwareRun, fill_report
    from tilewise.validate.report import ValidationReport
    from tilewise.validate.text import format_report

    ns = schedule_network(lower(load_model(EXAMPLE)), get_target("pulp-open"), "model")
    report = ValidationReport(model="example_cnn.onnx", target="pulp-open", tiler="model",
                              l1_free_bytes=None, inputs=1, reference="onnxruntime",
                              peak_l2_bytes=0, dma_bytes_predicted=1, dma_transfers_predicted=1,
                              dma_chunks_predicted=1, l3_bytes_predicted=0, project="p")
    report.platform = "gvsoc"
    text = "0: [\x1b[31m/chip/soc/loader/trace\x1b[0m] Unable to open binary (path: x.elf)\n"
    fill_report(report, ns, FirmwareRun(1, [], [], [], [], [], text), [np.zeros(1)],
                [np.zeros(1)])
    out = format_report(report)
    line = _result_line(out)
    assert "did not run to its end on GVSoC" in line and "golden" not in line, line
    assert "\x1b" not in out and "None" not in out, out
    assert "Unable to open binary" in out


# --- item 8: nothing left running or behind ---------------------------------------------------

def _simulators(tmp: Path) -> list[str]:
    """GVSoC processes working in `tmp` (their command line or working directory)."""
    return [cmd for _, cmd in _simulator_pids(tmp)]


def _simulator_pids(tmp: Path) -> list[tuple[int, str]]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if "gvsoc" in cmd and (str(tmp) in cmd or cwd.startswith(str(tmp))):
            found.append((int(entry.name), cmd))
    return found


def _left_behind(tmp: Path) -> list[str]:
    """What tilewise or GVSoC left in the temporary directory (onnxruntime's .ses file aside)."""
    return sorted(p.name for p in tmp.iterdir() if p.name != ".ses")


def test_ctrl_c_during_gvsoc_ends_the_simulator(tmp_path):
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) while GVSoC simulates: exit
    130, no simulator process left, no temporary directory left (validate's, GVSoC's)."""
    _gvsoc()
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.Popen([*CLI, "validate", EXAMPLE, "--target", "pulp-open", "--on", "gvsoc",
                             "--inputs", "30"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "TMPDIR": str(tmp)},
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        while not any("gvsoc_launcher" in c for c in _simulators(tmp)):   # the simulator proper
            assert proc.poll() is None, ("validate ended before GVSoC ran", proc.communicate())
            assert time.monotonic() < deadline, "GVSoC did not start"
            time.sleep(0.05)
        time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, (proc.returncode, out, err)
    # (progress lines of the long steps may come before)
    assert err.endswith("tilewise: interrupted\n") and err.count("interrupted") == 1, err
    assert "Traceback" not in err and "error" not in err, err
    deadline = time.monotonic() + 10   # a process may take a moment to go after its signal
    while _simulators(tmp) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _simulator_pids(tmp)
    for pid, _ in left:   # not to leave them running when the test fails
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert [cmd for _, cmd in left] == []
    assert _left_behind(tmp) == []


def test_ctrl_c_right_after_the_temporary_directory_is_made(monkeypatch):
    """A Ctrl-C that lands just after validate's temporary directory exists, before the code that
    removes it on an interruption is in place (a loaded machine pre-empts the process right after
    mkdir: the Ctrl-C test of test_cli_errors.py failed so now and then): the directory goes."""
    import tempfile

    from tilewise.validate.check import work_dir

    real, made = tempfile.mkdtemp, []

    def mkdtemp_then_ctrl_c(*args, **kwargs):
        made.append(Path(real(*args, **kwargs)))
        os.kill(os.getpid(), signal.SIGINT)   # Python's handler: KeyboardInterrupt
        return str(made[-1])

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp_then_ctrl_c)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with work_dir(None):
                time.sleep(5)   # the Ctrl-C ends it at once
    finally:
        signal.signal(signal.SIGINT, previous)
    left = [d for d in made if d.exists()]
    for d in left:   # not to leave it behind when the test fails
        shutil.rmtree(d)
    assert len(made) == 1 and left == []


def test_demo_leaves_no_temporary_directory(tmp_path):
    """`tilewise demo` without -o left a tilewise_demo_* directory each run: removed when done."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.run([*CLI, "demo"], capture_output=True, text=True, timeout=900,
                          env={**os.environ, "TMPDIR": str(tmp)})
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr)
    assert "demo: bit-exact" in proc.stdout and "tilewise demo -o DIR" in proc.stdout
    assert _left_behind(tmp) == []


# --- item 9: -o never deletes the user's files ------------------------------------------------

def _users_dir(path: Path) -> dict[str, str]:
    """A directory of the user's: a notes file, a Makefile and a file in layers/."""
    files = {"notes.txt": "mine", "Makefile": "all:\n\techo mine\n", "layers/keep.txt": "mine too"}
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    return files


def _contents(path: Path) -> dict[str, str]:
    return {p.relative_to(path).as_posix(): p.read_text() for p in path.rglob("*") if p.is_file()}


def test_out_into_a_directory_of_the_users_is_refused(tmp_path):
    """generate / validate -o into an existing directory that holds no tilewise project: exit 2,
    one sentence naming -o and --force; the directory is left exactly as it was."""
    for command in ("generate", "validate"):
        d = tmp_path / command
        d.mkdir()
        files = _users_dir(d)
        proc = run_cli(command, EXAMPLE, "--target", "gap8", "--inputs", "1", "-o", str(d)) \
            if command == "validate" else run_cli(command, EXAMPLE, "--target", "gap8", "-o", str(d))
        assert_one_sentence_error(proc, f"-o {d}", "--force")
        assert _contents(d) == files


def test_force_and_regeneration_delete_no_file_of_the_users(tmp_path):
    """--force writes into the user's directory (files of the generated names overwritten, the
    others kept); writing the project again deletes the files tilewise wrote and the new
    project lacks, and nothing else."""
    d = tmp_path / "p"
    d.mkdir()
    _users_dir(d)
    proc = run_cli("generate", EXAMPLE, "--target", "gap8", "-o", str(d), "--force")
    assert proc.returncode == 0, proc.stderr
    assert (d / "notes.txt").read_text() == "mine" and (d / "layers/keep.txt").read_text() == "mine too"
    assert (d / "layers" / "layer_00.c").is_file() and (d / "tilewise.json").is_file()
    assert "echo mine" not in (d / "Makefile").read_text()   # a generated name: overwritten
    # a file tilewise wrote that the next project does not have (as a larger network's
    # layer_99.c would be): recorded, so it goes; the user's files stay
    (d / "layers" / "layer_99.c").write_text("/* stale */\n")
    with open(d / RECORD, "a") as f:
        f.write("layers/layer_99.c\n")
    (d / "layers" / "mine.h").write_text("/* mine */\n")
    proc = run_cli("validate", EXAMPLE, "--target", "gap8", "--l1", "8", "--inputs", "1",
                   "-o", str(d))
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert not (d / "layers" / "layer_99.c").exists()
    assert (d / "layers" / "mine.h").read_text() == "/* mine */\n"
    assert (d / "notes.txt").read_text() == "mine" and (d / "layers/keep.txt").read_text() == "mine too"


def test_a_project_of_an_earlier_tilewise_loses_only_its_stale_layers(tmp_path):
    """A project written before the record (.tilewise_files) existed: writing it again deletes
    the layer files its manifest names that the new project lacks (the Makefile compiles every
    layers/*.c), and no other file."""
    import json

    d = tmp_path / "p"
    assert run_cli("generate", EXAMPLE, "--target", "gap8", "-o", str(d)).returncode == 0
    (d / RECORD).unlink(missing_ok=True)
    manifest = json.loads((d / "tilewise.json").read_text())
    manifest["layers"].append({**manifest["layers"][-1], "file": "layers/layer_99.c"})
    (d / "tilewise.json").write_text(json.dumps(manifest))
    (d / "layers" / "layer_99.c").write_text("#error stale\n")
    (d / "layers" / "mine.c.txt").write_text("mine\n")
    proc = run_cli("validate", EXAMPLE, "--target", "gap8", "--inputs", "1", "-o", str(d))
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert not (d / "layers" / "layer_99.c").exists()
    assert (d / "layers" / "mine.c.txt").read_text() == "mine\n"
