"""The context the battery's checks share (:func:`~contactlab.validation.battery.make_context`).

:class:`Context` holds the settings, the model's own scales (a quasi-static loading on a wall to
``MAX_SWEEP_OVERLAP`` of the radius gives the impact speeds) and the experiments several checks use,
run once and cached: probe paths (:func:`contactlab.probe`) and wall impacts through the engine
(:class:`contactlab.Simulation`).
"""
from __future__ import annotations

import math

import numpy as np

from ..laws.impact_reference import sphere_mass
from ..materials import Material
from ..probe import probe
from ..scene import Scene
from ..simulation import Simulation
from .formatting import fmt

__all__ = ["Context", "MAX_SWEEP_OVERLAP", "SIM_MAX_OVERLAP", "PATH_DENSITY", "QUASI_STATIC"]

#: fraction of the radius the fastest impact of the sweep compresses the contact to (quasi-statically)
MAX_SWEEP_OVERLAP = 0.05
#: the Simulation's default max_overlap (the stability limit is evaluated at this overlap)
SIM_MAX_OVERLAP = 0.1
#: probe samples per reference overlap of path length (fine and coarse: the coarse run shows convergence)
PATH_DENSITY = 1000
#: quasi-static rate as a fraction of the reference impact speed
QUASI_STATIC = 1e-9


