"""Law of :class:`helpers.faulty_models.NonObjectiveSpring`: the tangential history is never
rotated into the current tangent plane."""
from contactlab._jit import jit

INTERACTION_RANGE = 0.0
HISTORY_SIZE = 3


@jit
def law(g, p, h, dt):
    delta = g.overlap
    z = (0.0, 0.0, 0.0)
    if delta <= 0.0:
        return z, z, 0.0, 0.0, False, z
    n = g.normal
    u = g.rel_displacement
    un = u[0] * n[0] + u[1] * n[1] + u[2] * n[2]
    # FAULT: the old displacement is kept as it is (not projected into the new tangent plane)
    xi = (h[0] + u[0] - un * n[0], h[1] + u[1] - un * n[1], h[2] + u[2] - un * n[2])
    k, kt = p[0], p[1]
    f_n = k * delta
    force = (kt * xi[0] - f_n * n[0], kt * xi[1] - f_n * n[1], kt * xi[2] - f_n * n[2])
    stored = 0.5 * k * delta * delta + 0.5 * kt * (xi[0] * xi[0] + xi[1] * xi[1] + xi[2] * xi[2])
    return force, z, stored, 0.0, True, xi
