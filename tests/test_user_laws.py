"""User-defined contact laws (@cl.contact_law, cl.models.Contact, cl.parts): compiled = plain
Python, composites equal the built-in laws they rebuild, helpful errors, debug mode, caching."""
from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import contactlab as cl
from contactlab.laws.base import PairCase, verlet_limit
from contactlab.laws.registry import model_from_dict

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))

from adhesive_law import elastic_plastic_adhesive  # noqa: E402

GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
R = 1e-3
M = GLASS.density * 4.0 / 3.0 * math.pi * R**3


def linear_composite(k=1e4, restitution=0.5, friction=0.5, mass=0.5 * M):
    """The linear spring-dashpot rebuilt from slot laws (dashpots for the effective mass ``mass``)."""
    zeta = cl.models.LinearSpringDashpot(stiffness=k, restitution=restitution, friction=friction).damping_ratio
    k_t = 2.0 / 7.0 * k
    return cl.models.Contact(
        normal=cl.parts.hooke(stiffness=k),
        damping=cl.parts.viscous_damping(coefficient=2 * zeta * math.sqrt(k * mass)),
        tangential=cl.parts.coulomb_friction(stiffness=k_t, friction=friction, damping=2 * zeta * math.sqrt(k_t * mass)))


def adhesive_composite(kc=2e3):
    return cl.models.Contact(
        normal=elastic_plastic_adhesive(loading_stiffness=1e4, unloading_stiffness=5e4, adhesion_stiffness=kc),
        damping=cl.parts.viscous_damping(coefficient=0.02),
        tangential=cl.parts.coulomb_friction(stiffness=3e3, friction=0.5))