class Context:
    """Settings, scales and cached experiments shared by the checks."""

    def __init__(self, model, material, radius, quick, debug, speeds, angles, properties, closed_form, log):
        self.model = model
        self.material = material
        self.radius = float(radius)
        self.quick = bool(quick)
        self.debug = bool(debug)
        self.props = properties
        self.closed_form, self.closed_form_source = closed_form
        self.log = log or (lambda msg: None)
        self.mass = sphere_mass(material, self.radius)
        self.inertia = 0.4 * self.mass * self.radius**2
        # a second material and size for the swap and momentum checks (mixing rules, unequal bodies)
        self.partner_material = Material(density=1.5 * material.density, young=1.6 * material.young,
                                         poisson=min(material.poisson + 0.05, 0.45), name="partner")
        self.partner_radius = 1.4 * self.radius
        self.bonded = model.bond_field >= 0
        self.steps = (100, 200) if quick else (200, 400)
        self.study = (25, 50, 100, 200, 400) if quick else (25, 50, 100, 200, 400, 800)
        self.figures: list = []
        self._cache: dict = {}
        self._calibrate(speeds)
        if angles is None:
            angles = (30.0, 60.0, 85.0) if quick else (5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 75.0, 80.0,
                                                         84.0, 87.0)
        self.angles = tuple(float(a) for a in angles)

    # ---------------------------------------------------------------- probes
    def probe(self, overlap, *, wall=False, swap=False, **kw):
        """Probe the law between two spheres of the battery's radius and material (``wall``: a
        sphere and a wall; ``swap``: the unequal pair of the swap check, from either side)."""
        if wall:
            kw.update(radius=self.radius, partner_radius=math.inf, material=self.material)
        elif swap is None:
            kw.update(radius=self.radius, partner_radius=self.partner_radius, material=self.material,
                      partner_material=self.partner_material)
        elif swap:
            kw.update(radius=self.partner_radius, partner_radius=self.radius, material=self.partner_material,
                      partner_material=self.material)
        else:
            kw.update(radius=self.radius, partner_radius=self.radius, material=self.material)
        return probe(self.model, overlap, debug=self.debug, **kw)

    def bond_history(self, overlap=0.0, swap=None):
        """History of a new bond at ``overlap`` between the probe's two spheres (bonded models)."""
        if swap is None:
            ri = rj = self.radius
            mi, mj = self.material, self.material
        else:
            ri, rj, mi, mj = self.radius, self.partner_radius, self.material, self.partner_material
            if swap:
                ri, rj, mi, mj = rj, ri, mj, mi
        params = self.model.pair_table((mi, mj))[0, 1]
        info = dict(overlap=np.array([float(overlap)]), radius_i=np.array([ri]), radius_j=np.array([rj]),
                    mass_i=np.array([sphere_mass(mi, ri)]), mass_j=np.array([sphere_mass(mj, rj)]))
        return np.asarray(self.model.initial_bond_history(info, params[None]), dtype=float)[0]

    def _calibrate(self, speeds):
        """Quasi-static loading on a wall to 5 % of the radius: the impact speeds of the sweep."""
        r_ = self.radius
        d = np.linspace(0.0, MAX_SWEEP_OVERLAP * r_, 2001)
        rate = 1e-6 * r_  # m/s: a slow approach (the reference speed is not known yet)
        res = self.probe(d, wall=True, dt=(d[1] - d[0]) / rate)
        f = res.normal_force
        work = np.concatenate([[0.0], np.cumsum(0.5 * (f[1:] + f[:-1]) * np.diff(d))])
        self.loading_curve = (d, f)
        if work[-1] > 0.0 and np.all(np.isfinite(work)):
            v = np.sqrt(2.0 * np.maximum(work, 0.0) / self.mass)
            self.v_max = float(v[-1])
            self.speed_note = (f"v_max = {fmt(self.v_max)} m/s compresses the contact quasi-statically to "
                               f"{MAX_SWEEP_OVERLAP:g} R")
        else:
            v = None
            self.v_max = 1.0
            self.speed_note = "the quasi-static loading stores no energy: speeds 0.01-1 m/s"
        self.v_ref = self.v_max / 10.0
        if speeds is None:
            speeds = np.geomspace(self.v_max / 100.0, self.v_max, 3 if self.quick else 9)
        self.speeds = tuple(float(s) for s in speeds)
        if v is not None:
            k = int(np.searchsorted(v, self.v_ref))
            self.d_ref = float(np.interp(self.v_ref, v[max(k - 1, 0):k + 1], d[max(k - 1, 0):k + 1]))
        else:
            self.d_ref = 0.005 * r_
        self.f_ref = float(np.interp(self.d_ref, d, f))

    def add_panels(self, name, title, panels) -> None:
        """Add panels to the figure ``name`` (created with ``title`` on first use)."""
        for fig in self.figures:
            if fig["name"] == name:
                fig["panels"].extend(panels)
                return
        self.figures.append(dict(name=name, title=title, panels=list(panels)))

    def scales(self) -> dict:
        return {"radius_m": self.radius, "mass_kg": self.mass, "v_max_m_s": self.v_max, "v_ref_m_s": self.v_ref,
                "reference_overlap_m": self.d_ref, "reference_force_N": self.f_ref, "speeds_m_s": list(self.speeds),
                "angles_deg": list(self.angles), "note": self.speed_note}

    # ---------------------------------------------------------------- paths
    def path(self, legs, rate, density=PATH_DENSITY, start=None, bounds=False):
        """Samples of a piecewise-linear path in (overlap, s_x, s_y, theta_x, theta_y, theta_z).

        ``legs``: target states (6-vectors, m and rad); samples per leg proportional to its length
        (angles counted as arc length on the radius); the time step makes the path's speed ``rate``
        (m/s).  Returns ``(q (T+1, 6), dt)``, and with ``bounds`` the index of each leg's last sample."""
        q = [np.zeros(6) if start is None else np.asarray(start, dtype=float)]
        ends = []
        scale = np.array([1.0, 1.0, 1.0, self.radius, self.radius, self.radius])
        step = self.d_ref / density
        for target in legs:
            target = np.asarray(target, dtype=float)
            length = float(np.linalg.norm((target - q[-1]) * scale))
            n = max(int(math.ceil(length / step - 1e-9)), 1)
            q.extend(q[-1] + (target - q[-1]) * (np.arange(1, n + 1) / n)[:, None])
            ends.append(len(q) - 1)
        q = np.array(q)
        return (q, step / rate, ends) if bounds else (q, step / rate)

    def probe_path(self, q, dt, **kw):
        tangential = np.zeros((len(q), 3))
        tangential[:, :2] = q[:, 1:3]
        return self.probe(q[:, 0], tangential=tangential, rotation=q[:, 3:6], dt=dt, **kw)

    # ---------------------------------------------------------------- impacts
    def wall_impact(self, vn, vt=0.0, steps=None, t_est=None):
        """A sphere hits the plane z = 0 with velocity (vt, 0, -vn); ``steps`` per contact duration
        ``t_est`` (default: the model's default time step).  Returns the measured quantities."""
        r_ = self.radius

        def build(gap):
            scene = Scene(gravity=(0.0, 0.0, 0.0))
            scene.add_sphere(position=(0.0, 0.0, r_ + gap), radius=r_, material=self.material, velocity=(vt, 0.0, -vn))
            scene.add_wall(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), material=self.material)
            return Simulation(scene, self.model, dt=None, threads=1, debug=self.debug)

        sim = build(1e-6 * r_)
        dt = sim.dt
        if steps is not None and t_est is not None and math.isfinite(t_est):
            dt = min(t_est / steps, sim.stability_limit)
        # the first touch at a step boundary, after whole steps of free flight: where it falls within
        # a step would otherwise make the result jitter from one time step to the next by about the
        # error of the step that starts the contact, which spoils the extrapolation to dt -> 0
        gap0 = max(1, math.ceil(1e-6 * r_ / (vn * dt))) * vn * dt
        sim = build(gap0)
        sim.dt = dt
        # how long to wait for the separation: 50 times the (quasi-static) estimate pi d_max / v
        d = self._overlap_for_speed(vn)
        limit = 50.0 * math.pi * d / vn if t_est is None or not math.isfinite(t_est) else 50.0 * t_est
        return _run_wall_impact(sim, r_, gap0, vn, vt, limit, self.inertia)

    def _overlap_for_speed(self, v):
        d, f = self.loading_curve
        work = np.concatenate([[0.0], np.cumsum(0.5 * (f[1:] + f[:-1]) * np.diff(d))])
        target = 0.5 * self.mass * v * v
        k = np.flatnonzero(work >= target)
        return float(d[k[0]]) if len(k) else float(d[-1])

    def impact_series(self, vn, vt=0.0, steps=None):
        """Default-dt run (gives the duration estimate), then runs at ``steps`` per contact."""
        key = ("series", vn, vt, steps or self.steps)
        if key in self._cache:
            return self._cache[key]
        coarse = self.wall_impact(vn, vt)
        runs = {}
        for n in steps or self.steps:
            runs[n] = coarse if coarse["captured"] else self.wall_impact(vn, vt, steps=n, t_est=coarse["duration"])
        out = {"default": coarse, "runs": runs}
        self._cache[key] = out
        return out

    def convergence(self):
        """The time-step study at the reference speed (cached): e and t_c at each resolution, the
        observed orders, the extrapolated values."""
        if "study" in self._cache:
            return self._cache["study"]
        series = self.impact_series(self.v_ref, steps=self.study)
        ns = list(self.study)
        out = {"steps": ns, "default": series["default"], "captured": series["default"]["captured"]}
        for key in ("restitution", "duration"):
            x = np.array([series["runs"][n][key] for n in ns], dtype=float)
            diffs = np.abs(np.diff(x))
            p = 1.0
            if len(diffs) >= 2 and diffs[-1] > 0 and diffs[-2] > 0:
                # the order at the fine end of the study, the asymptotic one an extrapolation to
                # dt -> 0 needs (the coarse runs are not yet in the asymptotic range: their changes
                # shrink more slowly, and an average over the whole study under-estimates the order)
                p = float(np.clip(math.log2(diffs[-2] / diffs[-1]), 0.5, 4.0))
            extrap = x[-1] + (x[-1] - x[-2]) / (2.0**p - 1.0) if len(x) >= 2 and np.all(np.isfinite(x[-2:])) else x[-1]
            out[key] = {"values": x, "differences": diffs, "order": p, "extrapolated": float(extrap)}
        self._cache["study"] = out
        return out

    def extrapolate(self, runs, key):
        """Richardson extrapolation of ``key`` from the two resolutions of ``runs`` with the order
        observed in the time-step study."""
        n1, n2 = self.steps
        x1, x2 = runs[n1][key], runs[n2][key]
        if not (math.isfinite(x1) and math.isfinite(x2)):
            return x2
        p = self.convergence()[key]["order"] if not self.convergence()["captured"] else 1.0
        ratio = n2 / n1
        return x2 + (x2 - x1) / (ratio**p - 1.0)


