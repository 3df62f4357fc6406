"""Law of :class:`helpers.faulty_models.ActiveDashpot`: a dashpot that pushes energy in."""
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
    rate = -(g.rel_velocity[0] * n[0] + g.rel_velocity[1] * n[1] + g.rel_velocity[2] * n[2])
    f_n = p[0] * delta - p[3] * rate      # FAULT: the dashpot's sign
    return (-f_n * n[0], -f_n * n[1], -f_n * n[2]), z, 0.5 * p[0] * delta * delta, -p[3] * rate * rate * dt, True, ()
