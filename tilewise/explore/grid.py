"""The points of a sweep: the grid of model × L1 × L2 × cores × clock × tiler × module set × RAM
budget.

A `Point` is one hypothetical chip running one model: the built-in target with the point's
overrides applied with `beyond=True` (targets/registry.py `get_target`), so memories and core
counts larger than the part are allowed; a `None` override keeps the part's own value. Lists on
the command line are comma-separated (`parse_list`); a module set joins module names with `+`
(`--modules cluster+cpu,cpu`: two sets), `all` meaning every module of the target.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TypeVar

from ..errors import TilewiseError
from ..partition.choose import OBJECTIVES
from ..schedule.api import TILERS

T = TypeVar("T")



@dataclass(frozen=True)
class Point:
    """One point of a sweep (all that its prediction depends on besides the code itself)."""

    #: the model file as given, absolute
    model: str
    #: sha256 of the model's bytes (the cache key uses it, not the path)
    model_sha: str
    target: str
    #: kB free at L1 / L2 after the target's reservations (None: the part's own)
    l1_kb: float | None
    l2_kb: float | None
    cores: int | None
    clock_mhz: float | None
    tiler: str
    #: the modules the point runs (None: all of the target's)
    modules: tuple[str, ...] | None
    objective: str = "latency"
    #: run the generated code where the target has a runner (validate --on gvsoc / count)
    measure: bool = False
    #: --input-dtype: the code types of an integer export's container inputs (NAME or "*", DTYPE)
    input_dtypes: tuple[tuple[str, str], ...] = ()
    #: --ram-budget: kB of RAM the schedule may use (None: the least RAM, pipeline.py)
    ram_budget_kb: float | None = None

    @property
    def model_name(self) -> str:
        return Path(self.model).stem

    def settings(self) -> dict:
        """The point's fields without the path (what the cache key and the rows carry)."""
        d = asdict(self)
        d.pop("model")
        d["modules"] = list(self.modules) if self.modules is not None else None
        if self.input_dtypes:
            d["input_dtypes"] = dict(self.input_dtypes)
        else:   # rows and cache keys of models without the option as before it existed
            d.pop("input_dtypes")
        if self.ram_budget_kb is None:   # likewise
            d.pop("ram_budget_kb")
        return d


#: an example list per option, for the refusal of an empty item
_EXAMPLE = {"--l1": "16,32,64", "--l2": "256,512", "--cores": "1,2,4,8", "--clock": "100,250",
            "--tiler": "model,dory", "--modules": "cluster+cpu,all", "--ram-budget": "32,64,128"}


def parse_list(option: str, text: str | None, conv: Callable[[str], T],
               expect: str = "a valid value") -> list[T | None]:
    """`--option a,b,c` → [conv(a), conv(b), conv(c)]; None (option not given) → [None], i.e. the
    part's own value. A bad item is one sentence naming the option, the item and what is expected
    (`expect`, e.g. "a number of kB"; TilewiseError, exit 2)."""
    if text is None:
        return [None]
    items = [s.strip() for s in text.split(",")]
    if not items or any(not s for s in items):
        raise TilewiseError(f"bad {option} {text!r}: give a comma-separated list of values "
                            f"without empty items, e.g. {option} {_EXAMPLE.get(option, 'a,b')}")
    out: list[T | None] = []
    for s in items:
        try:
            v = conv(s)
        except (TypeError, ValueError):
            raise TilewiseError(f"bad {option} {text!r}: {s!r} is not {expect}") from None
        if isinstance(v, (int, float)) and not (v > 0 and v != float("inf")):
            raise TilewiseError(f"bad {option} {text!r}: {s!r} must be a positive number")
        if v in out:
            raise TilewiseError(f"bad {option} {text!r}: {s!r} is given twice")
        out.append(v)
    return out


def _tiler(s: str) -> str:
    if s not in TILERS:
        raise ValueError(s)
    return s


def _module_set(s: str) -> tuple[str, ...] | None:
    if s == "all":
        return None
    names = tuple(n.strip() for n in s.split("+"))
    if any(not n for n in names):
        raise ValueError(s)
    return names


def model_sha(path: str | Path) -> str:
    """sha256 of a model file (one sentence, exit 2, when it cannot be read)."""
    p = Path(path)
    if not p.is_file():
        raise TilewiseError(f"{p}: no such file; give the path of a .tflite or .onnx model")
    return hashlib.sha256(p.read_bytes()).hexdigest()


def build_grid(models: Sequence[str | Path], target: str, *, l1: str | None = None,
               l2: str | None = None, cores: str | None = None, clock: str | None = None,
               tiler: str | None = None, modules: str | None = None,
               objective: str = "latency", measure: bool = False,
               input_dtypes: dict[str, str] | None = None, ram_budget: str | None = None
               ) -> list[Point]:
    """Every point of the sweep, in a fixed order (model outermost, then tiler, module set,
    cores, clock, L2, L1, RAM budget). The list arguments are the command line's comma-separated
    strings."""
    if objective not in OBJECTIVES:
        raise TilewiseError(f"unknown --objective {objective!r}; available: "
                            f"{', '.join(OBJECTIVES)}")
    if not models:
        raise TilewiseError("explore needs at least one model")
    l1s = parse_list("--l1", l1, float, "a number of kB (e.g. --l1 16,32,64)")
    l2s = parse_list("--l2", l2, float, "a number of kB (e.g. --l2 256,512)")
    coress = parse_list("--cores", cores, int, "a whole number of cores (e.g. --cores 1,8)")
    clocks = parse_list("--clock", clock, float, "a clock in MHz (e.g. --clock 100,250)")
    budgets = parse_list("--ram-budget", ram_budget, float, "a number of kB (e.g. --ram-budget 32,64)")
    tilers = parse_list("--tiler", tiler if tiler is not None else "model", _tiler,
                        f"a tiler; the tilers are {', '.join(TILERS)}")
    msets = parse_list("--modules", modules if modules is not None else "all", _module_set,
                       "a module set: module names joined by '+', or 'all'")
    shas = {str(Path(m).resolve()): model_sha(m) for m in models}
    if len(shas) != len(models):
        raise TilewiseError("explore: a model is given twice")
    stems: dict[str, str] = {}
    for path in shas:
        other = stems.setdefault(Path(path).stem, path)
        if other != path:   # rows, plots and Pareto groups are named by the file's stem
            raise TilewiseError(f"explore: {other} and {path} are both named "
                                f"{Path(path).stem!r} in the outputs; give one of them under "
                                f"another file name")
    dtypes = tuple(sorted((input_dtypes or {}).items()))
    return [Point(path, sha, target, a, b, c, k, t, ms, objective, measure, dtypes, r)
            for (path, sha), t, ms, c, k, b, a, r in itertools.product(
                shas.items(), tilers, msets, coress, clocks, l2s, l1s, budgets)]