def _run_wall_impact(sim, radius, gap0, vn, vt, limit, inertia) -> dict:
    """Step a one-sphere wall impact until the sphere has left the wall (or ``limit`` s)."""
    st = sim.state
    t, gaps = [sim.time], [float(st.positions[0, 2] - radius)]
    fmax, fmin = 0.0, math.inf
    started = ended = False
    ke0 = 0.5 * float(sim.model.mass[0]) * (vn * vn + vt * vt)
    while sim.time < limit:
        sim.run(steps=1)
        g = float(st.positions[0, 2] - radius)
        t.append(sim.time)
        gaps.append(g)
        fz = float(st.forces[0, 2])
        fmax = max(fmax, fz)
        if g < 0.0 or sim.n_contacts():
            fmin = min(fmin, fz)
        started = started or g < 0.0
        if started and g > 0.0 and st.velocities[0, 2] > 0.0 and sim.n_contacts() == 0:
            ended = True
            break
    t, gaps = np.asarray(t), np.asarray(gaps)
    v, w = sim.velocities[0], sim.angular_velocities[0]
    inside = np.flatnonzero(gaps < 0.0)
    out = {"dt": sim.dt, "steps": sim.step, "max_overlap": float(-gaps.min()) if len(inside) else 0.0,
           "max_force": fmax, "min_force": fmin, "velocity": v, "spin": w, "captured": not ended}
    m = float(sim.model.mass[0])
    out["kinetic_ratio"] = (0.5 * m * float(v @ v) + 0.5 * inertia * float(w @ w)) / ke0
    if not ended:
        out.update(restitution=0.0, duration=math.inf)
        return out
    a, b = inside[0], inside[-1]

    def cross(k):
        return t[k] + (t[k + 1] - t[k]) * gaps[k] / (gaps[k] - gaps[k + 1])

    out.update(restitution=float(v[2] / vn), duration=float(cross(b) - cross(a - 1)))
    return out
