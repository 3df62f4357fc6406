"""Law of :class:`helpers.faulty_models.EnergyCreatingSpring`: stored energy inconsistent with the force."""
from contactlab._jit import jit

INTERACTION_RANGE = 0.0
HISTORY_SIZE = 0


@jit
def law(g, p, h, dt):
    delta = g.overlap
    z = (0.0, 0.0, 0.0)
    if delta <= 0.0:
        return z, z, 0.0, 0.0, False, ()
    n = g.normal
    f_n = p[0] * delta
    # FAULT: the energy of F = k delta is k delta^2 / 2
    return (-f_n * n[0], -f_n * n[1], -f_n * n[2]), z, 0.4 * p[0] * delta * delta, 0.0, True, ()
