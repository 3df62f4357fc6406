"""Coarse-grained fields: against the analytic kernel, conservation of mass and of the Love-Weber
sum, a uniform lattice, exact line integrals (scipy quadrature) and the .vti file read by VTK."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

import contactlab as cl
from contactlab.measure.smoothing import _line_mean

K, R, DELTA = 1e3, 1e-3, 1e-5


def lsd():
    return cl.models.LinearSpringDashpot(stiffness=K, restitution=0.5, friction=0.5)


def gaussian_reference(width, cutoff, dimension):
    """The truncated Gaussian normalised by quadrature (not by the module's closed form)."""
    c = width * cutoff
    shell = (lambda r: 4 * math.pi * r * r) if dimension == 3 else (lambda r: 2 * math.pi * r)
    norm = integrate.quad(lambda r: shell(r) * math.exp(-0.5 * (r / width) ** 2), 0, c, epsabs=0, epsrel=1e-13)[0]
    return lambda r: np.where(r < c, np.exp(-0.5 * (r / width) ** 2) / norm, 0.0)


def lucy_reference(c, dimension):
    shell = (lambda r: 4 * math.pi * r * r) if dimension == 3 else (lambda r: 2 * math.pi * r)
    poly = lambda r: (1 + 3 * r / c) * (1 - r / c) ** 3                     # noqa: E731
    norm = integrate.quad(lambda r: shell(r) * poly(r), 0, c, epsabs=0, epsrel=1e-13)[0]
    return lambda r: np.where(r < c, poly(np.minimum(r, c)) / norm, 0.0)


@pytest.mark.parametrize("dimension", [3, 2])
def test_one_particle_is_the_kernel(glass, dimension):
    """A single body at rest: the density at every grid point is ``m phi(|r - x|)`` (divided by the
    thickness in 2-D) with ``phi`` normalised by quadrature here; the velocity is the body's."""
    t = 3e-3
    if dimension == 3:
        scene = cl.Scene(gravity=(0, 0, 0))
        scene.add_sphere(position=(0.2e-3, -0.1e-3, 0.3e-3), radius=R, material=glass, velocity=(0.1, 0, 0))
        lower, upper, shape = (-3e-3,) * 3, (3e-3,) * 3, (9, 10, 11)
    else:
        scene = cl.Scene(dimension=2, thickness=t, gravity=(0, 0))
        scene.add_disk(position=(0.2e-3, -0.1e-3), radius=R, material=glass, velocity=(0.1, 0))
        lower, upper, shape = (-3e-3,) * 2, (3e-3,) * 2, (9, 10)
    sim = cl.Simulation(scene, model=lsd(), dt=1e-6)
    m = sim.model.mass[0]
    x = sim.positions[0]
    for kernel, ref in [(cl.measure.Gaussian(width=1e-3), gaussian_reference(1e-3, 3.0, dimension)),
                        (cl.measure.Gaussian(width=0.7e-3, cutoff=2.0), gaussian_reference(0.7e-3, 2.0, dimension)),
                        (cl.measure.Lucy(cutoff=2.5e-3), lucy_reference(2.5e-3, dimension))]:
        cg = cl.measure.coarse_grain(sim, lower, upper, shape, kernel)
        gx, gy, gz = np.meshgrid(cg.x, cg.y, cg.z, indexing="ij")
        dist = np.sqrt((gx - x[0]) ** 2 + (gy - x[1]) ** 2 + (gz - x[2]) ** 2)
        expected = m * ref(dist) / (t if dimension == 2 else 1.0)
        np.testing.assert_allclose(cg.density, expected, rtol=1e-11, atol=1e-12 * expected.max())
        inside = cg.density > 0
        np.testing.assert_allclose(cg.velocity[inside], np.broadcast_to(sim.velocities[0], (inside.sum(), 3)),
                                   rtol=1e-12)
        # one body moves at the local mean velocity: no fluctuation, no kinetic stress
        assert np.abs(cg.kinetic_stress).max() <= 1e-12 * (cg.density * 0.1 ** 2).max()


def _cluster(glass):
    """Twelve overlapping spheres of several sizes on a floor (contacts, including wall contacts,
    carry forces from the start)."""
    rng = np.random.default_rng(5)
    scene = cl.Scene(gravity=(0, 0, -9.81))
    pos, rad = [np.array([0.0, 0.0, 1.0e-3 - 1e-5])], [1.0e-3]       # on the floor, 10 um deep
    while len(pos) < 12:
        r = rng.uniform(0.8e-3, 1.2e-3)
        b = int(rng.integers(len(pos)))
        n = rng.normal(size=3)
        n /= np.linalg.norm(n)
        p = pos[b] + n * (rad[b] + r - 1e-5)           # touching body b with an overlap of 10 um
        if p[2] < r - 1e-5 or any(np.linalg.norm(p - q) < r + s - 1.5e-5 for q, s in zip(pos, rad)):
            continue
        pos.append(p)
        rad.append(r)
    scene.add_spheres(np.array(pos), np.array(rad), glass, velocities=rng.normal(0, 0.05, (12, 3)))
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    return cl.Simulation(scene, model=lsd(), initial_overlap_tolerance=0.03)


def test_fields_integrate_to_mass_and_to_the_love_weber_sum(glass):
    """Summed over a grid that covers every kernel (Riemann sum of a Gaussian of width w at spacing
    w/2, cut off at 6w: error far below 1e-6), the density gives the total mass, the volume
    fraction the total solid volume, the momentum the total momentum and the contact stress the
    Love-Weber sum ``-sum (x_c - x_p) (x) f`` of every contact, walls included."""
    sim = _cluster(glass)
    assert sim.n_contacts() >= 8 and (sim.contacts()["wall"] >= 0).any()
    w = 0.5e-3
    h = w / 2
    lo = sim.positions.min(axis=0) - 1.3e-3 - 6 * w
    hi = sim.positions.max(axis=0) + 1.3e-3 + 6 * w
    shape = np.ceil((hi - lo) / h).astype(int) + 1
    hi = lo + (shape - 1) * h
    cg = cl.measure.coarse_grain(sim, lo, hi, shape, cl.measure.Gaussian(width=w, cutoff=6.0))
    cell = h ** 3
    m = sim.model
    assert cg.density.sum() * cell == pytest.approx(m.mass.sum(), rel=1e-6)
    assert cg.volume_fraction.sum() * cell == pytest.approx(np.sum(4 / 3 * np.pi * m.radius ** 3), rel=1e-6)
    np.testing.assert_allclose(cg.momentum.sum(axis=(0, 1, 2)) * cell, sim.linear_momentum(), rtol=1e-6,
                               atol=1e-6 * np.abs(sim.linear_momentum()).max())
    love = cl.measure.stress_parts(sim, cl.measure.domain(volume=1.0))["contact"]      # V = 1 m^3: the sum
    total = cg.contact_stress.sum(axis=(0, 1, 2)) * cell
    np.testing.assert_allclose(total, love, rtol=0, atol=1e-6 * np.abs(love).max())


def test_uniform_lattice_matches_love_weber(glass):
    """A cubic lattice with ``k delta`` in every contact has the uniform stress ``(k delta / a^2) I``
    (Love-Weber, exact); the coarse-grained stress averaged over one lattice cell of grid points
    in the interior matches it to 1e-6 (Gaussian cut off at 5 widths, and Lucy), as do the density
    and the volume fraction."""
    n = 10
    a = 2 * R - DELTA
    g = np.arange(n) * a
    scene = cl.Scene(gravity=(0, 0, 0))
    scene.add_spheres(np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3), R, glass)
    sim = cl.Simulation(scene, model=lsd())
    target = K * DELTA / a ** 2
    mid = g[n // 2]
    for kernel in (cl.measure.Gaussian(width=0.6 * a, cutoff=5.0), cl.measure.Lucy(cutoff=3 * a)):
        cg = cl.measure.coarse_grain(sim, (mid,) * 3, (mid + a * 7 / 8,) * 3, (8, 8, 8), kernel)
        np.testing.assert_allclose(cg.stress.mean(axis=(0, 1, 2)), target * np.eye(3), rtol=0, atol=1e-6 * target)
        assert cg.volume_fraction.mean() == pytest.approx(4 / 3 * np.pi * R ** 3 / a ** 3, rel=1e-6)
        assert cg.pressure.mean() == pytest.approx(target, rel=1e-6)


@pytest.mark.parametrize("kernel", [cl.measure.Gaussian(width=1.0, cutoff=2.5), cl.measure.Lucy(cutoff=2.0)])
def test_line_integrals_are_exact(kernel):
    """The mean of the kernel along a segment, in closed form, equals scipy's quadrature of the
    kernel (evaluated in NumPy) along it: segments through, near and beyond the support."""
    rng = np.random.default_rng(9)
    norm = kernel.normalisation(3)
    for _ in range(40):
        p = rng.uniform(-2.5, 2.5, 3)
        seg = rng.uniform(-3, 3, 3) * rng.choice([1e-3, 0.3, 1.0])
        ref = integrate.quad(lambda s: float(kernel(np.linalg.norm(p + s * seg))), 0, 1, epsabs=1e-14,
                             epsrel=1e-12, limit=200, points=[min(1, max(0, -p @ seg / (seg @ seg)))])[0]
        got = _line_mean(kernel.code, kernel.width, kernel.support, norm, p[0], p[1], p[2], seg[0], seg[1], seg[2])
        assert got == pytest.approx(ref, rel=1e-9, abs=1e-12 * norm)


def test_vti_file_reads_back_in_vtk(glass, tmp_path):
    """The .vti file holds the fields point by point as VTK reads them (vtkXMLImageDataReader)."""
    vtk = pytest.importorskip("vtk")
    from vtk.util.numpy_support import vtk_to_numpy

    sim = _cluster(glass)
    cg = cl.measure.coarse_grain(sim, (-4e-3, -4e-3, 0), (4e-3, 4e-3, 5e-3), (5, 6, 7), cl.measure.Lucy(cutoff=2e-3))
    path = cg.write_vti(tmp_path / "cg.vti")
    reader = vtk.vtkXMLImageDataReader()
    reader.SetFileName(str(path))
    reader.Update()
    image = reader.GetOutput()
    assert image.GetDimensions() == (5, 6, 7)
    np.testing.assert_allclose(image.GetOrigin(), (-4e-3, -4e-3, 0))
    np.testing.assert_allclose(image.GetSpacing(), (2e-3, 1.6e-3, 5e-3 / 6))
    for name in ("density", "stress", "velocity"):
        data = vtk_to_numpy(image.GetPointData().GetArray(name))
        ours = getattr(cg, name)
        # VTK stores x fastest: point (i, j, k) is row i + nx (j + ny k)
        i, j, k = 3, 4, 2
        np.testing.assert_array_equal(data[i + 5 * (j + 6 * k)], ours[i, j, k].ravel())


def test_reporter_writes_a_series(glass, tmp_path):
    sim = _cluster(glass)
    rep = cl.measure.CoarseGrainReporter(tmp_path / "cg", (-3e-3, -3e-3, 0), (3e-3, 3e-3, 4e-3), (4, 4, 4),
                                         cl.measure.Gaussian(width=1e-3), every=10)
    sim.add_reporter(rep)
    sim.run(steps=20)
    assert sorted(p.name for p in (tmp_path / "cg").iterdir()) == ["cg.pvd", "cg_000000.vti", "cg_000001.vti",
                                                                    "cg_000002.vti"]
    assert rep.fields.time == sim.time
    with pytest.raises(cl.InputError, match="shape"):
        sim.add_reporter(cl.measure.CoarseGrainReporter(tmp_path / "x", (0, 0), (1, 1), (2, 2),
                                                        cl.measure.Lucy(cutoff=1.0), every=1))
