"""Law of :class:`helpers.faulty_models.JumpAtTouch`: a constant repulsion from first touch."""
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
    f_n = p[0] * delta + p[2]             # FAULT (unless declared): the force jumps to f0 at touch
    return (-f_n * n[0], -f_n * n[1], -f_n * n[2]), z, 0.5 * p[0] * delta * delta + p[2] * delta, 0.0, True, ()
