"""A user-defined contact law: linear elastic-plastic normal contact with adhesion.

The normal law of Walton and Braun (1986) with the adhesive branch of Luding (2008), written as a
plain Python function and turned into a compiled contactlab law by ``@cl.contact_law``.  It lives
in its own importable module so that contactlab caches its compiled kernels on disk (a law defined
in a script's ``__main__`` works too, but is compiled again in every process).

Loading from the largest overlap so far (``max_overlap``, history) follows the stiffness ``k1``;
unloading and reloading below it follow the stiffer ``k2``, which leaves the plastic overlap
``delta_0 = (1 - k1/k2) max_overlap``; pulled below the intersection with the adhesive branch
``-kc delta``, the force follows that branch back to zero at ``delta = 0``, where the contact ends::

    F = k1 delta                       on first loading (k2 (delta - delta_0) >= k1 delta)
    F = k2 (delta - delta_0)           unloading and reloading
    F = -kc delta                      adhesion (k2 (delta - delta_0) <= -kc delta)

At a given ``max_overlap`` the unloading-reloading curve is elastic; its potential, taken zero at
``delta = 0``, is the stored energy (negative in the adhesive well).  The energy lost in a step is
the work done on the contact (trapezoidal rule over the step's two forces, as the integrator sees
it) minus the change of that stored energy: plastic work while ``max_overlap`` grows, nothing on
the elastic curve.
"""

import contactlab as cl

__all__ = ["elastic_plastic_adhesive"]


@cl.jit
def unloading_energy(delta, delta_0, k2, kc):
    """Potential (J) of the unloading-reloading curve at ``delta``, zero at ``delta = 0``."""
    cross = k2 * delta_0 / (k2 + kc)              # where k2 (delta - delta_0) = -kc delta
    if delta <= cross:
        return -0.5 * kc * delta * delta
    return -0.5 * kc * cross * cross + 0.5 * k2 * ((delta - delta_0) ** 2 - (cross - delta_0) ** 2)


@cl.contact_law(
    "normal",
    parameters=[
        cl.Parameter("loading_stiffness", "N/m", "k1, stiffness of first loading", low=0.0, low_inclusive=False),
        cl.Parameter("unloading_stiffness", "N/m", "k2 >= k1, stiffness of unloading and reloading",
                     low=0.0, low_inclusive=False),
        cl.Parameter("adhesion_stiffness", "N/m", "kc, stiffness of the adhesive branch", default=0.0, low=0.0),
    ],
    history=[
        cl.HistoryField("max_overlap", 1, "m", "largest overlap so far"),
        cl.HistoryField("overlap", 1, "m", "overlap at the last evaluation"),
        cl.HistoryField("force", 1, "N", "normal force at the last evaluation"),
    ],
    dissipation_terms=("plastic",),
    properties={"adhesive": True},      # for contactlab validate: the force may pull (adhesion)
)
def elastic_plastic_adhesive(g, p, h, dt):
    """Walton-Braun elastic-plastic normal force with Luding's adhesive branch."""
    delta = g.overlap
    if delta <= 0.0:                               # apart: the contact ends, history resets
        return 0.0, 0.0, (0.0,), False, (0.0, 0.0, 0.0)
    k1, k2, kc = p.loading_stiffness, p.unloading_stiffness, p.adhesion_stiffness
    max_overlap = max(h.max_overlap, delta)
    delta_0 = (1.0 - k1 / k2) * max_overlap        # plastic overlap
    force = k2 * (delta - delta_0)
    if force >= k1 * delta:
        force = k1 * delta                         # first loading
    elif force <= -kc * delta:
        force = -kc * delta                        # adhesive branch
    stored = unloading_energy(delta, delta_0, k2, kc)
    old_stored = unloading_energy(h.overlap, (1.0 - k1 / k2) * h.max_overlap, k2, kc)
    work = 0.5 * (force + h.force) * (delta - h.overlap)
    plastic = work - (stored - old_stored)
    return force, stored, (plastic,), True, (max_overlap, delta, force)


if __name__ == "__main__":
    print(elastic_plastic_adhesive(loading_stiffness=1e4, unloading_stiffness=5e4, adhesion_stiffness=2e3))
