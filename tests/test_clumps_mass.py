"""Mass, centre and inertia of clumps (unions of overlapping spheres, overlaps counted once).

References, independent of the code under test: the exact solid of revolution (spheres in a row:
the union's circular sections integrated in 1-D, piecewise polynomial, exactly by Gauss-Legendre)
with the closed-form lens volume of two spheres, and a Monte Carlo integration with its
statistical error for clumps that are not solids of revolution.
"""
import math

import numpy as np
import pytest

import contactlab as cl
from contactlab.geometry.lens import sphere_sphere_lens
from contactlab.geometry.sphere_union import union_moments


def _revolution(zc, r):
    """Volume, centroid height and second moment (3, 3) about the centroid of spheres centred on
    the z axis, by exact 1-D integration of the section areas pi rho(z)^2 (rho^2 piecewise
    quadratic between the spheres' ends and their radical planes)."""
    zc, r = np.asarray(zc, float), np.asarray(r, float)
    cuts = list(zc - r) + list(zc + r)
    for a in range(len(r)):
        for b in range(a + 1, len(r)):
            d = zc[b] - zc[a]
            cuts.append(zc[a] + (d * d + r[a] ** 2 - r[b] ** 2) / (2 * d))
    cuts = np.unique(np.clip(cuts, (zc - r).min(), (zc + r).max()))
    x, w = np.polynomial.legendre.leggauss(6)
    vol = mz = mzz = mrr = 0.0
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        z = 0.5 * (lo + hi) + 0.5 * (hi - lo) * x
        ww = 0.5 * (hi - lo) * w
        rho2 = np.max(np.maximum(r[:, None] ** 2 - (z[None, :] - zc[:, None]) ** 2, 0.0), axis=0)
        vol += np.sum(ww * np.pi * rho2)
        mz += np.sum(ww * np.pi * rho2 * z)
        mzz += np.sum(ww * np.pi * rho2 * z * z)
        mrr += np.sum(ww * np.pi * rho2**2 / 4.0)      # int x^2 dA of a disc: pi rho^4 / 4
    cz = mz / vol
    return vol, cz, np.diag([mrr, mrr, mzz - vol * cz * cz])


@pytest.mark.parametrize("zc, r", [([0.0, 1.2], [1.0, 0.8]),            # two spheres: a lens
                                   ([0.0, 0.9, 1.7], [1.0, 1.1, 0.9])])  # three, all overlapping
def test_spheres_in_a_row_match_the_exact_solid_of_revolution(zc, r):
    centres = np.column_stack([np.zeros(len(r)), np.zeros(len(r)), zc])
    u = union_moments(centres, r)
    vol, cz, second = _revolution(zc, r)
    assert u.volume == pytest.approx(vol, rel=1e-6)
    assert u.centroid == pytest.approx([0.0, 0.0, cz], abs=1e-6 * max(r))
    assert np.abs(u.second_moment - second).max() <= 1e-6 * np.abs(second).max()
    assert u.error < 1e-5
    if len(r) == 2:   # and the closed-form lens
        lens, _ = sphere_sphere_lens(r[0], r[1], zc[1] - zc[0])
        assert u.volume == pytest.approx(4 / 3 * math.pi * (r[0] ** 3 + r[1] ** 3) - lens, rel=1e-6)


def _monte_carlo(centres, radii, n=1_500_000, seed=7):
    """Volume, centroid and second moment about the centroid, each with its standard error."""
    rng = np.random.default_rng(seed)
    lo = (centres - radii[:, None]).min(axis=0)
    hi = (centres + radii[:, None]).max(axis=0)
    box = float(np.prod(hi - lo))
    x = rng.uniform(lo, hi, size=(n, 3))
    inside = np.zeros(n, dtype=bool)
    for c, r in zip(centres, radii):
        inside |= ((x - c) ** 2).sum(axis=1) < r * r
    p = x[inside]
    vol = box * inside.mean()
    vol_err = box * math.sqrt(inside.mean() * (1 - inside.mean()) / n)
    centroid = p.mean(axis=0)
    centroid_err = p.std(axis=0) / math.sqrt(len(p))
    d = p - centroid
    prod = d[:, :, None] * d[:, None, :]
    second = vol * prod.mean(axis=0)
    # the second moment's error: the volume's and the mean's (independent to first order)
    second_err = np.abs(second) * vol_err / vol + vol * prod.std(axis=0) / math.sqrt(len(p))
    return vol, vol_err, centroid, centroid_err, second, second_err


@pytest.mark.parametrize("case", ["triangle", "random8"])
def test_clumps_match_a_monte_carlo_integration(case):
    if case == "triangle":   # three mutually overlapping spheres, not in a row
        centres = np.array([[0.0, 0.0, 0.0], [1.1, 0.0, 0.1], [0.5, 0.9, -0.2]])
        radii = np.array([0.8, 0.7, 0.75])
    else:                    # eight random spheres, many overlapping in threes and more
        rng = np.random.default_rng(3)
        centres = rng.uniform(-1.0, 1.0, (8, 3))
        radii = rng.uniform(0.5, 0.9, 8)
    u = union_moments(centres, radii)
    vol, vol_err, cen, cen_err, second, second_err = _monte_carlo(centres, radii)
    assert abs(u.volume - vol) < 4.5 * vol_err
    assert np.all(np.abs(u.centroid - cen) < 4.5 * cen_err)
    assert np.all(np.abs(u.second_moment - second) < 4.5 * second_err + 1e-12)
    # overlaps counted once: less than the spheres' total
    assert u.volume < 4 / 3 * math.pi * (radii**3).sum()


def test_a_template_has_its_principal_frame_and_the_clump_its_mass():
    # a clump of two equal spheres along x: principal axis of the smallest moment is x
    t = cl.ClumpTemplate([(0.0, 0.0, 0.0), (1e-3, 0.0, 0.0)], 0.75e-3)
    assert abs(t.axes[:, 0] @ [1.0, 0.0, 0.0]) == pytest.approx(1.0, abs=1e-9)
    assert t.centroid == pytest.approx([0.5e-3, 0.0, 0.0], abs=1e-12)
    assert t.offsets[:, 0] == pytest.approx([-0.5e-3, 0.5e-3], abs=1e-12) or \
        t.offsets[:, 0] == pytest.approx([0.5e-3, -0.5e-3], abs=1e-12)
    glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
    scene = cl.Scene()
    c = scene.add_clump(t, None, glass, position=(0.0, 0.0, 0.01))
    model, _ = scene.finalize()
    lens, _ = sphere_sphere_lens(0.75e-3, 0.75e-3, 1e-3)
    assert model.clump_mass[c] == pytest.approx(2500.0 * (2 * 4 / 3 * math.pi * 0.75e-3**3 - lens), rel=1e-6)
    assert list(scene.clump_members(c)) == [0, 1]
    with pytest.raises(cl.InputError, match="radii"):
        cl.ClumpTemplate([(0.0, 0.0, 0.0)], -1.0)
