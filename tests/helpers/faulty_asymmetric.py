"""Law of :class:`helpers.faulty_models.SwapAsymmetricSpring`: the stiffness depends on body i alone."""
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
    k = p[0] * g.radius_i / 1e-3          # FAULT: should use a symmetric combination (e.g. g.radius)
    f_n = k * delta
    return (-f_n * n[0], -f_n * n[1], -f_n * n[2]), z, 0.5 * k * delta * delta, 0.0, True, ()
