"""Static memory planning: buffer lifetimes, L2 offset plans (DORY bidirectional stack and best-fit,
the smaller peak kept), weight placement in L2 or L3 with next-layer prefetch.

Entry points: `plan_buffers` (any set of lifetimes) and `plan_network` (layers in execution order).
"""

from .bestfit import plan_best_fit
from .bidirectional import plan_bidirectional
from .buffers import Buffer, conflicts, live_bytes, lower_bound
from .network import L2TooSmallError, LayerStep, NetworkPlan, activation_buffers, plan_network, steps_from_layer_graph
from .plan import Plan, plan_buffers

__all__ = [
    "Buffer", "L2TooSmallError", "LayerStep", "NetworkPlan", "Plan", "activation_buffers", "conflicts", "live_bytes",
    "lower_bound", "plan_best_fit", "plan_bidirectional", "plan_buffers", "plan_network",
    "steps_from_layer_graph",
]