def oblique_path(n=400, seed=3):
    """A random load-unload path with sliding and rolling (contact frame)."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, n)
    overlap = 2e-5 * np.sin(np.pi * t) ** 2 + 1e-6 * rng.standard_normal(n).cumsum() / math.sqrt(n)
    overlap[0] = 0.0
    tangential = np.stack([4e-6 * np.sin(3 * t), 2e-6 * (1 - np.cos(5 * t)), np.zeros(n)], axis=1)
    rotation = np.stack([1e-3 * t, -2e-3 * t**2, 3e-3 * np.sin(t)], axis=1)
    return dict(overlap=overlap, tangential=tangential, rotation=rotation, dt=2e-6)


def test_composite_equals_the_builtin_linear_spring_dashpot():
    """hooke + viscous_damping + coulomb_friction with the built-in's coefficients is the built-in
    linear spring-dashpot (independent implementation) on a random oblique path."""
    path = oblique_path()
    ref = cl.probe(cl.models.LinearSpringDashpot(stiffness=1e4, restitution=0.5, friction=0.5), material=GLASS, **path)
    got = cl.probe(linear_composite(), material=GLASS, **path)
    assert ref.active.sum() > 100 and np.abs(ref.local_force[:, :2]).max() > 0
    scale = np.abs(ref.force).max()
    np.testing.assert_allclose(got.force, ref.force, rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(got.stored_energy, ref.stored_energy, rtol=1e-9, atol=1e-20)
    np.testing.assert_allclose(got.dissipated, ref.dissipated, rtol=1e-9, atol=1e-20)
    np.testing.assert_array_equal(got.active, ref.active)
    # the composite books its dissipation per slot
    assert got.terms == ("normal", "damping", "tangential")
    np.testing.assert_allclose(got.dissipation_terms.sum(axis=1), got.dissipation, rtol=1e-12, atol=1e-22)
    assert got.dissipation_terms[:, 1].sum() > 0 and got.dissipation_terms[:, 2].sum() > 0


def test_user_law_compiled_equals_plain_python_and_books_the_loop_area():
    """The example's elastic-plastic-adhesive law: compiled and plain-Python runs agree to the bit,
    the force follows the Walton-Braun branches, and the plastic work booked over a load-unload
    cycle equals the loop area (trapezoidal integral of the probed force; closed form
    1/2 k1 d^2 (1 - k1/k2) without adhesion)."""
    d_max = 1e-5
    path = np.r_[np.linspace(0, d_max, 101), np.linspace(d_max, 0, 201)[1:]]
    for kc in (0.0, 2e3):
        model = elastic_plastic_adhesive(loading_stiffness=1e4, unloading_stiffness=5e4, adhesion_stiffness=kc)
        fast = cl.probe(model, overlap=path, dt=1e-6)
        slow = cl.probe(model, overlap=path, dt=1e-6, debug=True)
        np.testing.assert_array_equal(fast.force, slow.force)
        np.testing.assert_array_equal(fast.dissipation, slow.dissipation)
        f = fast.normal_force
        np.testing.assert_allclose(f[:101], 1e4 * path[:101], rtol=1e-12)              # first loading: k1
        d0 = (1 - 1e4 / 5e4) * d_max
        unload = path[101:-1]
        expected = np.maximum(5e4 * (unload - d0), -kc * unload)
        np.testing.assert_allclose(f[101:-1], expected, rtol=1e-12, atol=1e-15)
        area = np.trapezoid(f, path)
        assert fast.dissipated[-1] == pytest.approx(area, rel=1e-9)
        if kc == 0.0:
            assert area == pytest.approx(0.5 * 1e4 * d_max**2 * (1 - 1e4 / 5e4), rel=1e-9)
        assert fast.terms == ("plastic",) and not fast.active[-1]
        np.testing.assert_allclose(fast.history_field("max_overlap")[100], d_max)


def test_stability_limit_is_estimated_from_the_law():
    """The probe-based estimate equals the analytic limit of a linear spring with a dashpot."""
    model = cl.models.Contact(normal=cl.parts.hooke(stiffness=1e4), damping=cl.parts.viscous_damping(coefficient=0.05))
    case = PairCase(GLASS, GLASS, R, R, M, M, 0.4 * M * R**2, 0.4 * M * R**2, 1e-4)
    m = 0.5 * M
    expected = verlet_limit(math.sqrt(1e4 / m), 0.05 / (2 * math.sqrt(1e4 * m)))
    assert model.stability_limit(case) == pytest.approx(expected, rel=1e-6)
    # the adhesive law's limit comes from its stiffest branch (unloading, k2)
    adhesive = elastic_plastic_adhesive(loading_stiffness=1e4, unloading_stiffness=5e4)
    assert adhesive.stability_limit(case) == pytest.approx(verlet_limit(math.sqrt(5e4 / m), 0.0), rel=1e-6)


def _adhesive_scene(n=8):
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    rng = np.random.default_rng(5)
    for k in range(n):
        scene.add_sphere(position=(rng.uniform(-2e-3, 2e-3), rng.uniform(-2e-3, 2e-3), 1.2e-3 + 2.3e-3 * k),
                         radius=R, material=GLASS, velocity=(0.0, 0.0, -0.1))
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
    for a in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0)):
        scene.add_wall(point=tuple(-4e-3 * x for x in a), normal=a, material=GLASS)
    return scene


def test_user_law_runs_in_a_simulation_with_energy_terms_and_history(tmp_path):
    """A user law is a first-class model: energy terms per slot, named history per contact, the
    energy balance closes, checkpoints and the model's plain-data form round-trip."""
    model = adhesive_composite()
    sim = cl.Simulation(_adhesive_scene(), model)
    sim.run(duration=0.08)
    e = sim.energy()
    assert e["dissipated_plastic"] > 0 and e["dissipated_damping"] > 0
    assert abs(e["balance_error"]) < 0.01 * e["dissipated"]
    c = sim.contacts()
    assert len(c["i"]) > 0 and np.all(c["normal_max_overlap"] >= c["overlap"] - 1e-15)
    assert "tangential_displacement" in c
    sim.save_checkpoint(tmp_path / "c.npz")
    back = cl.Simulation.load_checkpoint(tmp_path / "c.npz")
    assert repr(back.contact_model) == repr(model)
    back.run(steps=50)
    sim.run(steps=50)
    np.testing.assert_array_equal(back.positions, sim.positions)
    again = model_from_dict(model.to_dict())
    assert again.to_dict() == model.to_dict()


