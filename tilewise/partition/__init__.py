"""Partition: which module runs each layer, with which binding, chosen by predicted cost — the
layers' and the hand-offs of tensors between modules', minimised over the whole network."""

from .choose import (
    OBJECTIVES,
    Candidate,
    Choice,
    Objective,
    Partition,
    Tables,
    alternative,
    candidates,
    check_network,
    choose,
    cost_table,
    partition,
    tables,
)
from .handoff import HandOff

__all__ = ["OBJECTIVES", "Candidate", "Choice", "HandOff", "Objective", "Partition",
           "Tables",
           "alternative", "candidates", "check_network", "choose", "cost_table", "partition", "tables"]
