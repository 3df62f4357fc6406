"""A law that acts across a gap (its ``interaction_range``): a linear spring in contact that also
pulls across gaps up to ``RANGE`` with a spring of its own (tests of the neighbour list's reach
and of the stability estimate)."""
from __future__ import annotations

import contactlab as cl

#: the gap up to which the law acts, m
RANGE = 5e-4


@cl.contact_law("normal", interaction_range=RANGE, parameters=[
    cl.Parameter("stiffness", "N/m", "k, in contact", low=0.0),
    cl.Parameter("pull", "N/m", "k_g, across the gap", low=0.0)])
def reaching_spring(g, p, h, dt):
    """``k delta`` in contact, ``k_g delta`` (a pull) across a gap up to ``RANGE``, nothing beyond."""
    delta = g.overlap
    if delta < -RANGE:
        return 0.0, 0.0, 0.0, False, ()
    k = p.stiffness if delta >= 0.0 else p.pull
    return k * delta, 0.5 * k * delta * delta, 0.0, True, ()