calls = {"n": 0}


@cl.contact_law("normal", parameters=[cl.Parameter("stiffness", "N/m", "k", low=0.0)])
def counted_hooke(g, p, h, dt):
    calls["n"] += 1                      # only possible when the law runs as plain Python
    if g.overlap <= 0.0:
        return 0.0, 0.0, 0.0, False, ()
    return p.stiffness * g.overlap, 0.5 * p.stiffness * g.overlap**2, 0.0, True, ()


def test_debug_mode_runs_the_law_as_plain_python():
    """Simulation(debug=True) calls the Python function itself (a counter in it counts), with the
    same results as the compiled linear spring (the built-in with e = 1 and no friction: k delta)."""
    def scene():
        s = cl.Scene(gravity=(0.0, 0.0, -9.81))
        s.add_sphere(position=(0, 0, 1.05e-3), radius=R, material=GLASS)
        s.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
        return s

    calls["n"] = 0
    debug = cl.Simulation(scene(), counted_hooke(stiffness=1e4), dt=1e-5, debug=True)
    debug.run(steps=200)
    assert calls["n"] > 100
    fast = cl.Simulation(scene(), cl.models.LinearSpringDashpot(stiffness=1e4, restitution=1.0, friction=0.0),
                         dt=1e-5)
    fast.run(steps=200)
    np.testing.assert_allclose(debug.positions, fast.positions, rtol=0, atol=1e-15)


# ------------------------------------------------------------------------------------ errors
@cl.contact_law("normal", parameters=[cl.Parameter("stiffness", "N/m", "k", low=0.0)])
def four_values(g, p, h, dt):
    return p.stiffness * g.overlap, 0.0, 0.0, True


@cl.contact_law("normal", parameters=[cl.Parameter("stiffness", "N/m", "k", low=0.0)], history=["peak"])
def writes_too_much(g, p, h, dt):
    peak = max(h.peak, g.overlap)
    return p.stiffness * g.overlap, 0.0, 0.0, g.overlap > 0.0, (peak, g.overlap)


@cl.contact_law("normal", parameters=[cl.Parameter("stiffness", "N/m", "k", low=0.0)])
def misspelt(g, p, h, dt):
    return p.stifness * g.overlap, 0.0, 0.0, g.overlap > 0.0, ()


@cl.contact_law("normal", parameters=[cl.Parameter("stiffness", "N/m", "k", low=0.0)])
def makes_nan(g, p, h, dt):
    f = p.stiffness * np.sqrt(g.overlap - 2e-6)        # NaN below 2 um (np.sqrt: no exception)
    return f, 0.0, 0.0, g.overlap > 0.0, ()


def python_helper(x):
    return 2.0 * x


@cl.contact_law("normal", parameters=[cl.Parameter("stiffness", "N/m", "k", low=0.0)])
def calls_python(g, p, h, dt):
    if g.overlap <= 0.0:
        return 0.0, 0.0, 0.0, False, ()
    return python_helper(p.stiffness * g.overlap), 0.0, 0.0, True, ()


@pytest.mark.parametrize("law, words", [
    (four_values, ["four_values", "returned 4 value(s)", "(normal_force, stored_energy, dissipation, active, "
                   "new_history)", "test_user_laws.py:"]),
    (writes_too_much, ["writes_too_much", "new_history has 2 entries", "1 history field", "peak (1)",
                       "declared history"]),
    (misspelt, ["misspelt", "p.stifness", "no parameter 'stifness'", "stiffness"]),
    (makes_nan, ["makes_nan", "normal_force = nan is not finite", "overlap 1e-06 m", "square root",
                 "return f, 0.0"]),
])
def test_mistakes_are_reported_with_the_law_line_and_a_hint(law, words):
    with pytest.raises(cl.LawError) as info:
        cl.probe(law(stiffness=1e4), overlap=[0.0, 1e-6], dt=1e-6)
    message = str(info.value)
    for w in words:
        assert w in message, (w, message)
    assert info.value.law == law.name


