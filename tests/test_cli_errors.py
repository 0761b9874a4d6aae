"""Bad input through the real command line: one clear sentence naming the file/node/op, exit 2,
no traceback, nothing written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tilewise.cli import MAX_INPUTS

from .conftest import error_lines, mlperf_path


def run_cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tilewise.cli", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def assert_one_sentence_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    err = "\n".join(error_lines(proc.stderr))
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    assert len(err.splitlines()) == 1, proc.stderr
    assert err.startswith("tilewise: error: ")
    for n in needles:
        assert n in err, (n, err)


def test_missing_file(tmp_path):
    p = tmp_path / "nope.tflite"
    assert_one_sentence_error(run_cli("analyze", str(p)), str(p), "no such file")


def test_truncated_tflite(tmp_path):
    data = mlperf_path("ic_resnet8").read_bytes()
    p = tmp_path / "truncated.tflite"
    p.write_bytes(data[: len(data) // 3])
    assert_one_sentence_error(run_cli("analyze", str(p)), str(p))


@pytest.mark.parametrize("suffix", [".tflite", ".onnx", ".bin"])
def test_random_bytes(tmp_path, suffix):
    p = tmp_path / f"random{suffix}"
    p.write_bytes(np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    assert_one_sentence_error(run_cli("analyze", str(p)), str(p))


def _onnx_model(nodes, inputs, outputs, inits, path):
    graph = helper.make_graph(nodes, "g", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path)


def test_onnx_op_outside_the_list(tmp_path):
    """A quantized graph containing an op tilewise does not support (Einsum) is named with its node."""
    p = tmp_path / "einsum.onnx"
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 4])
    inits = [
        numpy_helper.from_array(np.array(0.1, np.float32), "s"),
        numpy_helper.from_array(np.array(128, np.uint8), "z"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q_in"),
        helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="dq_in"),
        helper.make_node("Einsum", ["xd"], ["e"], name="my_einsum", equation="ij->ij"),
        helper.make_node("QuantizeLinear", ["e", "s", "z"], ["y"], name="q_out"),
    ]
    _onnx_model(nodes, [x], [y], inits, p)
    assert_one_sentence_error(run_cli("analyze", str(p)), str(p), "my_einsum", "Einsum")


def test_onnx_float_only_model(tmp_path):
    """A float Conv with no quantization around it is rejected, naming the node."""
    p = tmp_path / "float_conv.onnx"
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])
    w = numpy_helper.from_array(np.random.default_rng(0).normal(size=(4, 3, 3, 3)).astype(np.float32), "w")
    _onnx_model([helper.make_node("Conv", ["x", "w"], ["y"], name="float_conv")], [x], [y], [w], p)
    assert_one_sentence_error(run_cli("analyze", str(p)), str(p), "float_conv")


def test_analyze_writes_nothing_on_error(tmp_path):
    p = tmp_path / "bad.tflite"
    p.write_bytes(b"\x00" * 64)
    before = set(tmp_path.iterdir())
    assert_one_sentence_error(run_cli("analyze", str(p), cwd=tmp_path), str(p))
    assert set(tmp_path.iterdir()) == before


def test_tflite_float_only_op(tmp_path):
    from .tflite_builder import float_conv_model

    p = float_conv_model(tmp_path / "float.tflite")
    assert_one_sentence_error(run_cli("analyze", str(p)), str(p), "CONV_2D", "conv_out")


def test_tflite_unsupported_op(tmp_path):
    from .tflite_builder import hard_swish_model

    p = hard_swish_model(tmp_path / "hswish.tflite")
    assert_one_sentence_error(run_cli("analyze", str(p)), str(p), "HARD_SWISH", "hswish_out")


# --- issue 13, defects 1-5 and 7: the process behaviour of the CLI (run as a subprocess) ---------

EXAMPLE = str(Path(__file__).resolve().parent.parent / "tilewise" / "examples" / "example_cnn.onnx")


def test_validate_relative_out_dir(tmp_path):
    """Defect 1: `validate -o DIR` with a relative DIR builds (the compiler runs elsewhere)."""
    proc = run_cli("validate", EXAMPLE, "--target", "gap8", "--inputs", "2", "-o", "rel/out",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "rel" / "out" / "network_host").is_file()
    assert "bit-exact" in proc.stdout.lower() or "BIT-EXACT" in proc.stdout


def test_demo_relative_out_dir(tmp_path):
    """Defect 1: `demo -o DIR` with a relative DIR."""
    proc = run_cli("demo", "-o", "demo_out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "demo: bit-exact" in proc.stdout
    assert (tmp_path / "demo_out" / "example_cnn_gap8" / "network.c").is_file()


def test_generate_absolute_and_relative_out_dir(tmp_path):
    """Defect 1: both spellings of -o write the same project where the caller means."""
    rel = run_cli("generate", EXAMPLE, "--target", "gap8", "-o", "p_rel", cwd=tmp_path)
    ab = run_cli("generate", EXAMPLE, "--target", "gap8", "-o", str(tmp_path / "p_abs"))
    assert rel.returncode == 0 and ab.returncode == 0, (rel.stderr, ab.stderr)
    assert "wrote p_rel " in rel.stdout
    assert ((tmp_path / "p_rel" / "network.c").read_text()
            == (tmp_path / "p_abs" / "network.c").read_text())


@pytest.mark.parametrize("command", ["generate", "validate"])
def test_out_names_an_existing_file(tmp_path, command):
    """Defect 2: -o naming an existing file: one sentence, exit 2, the file untouched."""
    f = tmp_path / "a_file"
    f.write_text("keep me")
    before = set(tmp_path.iterdir())
    proc = run_cli(command, EXAMPLE, "--target", "gap8", "-o", str(f))
    assert_one_sentence_error(proc, str(f), "existing file")
    assert f.read_text() == "keep me" and set(tmp_path.iterdir()) == before


def test_out_below_a_file_cannot_be_created(tmp_path):
    """Defect 2: an uncreatable place (a directory below a file; /proc)."""
    f = tmp_path / "a_file"
    f.write_text("")
    assert_one_sentence_error(run_cli("generate", EXAMPLE, "--target", "gap8", "-o",
                                      str(f / "sub")), str(f / "sub"), "cannot create")
    assert_one_sentence_error(run_cli("generate", EXAMPLE, "--target", "gap8", "-o",
                                      "/proc/tilewise_out"), "/proc/tilewise_out", "cannot be created")
    assert f.read_text() == ""


def test_out_in_read_only_directory(tmp_path):
    """Defect 2: -o inside a read-only place, and -o naming a read-only directory: one sentence,
    exit 2, nothing written. Root writes into mode-555 directories, so as root the place is a
    read-only tmpfs mounted in a private mount namespace of the CLI's process (unshare -m)."""
    ro = tmp_path / "ro"
    ro.mkdir()
    cli = [sys.executable, "-m", "tilewise.cli", "generate", EXAMPLE, "--target", "gap8", "-o"]
    for out in (ro / "project", ro):
        if os.geteuid() == 0:
            cmd = ["unshare", "-m", "sh", "-c",
                   'mount -t tmpfs -o ro,size=64k none "$0" && exec "$@"', str(ro), *cli, str(out)]
        else:
            ro.chmod(0o555)
            cmd = [*cli, str(out)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        ro.chmod(0o755)
        assert_one_sentence_error(proc, str(out), "not writable" if out == ro else "cannot be created")
        assert list(ro.iterdir()) == []


@pytest.mark.parametrize("args", [["targets", "--json"], ["targets"],
                                  ["analyze", EXAMPLE, "--target", "gap8"],
                                  ["analyze", EXAMPLE, "--target", "gap8", "--json"]])
def test_closed_stdout_is_quiet(args):
    """Defect 3: `tilewise ... | head` — stdout's reader is gone before the first write: no
    message, no traceback, exit 141 (what a C tool killed by SIGPIPE reports in a shell)."""
    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.run([sys.executable, "-m", "tilewise.cli", *args], stdout=w,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(w)
    assert proc.returncode == 141, proc.stderr
    assert proc.stderr == ""


def test_head_reads_part_of_the_output():
    """Defect 3: a reader that takes 600 bytes and leaves (`| head -c 600`)."""
    proc = subprocess.run(f"{sys.executable} -m tilewise.cli targets --json | head -c 600; "
                          "echo; echo rc=${PIPESTATUS[0]}", shell=True, executable="/bin/bash",
                          capture_output=True, text=True, timeout=120)
    assert proc.stderr == "", proc.stderr
    assert proc.stdout.rstrip().splitlines()[-1] in ("rc=0", "rc=141")


@pytest.mark.parametrize("option,value", [("--l1", "inf"), ("--l1", "nan"), ("--l2", "-inf"),
                                          ("--l2", "nan"), ("--clock", "inf"), ("--clock", "nan"),
                                          ("--l1", "0")])
def test_non_finite_settings_are_refused(option, value):
    """Defect 4: --l1 inf / nan (OverflowError, a raw message before): argparse refuses them
    naming the option, exit 2, no traceback."""
    proc = run_cli("analyze", EXAMPLE, "--target", "gap8", f"{option}={value}")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert f"{option}: expected a finite number greater than 0, got '{value}'" in proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr


@pytest.mark.parametrize("target,option,value,limit", [
    ("gap8", "--l1", "1000", "at most 36.7 kB are free"),
    ("gap8", "--l2", "100000", "at most 416.0 kB are free"),
    ("gap8", "--cores", "64", "more than gap8 has (8)"),
    ("gap8", "--clock", "100000", "at most 260 MHz"),
    ("gap9", "--clock", "400", "at most 370 MHz"),
    ("stm32h7", "--clock", "481", "at most 480 MHz"),
    ("pulp-open", "--clock", "1000", "at most 660 MHz"),
])
def test_unphysical_settings_are_refused(target, option, value, limit):
    """Defect 5: a setting beyond the chip is refused naming the limit (unless --hypothetical)."""
    proc = run_cli("analyze", EXAMPLE, "--target", target, option, value)
    assert_one_sentence_error(proc, f"{option} {value}", limit)


def test_cores_on_a_target_without_configurable_cores():
    """Defect 5: stm32h7 --cores 8 was ignored; refused, also with --hypothetical."""
    for extra in ((), ("--hypothetical",)):
        proc = run_cli("analyze", EXAMPLE, "--target", "stm32h7", "--cores", "8", *extra)
        assert_one_sentence_error(proc, "--cores does not apply to stm32h7")


def test_hypothetical_chip_is_said(tmp_path):
    """Defect 5: --hypothetical allows the setting and the outputs say so: analyze's JSON and
    text, generate's manifest and summary; within the part nothing says it."""
    args = ("--target", "gap8", "--clock", "1000", "--l1", "200", "--cores", "16", "--hypothetical")
    proc = run_cli("analyze", EXAMPLE, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    totals = json.loads(proc.stdout)["totals"]
    assert totals["hypothetical"] is True and totals["clock_mhz"] == 1000
    text = run_cli("analyze", EXAMPLE, *args)
    assert text.returncode == 0 and "hypothetical chip" in text.stdout
    gen = run_cli("generate", EXAMPLE, *args, "-o", str(tmp_path / "p"))
    assert gen.returncode == 0, gen.stderr
    assert json.loads((tmp_path / "p" / "tilewise.json").read_text())["hypothetical"] is True
    assert "hypothetical chip" in gen.stdout
    real = run_cli("analyze", EXAMPLE, "--target", "gap8", "--clock", "250", "--hypothetical",
                   "--json")
    assert json.loads(real.stdout)["totals"]["hypothetical"] is False


def test_ctrl_c_during_validate_leaves_no_temporary_directory(tmp_path):
    """Defect 7: Ctrl-C (SIGINT to the CLI's process group, as a terminal sends it) once
    validate's temporary directory exists: exit 130, the directory gone — at several moments of
    the run (reference runtime, generation, build)."""
    for delay in (0.0, 0.3, 1.5):
        _interrupt_validate(tmp_path / f"tmp_{delay}", delay)


def _interrupt_validate(tmp: Path, delay: float) -> None:
    tmp.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "tilewise.cli", "validate", EXAMPLE,
                             "--target", "gap8", "--inputs", "200"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(tmp)}, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not list(tmp.glob("tilewise_validate_*")):
            assert proc.poll() is None, ("validate ended before it made its directory",
                                         proc.communicate())
            assert time.monotonic() < deadline, "no tilewise_validate_* directory appeared"
            time.sleep(0.02)
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, (delay, proc.returncode, out, err)
    assert err == "tilewise: interrupted\n", (delay, err)
    assert list(tmp.glob("tilewise_validate_*")) == [], delay


def test_ctrl_c_inside_an_unraisable_callback_is_redelivered_quietly():
    """A Ctrl-C that lands where Python cannot raise (a weakref callback inside importlib, a
    __del__; CI once caught one in validate's imports) must neither print "Exception ignored"
    with a traceback nor be dropped: it is delivered again and ends the command as any Ctrl-C."""
    code = textwrap.dedent("""
        import sys, time
        from tilewise.cli import _Interrupt

        class Finalized:
            def __del__(self):
                raise KeyboardInterrupt

        with _Interrupt() as intr:
            try:
                Finalized()
                deadline = time.monotonic() + 60   # the timer thread needs a moment on a loaded machine
                while time.monotonic() < deadline:
                    time.sleep(0.001)
                print("ran on")
            except KeyboardInterrupt:
                print("interrupted", intr.seen)
        """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == (0, "interrupted True\n", "")


# --- defect 6: validate --inputs 100000000 in bounded memory ---------------------------------------

@pytest.mark.parametrize("n", [1, 20, 253, 254, 255, 256, 300, 510, 511, 512])
@pytest.mark.parametrize("chunk", [8, 256])
def test_input_chunks_are_the_one_batch_inputs(n, chunk):
    """The chunked inputs are make_inputs' inputs, same seed, same order, extremes last."""
    from tilewise.frontend import load_model
    from tilewise.passes import lower
    from tilewise.validate import make_inputs
    from tilewise.validate.chunked import input_chunks, n_chunks

    lg = lower(load_model(EXAMPLE))
    chunks = list(input_chunks(lg, n, 7, chunk))
    assert len(chunks) == n_chunks(n, chunk) and all(0 < len(c) <= chunk for c in chunks)
    flat = [x for c in chunks for x in c]
    want = make_inputs(lg, n, 7)
    assert len(flat) == len(want) and all(np.array_equal(a, b) for a, b in zip(flat, want))


def test_chunked_validation_matches_one_batch(tmp_path):
    """validate_chunked (here 8 inputs a chunk) reports what one batch reports."""
    from tilewise.frontend import load_model
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.targets.registry import get_target
    from tilewise.validate import validate_model
    from tilewise.validate.chunked import validate_chunked

    graph = load_model(EXAMPLE)
    ns = schedule_network(lower(graph), get_target("gap8", l1_kb=8), "model")
    one = validate_model(EXAMPLE, ns, graph, 20, 3, tmp_path / "one").to_json()
    chunked = validate_chunked(EXAMPLE, ns, graph, 20, 3, tmp_path / "chunked", chunk=8).to_json()
    assert one["bit_exact"] and one["inputs"] == 22
    assert ({k: v for k, v in one.items() if k != "project"}
            == {k: v for k, v in chunked.items() if k != "project"})


def _rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def test_huge_inputs_run_in_bounded_memory(tmp_path):
    """Defect 6: `validate --inputs 100000000` grew to 3 GB before anything ran. Counts above
    cli.MAX_INPUTS are now refused at once (test_progress_steps); the largest allowed count still
    runs chunk by chunk (their outputs are written) while the process stays far below that;
    Ctrl-C then ends it with 130. The test stops the process as soon as it passes 1 GB."""
    out = tmp_path / "p"
    proc = subprocess.Popen([sys.executable, "-m", "tilewise.cli", "validate", EXAMPLE,
                             "--target", "gap8", "--inputs", str(MAX_INPUTS), "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    peak, writes, last = 0, 0, None
    try:
        deadline = time.monotonic() + 600
        while writes < 2 and time.monotonic() < deadline and proc.poll() is None:
            peak = max(peak, _rss_bytes(proc.pid))
            if peak > 1 << 30:
                break
            f = out / "run_outputs.bin"
            stamp = f.stat().st_mtime_ns if f.exists() else None
            if stamp is not None and stamp != last:
                writes, last = writes + 1, stamp
            time.sleep(0.05)
        alive = proc.poll() is None
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert peak < 1 << 30, f"RSS reached {peak / 2**20:.0f} MB"
    assert alive and writes >= 2, ("the first two chunks did not run", writes, err)
    assert proc.returncode == 130, err
