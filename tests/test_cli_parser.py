"""The command line's argparse refusals (tilewise/cli/parser.py): one sentence naming the option
and what to do, exit 2, no usage dump — for every command, since subparsers take the parser's
class. (explore's own list options: tests/test_explore.py.)"""

from __future__ import annotations

import pytest

from tilewise.cli import main


@pytest.mark.parametrize("argv,needle", [
    (["analyze", "m.tflite", "--tiler", "magic"], "--tiler 'magic' is not one of model, dory"),
    (["validate", "m.tflite", "--target", "gap8", "--on", "moon"],
     "--on 'moon' is not one of host, gvsoc, qemu, count"),
    (["validate", "m.tflite", "--target", "gap8", "--inputs", "many"],
     "--inputs 'many' is not a whole number"),
    (["analyze", "m.tflite", "--l1", "inf"], "--l1: expected a finite number greater than 0"),
    (["generate", "m.tflite", "--target", "gap8"], "required: -o/--out"),
    (["frob"], "'frob' is not a tilewise command; give one of analyze,"),
    ([], "required: command"),
])
def test_argparse_refusals_are_one_sentence_exit_2(capsys, argv, needle):
    assert main(argv) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.startswith("tilewise: error: ") and needle in cap.err
    assert cap.err.count("\n") == 1 and "usage:" not in cap.err


def test_help_and_version_still_exit_0(capsys):
    for argv in (["--help"], ["explore", "--help"], ["--version"]):
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 0
    assert "--objective {latency,energy,edp}" in capsys.readouterr().out