def test_a_law_numba_cannot_compile_is_explained():
    with pytest.raises(cl.LawError) as info:
        cl.probe(calls_python(stiffness=1e4), overlap=[0.0, 1e-6], dt=1e-6)
    message = str(info.value)
    assert "calls_python cannot be compiled" in message and "python_helper(p.stiffness" in message
    assert "@contactlab.jit" in message and "debug=True" in message
    assert "test_user_laws.py:" in info.value.line
    # the same law runs as plain Python
    r = cl.probe(calls_python(stiffness=1e4), overlap=[0.0, 1e-6], dt=1e-6, debug=True)
    assert r.normal_force[1] == pytest.approx(2e-2)


@cl.contact_law("normal", parameters=[cl.Parameter("stiffness", "N/m", "k", low=0.0)])
def nan_when_deep(g, p, h, dt):
    if g.overlap <= 0.0:
        return 0.0, 0.0, 0.0, False, ()
    rate = -(g.rel_velocity[0] * g.normal[0] + g.rel_velocity[1] * g.normal[1] + g.rel_velocity[2] * g.normal[2])
    f = p.stiffness * g.overlap if rate < 0.3 else math.nan     # fine when probed slowly, NaN in a fast impact
    return f, 0.0, 0.0, True, ()


@cl.contact_law("normal", parameters=[cl.Parameter("stiffness", "N/m", "k", low=0.0)])
def nan_beyond(g, p, h, dt):
    if g.overlap <= 0.0:
        return 0.0, 0.0, 0.0, False, ()
    return (p.stiffness * g.overlap if g.overlap < 2e-5 else math.nan), 0.0, 0.0, True, ()


def test_a_nan_during_a_run_names_the_contact_and_the_law():
    scene = cl.Scene(gravity=(0.0, 0.0, 0.0))
    scene.add_sphere(position=(0, 0, 1.001e-3), radius=R, material=GLASS, velocity=(0, 0, -0.5))
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
    sim = cl.Simulation(scene, nan_when_deep(stiffness=1e4), dt=1e-6, debug=True)
    with pytest.raises(cl.SimulationBlowUp) as info:
        sim.run(steps=200)
    assert "nan_when_deep" in str(info.value) and "sphere 0 and wall 0" in str(info.value)


def test_declaration_errors():
    with pytest.raises(cl.InputError, match="slot must be one of"):
        cl.contact_law("sideways")
    with pytest.raises(cl.LawError, match=r"takes 5 arguments \(g, p, h, dt, normal_force\)"):
        @cl.contact_law("tangential")
        def bad(g, p, h, dt):
            return (0.0, 0.0, 0.0), 0.0, 0.0, ()
    with pytest.raises(cl.InputError, match="declared twice"):
        cl.contact_law(parameters=[("k", "N/m"), ("k", "N/m")])(lambda g, p, h, dt: None)
    friction = cl.parts.coulomb_friction(stiffness=1e3, friction=0.3)
    with pytest.raises(cl.InputError, match="needs a normal law"):
        cl.probe(friction, overlap=[0.0], dt=1e-6)
    with pytest.raises(cl.InputError, match="is a tangential law, not a normal law"):
        cl.models.Contact(normal=friction)
    with pytest.raises(cl.InputError, match="stiffness"):
        cl.parts.hooke(stiffness=-1.0)
    with pytest.raises(cl.LawError, match="non-finite force .* at overlap"):
        cl.parts.hooke(stiffness=1.0)  # fine; now a law that fails only deep in:
        deep = cl.models.Contact(normal=nan_beyond(stiffness=1e4))
        deep.stability_limit(PairCase(GLASS, GLASS, R, R, M, M, 0.4 * M * R**2, 0.4 * M * R**2, 1e-4))
    with pytest.raises(cl.InputError, match="unknown parameter"):
        cl.parts.hooke(stiffness=1.0, stifness=2.0)


