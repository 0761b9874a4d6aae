"""Child process for TFLM measurements that need a process of their own.

    python bench/peer_proc.py arena NAME      # one invoke, then print_allocations() (to stderr)
    python bench/peer_proc.py invokes NAME N  # load, set input, 1 warm-up invoke, then N × (set_input + invoke)

`invokes` is what callgrind counts: the instructions of a process with N invokes minus those of
the same process with 0 invokes, divided by N, are TFLM's instructions per inference (issue 5).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import models  # noqa: E402
from bench.peers import TflmRunner  # noqa: E402


def main(argv: list[str]) -> int:
    mode, name = argv[0], argv[1]
    r = TflmRunner(models.model_path(name), name)
    r.it.invoke()
    if mode == "arena":
        sys.stdout.flush()
        r.it.print_allocations()
        return 0
    if mode == "invokes":
        for _ in range(int(argv[2])):
            r.it.set_input(r.input, 0)
            r.it.invoke()
        return 0
    raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