def test_law_defined_in_main_is_compiled_per_process_with_a_note(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        import warnings
        import contactlab as cl

        @cl.contact_law("normal", parameters=[cl.Parameter("stiffness", "N/m", "k", low=0.0)])
        def hooke_main(g, p, h, dt):
            if g.overlap <= 0.0:
                return 0.0, 0.0, 0.0, False, ()
            return p.stiffness * g.overlap, 0.0, 0.0, True, ()

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = cl.probe(hooke_main(stiffness=1e4), overlap=[0.0, 1e-6, 2e-6], dt=1e-6)
        print(sorted({type(w.message).__name__ for w in caught}), [round(float(f), 9) + 0.0 for f in r.normal_force])
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "UncachedLawWarning" in out.stdout and "[0.0, 0.01, 0.02]" in out.stdout


def test_scene_file_names_user_laws_and_composites(tmp_path):
    """[model] type = "Contact" with slot subtables naming laws by module:name builds the same model."""
    from contactlab.io.scenefile import load_scene_file

    (tmp_path / "scene.toml").write_text(textwrap.dedent("""
        [simulation]
        gravity = [0.0, 0.0, -9.81]
        duration = 0.001
        [materials.glass]
        density = 2500.0
        young = 1e7
        poisson = 0.3
        [model]
        type = "Contact"
        normal = { type = "adhesive_law:elastic_plastic_adhesive", loading_stiffness = 1e4, unloading_stiffness = 5e4, adhesion_stiffness = 2e3 }
        damping = { type = "contactlab.laws.parts:viscous_damping", coefficient = 0.02 }
        tangential = { type = "contactlab.laws.parts:coulomb_friction", stiffness = 3e3, friction = 0.5 }
        [[sphere]]
        position = [0.0, 0.0, 0.0011]
        radius = 1e-3
        material = "glass"
        [[wall]]
        point = [0.0, 0.0, 0.0]
        normal = [0.0, 0.0, 1.0]
        material = "glass"
    """))
    spec = load_scene_file(tmp_path / "scene.toml")
    assert spec.model.to_dict() == adhesive_composite().to_dict()
    bad = (tmp_path / "scene.toml").read_text().replace("adhesive_law:elastic", "adhesive_law:elastik")
    (tmp_path / "bad.toml").write_text(bad)
    with pytest.raises(cl.SceneFileError, match="adhesive_law:elastik_plastic_adhesive.*cannot import"):
        load_scene_file(tmp_path / "bad.toml")


def test_vtk_contacts_carry_the_laws_history_and_energy_terms(tmp_path):
    vtk = pytest.importorskip("vtk")
    from vtk.util.numpy_support import vtk_to_numpy

    sim = cl.Simulation(_adhesive_scene(), adhesive_composite())
    sim.add_reporter(cl.io.VTKReporter(tmp_path, interval=0.02))
    sim.run(duration=0.06)
    files = sorted(tmp_path.glob("contacts_*.vtp"))
    reader = vtk.vtkXMLPolyDataReader()
    reader.SetFileName(str(files[-1]))
    reader.Update()
    cells = reader.GetOutput().GetCellData()
    peak = vtk_to_numpy(cells.GetArray("normal_max_overlap"))
    overlap = vtk_to_numpy(cells.GetArray("overlap"))
    assert len(peak) == reader.GetOutput().GetNumberOfCells() > 0
    assert np.all(peak >= overlap - 1e-15) and peak.max() > 0      # the largest overlap so far
    assert cells.GetArray("dissipated_plastic") is not None and cells.GetArray("tangential_displacement") is not None


def test_a_law_in_an_importable_module_is_cached_for_the_next_process():
    """Same generated module names in a new process, and its kernels found compiled on disk."""
    from contactlab.engine.codegen import is_compiled

    model = adhesive_composite()
    sim = cl.Simulation(_adhesive_scene(2), model)
    sim.run(steps=10)
    row = sim.stepper.row_length  # the pair table's row length, written into the generated kernels
    assert is_compiled(model.law_module, row_length=row)
    code = textwrap.dedent(f"""
        import sys, warnings
        sys.path.insert(0, {str(ROOT / 'tests')!r}); sys.path.insert(0, {str(ROOT / 'examples')!r})
        warnings.simplefilter("error")          # no UncachedLawWarning
        import test_user_laws as t
        from contactlab.engine.codegen import is_compiled
        m = t.adhesive_composite()
        print(m.law_module, is_compiled(m.law_module, row_length={row}))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [model.law_module, "True"]


def test_law_independent_kernels_are_one_module_shared_by_every_law():
    """Kick, drift, reduction and wall/mesh motion do not depend on the law: every law's kernel
    module (and every shape variant) imports them from one generated module, so they are compiled
    once per machine, not once per law; the debug twin takes their plain-Python copy."""
    from contactlab.engine.codegen import kernel_module

    hm = kernel_module("contactlab.laws.hertz_mindlin")
    lsd = kernel_module("contactlab.laws.linear_spring_dashpot")
    shapes = kernel_module("contactlab.laws.hertz_mindlin", shapes=("CONVEX",))
    user = kernel_module(adhesive_composite().law_module)
    for name in ("kick_drift", "reduce_kick", "move_meshes", "move_walls", "block_size"):
        assert getattr(hm, name) is getattr(lsd, name) is getattr(shapes, name) is getattr(user, name)
    assert hm.reduce_kick.__module__.startswith("_contactlab_integrate_")
    assert hm.advance is not lsd.advance
    debug = kernel_module("contactlab.laws.hertz_mindlin", debug=True)
    assert not hasattr(debug.reduce_kick, "py_func") and debug.reduce_kick.__module__.startswith(
        "_contactlab_integrate_debug_")


def test_a_cached_law_is_rebuilt_when_a_module_it_imports_changes(tmp_path, monkeypatch):
    """The generated module of a composite is found by a hash of the law's file *and* of the project
    files it imports: a change to a helper (as a change to laws/springs.py once did) must not
    leave the old compiled law in the cache."""
    import importlib

    from contactlab.laws.composition import _source_key

    pkg = tmp_path / "stalecheck"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helper.py").write_text("import contactlab as cl\n\n\n@cl.jit\ndef scale():\n    return 2.0\n")
    (pkg / "mylaw.py").write_text(
        "import contactlab as cl\nfrom .helper import scale\n\n\n"
        "@cl.contact_law('normal', parameters=[cl.Parameter('stiffness', 'N/m', 'k', low=0.0)])\n"
        "def doubled(g, p, h, dt):\n"
        "    d = g.overlap\n"
        "    if d <= 0.0:\n"
        "        return 0.0, 0.0, 0.0, False, ()\n"
        "    return scale() * p.stiffness * d, scale() * p.stiffness * d * d / 2, 0.0, True, ()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    try:
        law = importlib.import_module("stalecheck.mylaw").doubled
        before, cacheable = _source_key(law)
        assert cacheable
        assert _source_key(law)[0] == before                         # stable while nothing changes
        (pkg / "helper.py").write_text("import contactlab as cl\n\n\n@cl.jit\ndef scale():\n    return 3.0\n")
        assert _source_key(law)[0] != before
    finally:
        for name in [m for m in sys.modules if m.startswith("stalecheck")]:
            del sys.modules[name]
