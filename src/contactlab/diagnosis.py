"""Why a run stopped: the diagnosis of a blow-up from the numbers at the step it stopped.

The step kernels raise nothing: they set flags (an overlap beyond ``max_overlap`` times the
smaller radius, a non-finite position or velocity).  :func:`diagnose` then reads the state and the
contact table and names the cause that the numbers support, as the ``cause`` of the
:class:`~contactlab.errors.SimulationBlowUp` it returns, with the numbers in ``details``:

``"law_non_finite"``
    The contact law returned a non-finite force or torque for a contact (the law and the contact
    are named, with the overlap and the relative velocity it was given).
``"time_step"``
    The time step is near or above the stability limit (``dt >= NEAR_LIMIT`` times it) and the
    overlap is more than an impact at the measured speed explains, or the state is no longer
    finite: the explicit integrator is unstable.  The fix is a smaller ``dt``.
``"soft_contact"``
    The time step is well below the limit, and the overlap is what the law's stiffness gives for
    the impact speed (the expected peak overlap of a head-on elastic impact is estimated from the
    law itself, probed quasi-statically) or for the load the contact carries.  That is physics,
    not a numerical failure: allow it (``max_overlap=...``, ``[simulation] max_overlap`` in a
    scene file), or stiffen the contact.
``"impact_speed"``
    The bodies closed more in one step than the guard's overlap: the step cannot resolve an impact at
    that speed (the stability limit counts the contacts' stiffness, not how fast bodies approach).
    The message names the speed, where it comes from (the scene's initial velocities, gravity over
    the time run, a wall's motion), the step that resolves it, and what the law would give at that
    speed with a small step.
``"too_fast"``
    A body moves more than its own radius in one step (raised by the run monitor, and before a
    run by :func:`check_speeds`): it can pass through another body between two steps unseen.
``"driven_body"``
    A body whose motion is prescribed (a moving wall or mesh, a kinematic sphere) pushes into a
    body that cannot get away; no force slows a prescribed motion, so the overlap grows at the
    driven speed whatever the time step.
``"state_non_finite"``
    A position or velocity became non-finite while the forces were finite and the step is well
    below the limit (for example a value set by hand).

Bodies interpenetrating at the start are refused before the run, with an
:class:`~contactlab.errors.InputError` (see :func:`initial_overlap_error`).
"""
from __future__ import annotations

import math

import numpy as np

from .engine import layout
from .engine.contact_geometry import pair_geometry
from .errors import InputError, SimulationBlowUp
from .geometry.shapes import KIND_NAMES
from .observables import pair_data
from .probe import probe
from .stability import default_dt_fraction

__all__ = ["diagnose", "initial_overlap_error", "expected_peak_overlap", "loading_work", "check_speeds", "NEAR_LIMIT",
           "CAUSES"]

#: a time step at least this fraction of the stability limit is "near" it
NEAR_LIMIT = 0.5
#: energy created by the run (balance error over the energy that changed form) beyond which a step
#: near the limit is taken as unstable
ENERGY_CREATED = 0.02

CAUSES = ("law_non_finite", "time_step", "impact_speed", "soft_contact", "driven_body", "energy_created",
          "state_non_finite", "too_fast")

#: how to allow a larger overlap, formatted with the suggested value
_ALLOW = ("cl.Simulation(..., max_overlap={0:g}) or, in a scene file, [simulation] max_overlap = {0:g} (the "
          "stability limit is then evaluated at that overlap and may be smaller)")


def body_name(model, b: int) -> str:
    """``sphere 3``, ``ellipsoid 4``, ... for messages."""
    return f"{KIND_NAMES[int(model.shape_kind[int(b)])]} {int(b)}"


def _partner_name(model, c: dict, k: int) -> str:
    if c["j"][k] >= 0:
        return body_name(model, c["j"][k])
    if c["wall"][k] >= 0:
        return f"wall {c['wall'][k]}"
    q = int(c["mesh"][k])
    return f"mesh {q} ({model.mesh_names[q]}, triangle {c['triangle'][k]})"


def _fmt_pct(x: float) -> str:
    return f"{100.0 * x:.3g}%"


# ---------------------------------------------------------------------------------------- estimate
def loading_work(contact_model, overlap: np.ndarray, *, radius_i: float, radius_j: float, material_i, material_j,
                 mass_i: float, mass_j: float, speed: float) -> tuple[np.ndarray, np.ndarray]:
    """Work (J) the law takes up along a head-on loading from touch to each of ``overlap`` (m,
    increasing from 0), and its normal force (N) there: the bodies touch at ``speed`` (m/s; a law such as Hunt-Crossley scales
    its damping by the speed at touch) and then load at ``1e-4 * speed``, so that the
    rate-dependent damping takes a negligible part.  The law runs as plain Python (nothing is
    compiled); raises whatever the law raises.
    """
    speed = max(abs(speed), 1e-9)
    delta = np.asarray(overlap, dtype=float)
    first = 1e-9 * max(float(delta[-1]), 1e-300)
    # two samples at the touch speed, then the slow loading
    path = np.concatenate([[0.0, first, 2.0 * first], delta[1:] + 2.0 * first])
    time = np.concatenate([[0.0, first / speed, 2.0 * first / speed],
                           2.0 * first / speed + delta[1:] / (1e-4 * speed)])
    r = probe(contact_model, overlap=path, time=time, radius=radius_i, partner_radius=radius_j, material=material_i,
              partner_material=material_j, mass=mass_i, partner_mass=mass_j, debug=True)
    f = np.where(np.isfinite(r.normal_force), r.normal_force, 0.0)
    work = np.concatenate([[0.0], np.cumsum(0.5 * (f[1:] + f[:-1]) * np.diff(path))])
    return np.concatenate([[0.0], work[3:]]), np.concatenate([[0.0], f[3:]])


def expected_peak_overlap(contact_model, *, overlap: float, closing_speed: float, radius_i: float, radius_j: float,
                          material_i, material_j, mass_i: float, mass_j: float) -> dict | None:
    """The peak overlap (m) of the head-on impact that is now at ``overlap`` (m) and closing at
    ``closing_speed`` (m/s), without dissipation, from the law's own force along the loading.

    The relative kinetic energy along the normal plus the work the law took up to ``overlap``
    is the kinetic energy of the approach (gravity and other contacts neglected); the peak is
    where the law's loading work reaches it (:func:`loading_work`, up to the smaller radius).
    Returns ``None`` when the masses are both infinite, else a dict with ``peak`` (m), ``reached``
    (False: the law does not stop the impact within the smaller radius; ``peak`` is then that
    radius), ``speed`` (m/s, the approach speed), ``energy`` (J), ``effective_mass`` (kg),
    ``stiffness`` (N/m, the law's tangent stiffness at ``overlap``) and ``local_limit`` (s, the
    explicit step limit ``2 / omega`` of an undamped oscillation on that stiffness).
    """
    m_star = _effective_mass(mass_i, mass_j)
    if not math.isfinite(m_star):
        return None
    if math.isinf(mass_i):   # the probe moves body i: let it be the free one (the law is symmetric)
        radius_i, radius_j, material_i, material_j, mass_i, mass_j = (radius_j, radius_i, material_j, material_i,
                                                                      mass_j, mass_i)
    r_min = min(radius_i, radius_j)
    grid = np.linspace(0.0, r_min, 401)
    kinetic = 0.5 * m_star * max(closing_speed, 0.0) ** 2
    speed = max(closing_speed, 1e-3)
    for _ in range(3):  # the touch speed the law sees depends on the answer: a fixed point, fast
        work, force = loading_work(contact_model, grid, radius_i=radius_i, radius_j=radius_j, material_i=material_i,
                                   material_j=material_j, mass_i=mass_i, mass_j=mass_j, speed=speed)
        energy = kinetic + max(float(np.interp(overlap, grid, work)), 0.0)
        new_speed = math.sqrt(2.0 * energy / m_star)
        if abs(new_speed - speed) <= 1e-3 * speed:
            speed = new_speed
            break
        speed = new_speed
    # the law's tangent stiffness at the present overlap, and the step limit of that oscillation
    stiffness = float(np.interp(overlap, grid, np.gradient(force, grid)))
    local_limit = 2.0 / math.sqrt(stiffness / m_star) if stiffness > 0.0 else math.inf
    out = dict(speed=speed, energy=energy, effective_mass=m_star, stiffness=stiffness, local_limit=local_limit)
    above = np.flatnonzero(work >= energy)
    if len(above) == 0:
        return dict(out, peak=float(r_min), reached=False)
    k = int(above[0])
    if k == 0:
        return dict(out, peak=0.0, reached=True)
    w0, w1 = work[k - 1], work[k]
    frac = (energy - w0) / (w1 - w0) if w1 > w0 else 1.0
    return dict(out, peak=float(grid[k - 1] + frac * (grid[k] - grid[k - 1])), reached=True)


# ---------------------------------------------------------------------------------------- the pair
def _pair(sim, c: dict, k: int) -> dict:
    """Masses, radii, materials, velocities and motion of the two sides of contact row ``k``."""
    m, s = sim.model, sim.state
    i = int(c["i"][k])
    j = int(c["j"][k])
    w = int(c["wall"][k])
    q = int(c["mesh"][k])
    n = np.asarray(c["normal"][k], dtype=float)
    side_i = dict(name=body_name(m, i), radius=float(m.contact_radius[i]), material=m.materials[int(m.material[i])],
                  mass=math.inf if m.fixed[i] else float(m.mass[i]), velocity=s.velocities[i].copy(),
                  driven=bool(m.fixed[i]) and bool(np.any(s.velocities[i]) or np.any(s.angular_velocities[i])),
                  body=i, fixed=bool(m.fixed[i]))
    if j >= 0:
        side_j = dict(name=body_name(m, j), radius=float(m.contact_radius[j]),
                      material=m.materials[int(m.material[j])], mass=math.inf if m.fixed[j] else float(m.mass[j]),
                      velocity=s.velocities[j].copy(), body=j, fixed=bool(m.fixed[j]),
                      driven=bool(m.fixed[j]) and bool(np.any(s.velocities[j]) or np.any(s.angular_velocities[j])))
    elif w >= 0:
        side_j = dict(name=f"wall {w}", radius=math.inf, material=m.materials[int(m.wall_material[w])],
                      mass=math.inf, velocity=s.wall_velocities[w].copy(), body=-1, fixed=True,
                      driven=bool(np.any(s.wall_velocities[w])), servo=_servo_controlled(s, layout.SERVO_WALL, w))
    else:
        side_j = dict(name=_partner_name(m, c, k), radius=math.inf, material=m.materials[int(m.mesh_material[q])],
                      mass=math.inf, velocity=s.mesh_velocities[q].copy(), body=-1, fixed=True,
                      driven=bool(np.any(s.mesh_velocities[q]) or np.any(s.mesh_angular_velocities[q])),
                      servo=_servo_controlled(s, layout.SERVO_MESH, q))
    # rate of change of the overlap: the two centres approaching along the normal (i -> j)
    closing = float(np.dot(side_i["velocity"] - side_j["velocity"], n))
    return dict(i=side_i, j=side_j, normal=n, closing_speed=closing, overlap=float(c["overlap"][k]),
                normal_force=float(c["normal_force"][k]))


def _effective_mass(a: float, b: float) -> float:
    inv = (0.0 if math.isinf(a) else 1.0 / a) + (0.0 if math.isinf(b) else 1.0 / b)
    return math.inf if inv == 0.0 else 1.0 / inv


def _held_by(sim, c: dict, k: int, body: int) -> list[str]:
    """Names of what else presses on ``body`` (its other active contacts)."""
    m = sim.model
    names = []
    for r in np.flatnonzero(((c["i"] == body) | (c["j"] == body)) & (c["normal_force"] > 0.0)):
        if r == k:
            continue
        if c["i"][r] == body:
            names.append(_partner_name(m, c, int(r)))
        else:
            names.append(body_name(m, c["i"][r]))
    return names


# ---------------------------------------------------------------------------------------- table rows
def _rows(sim, sel) -> dict:
    """:meth:`Simulation.contacts`-style arrays of the candidate pairs at table rows ``sel`` (only
    those: a diagnosis of a million-body run must not build the arrays of every pair)."""
    t = sim.table
    sel = np.asarray(sel, dtype=np.int64)
    return pair_data(sim.model, sim.state, t, sim.contact_model, t.pair_i[sel].astype(np.int64),
                     t.pair_j[sel].astype(np.int64), sel)


#: table rows scanned at a time by the initial-overlap check (its temporaries, ~80 B per active
#: row, stay a few MB instead of growing with the scene: at 1e6 spheres they set the peak memory)
_SCAN_ROWS = 1 << 16


def _overlap_ratios(sim, lo: int = 0, hi: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Active rows of the contact table (of rows ``lo <= k < hi``, default all), their overlaps
    (m) and overlap / smaller contact radius."""
    t, m = sim.table, sim.model
    n = t.n_pairs if hi is None else min(hi, t.n_pairs)
    rows = lo + np.flatnonzero(t.status[lo:n] == layout.ACTIVE)
    overlap = pair_geometry(sim.model, sim.state, t, rows)[1]
    cr = m.contact_radius
    i = t.pair_i[rows].astype(np.int64)
    j = t.pair_j[rows].astype(np.int64)
    body = j < m.n_spheres
    rmin = np.where(body, np.minimum(cr[i], cr[np.where(body, j, 0)]), cr[i])
    return rows, overlap, overlap / rmin


# ---------------------------------------------------------------------------------------- diagnosis
def diagnose(sim) -> SimulationBlowUp:
    """The :class:`SimulationBlowUp` for the flags of the last kernel call of ``sim``."""
    s, m = sim.state, sim.model
    when = f"at t={s.time:.6g} s (step {s.step})"
    dt, limit = sim.dt, sim.stability_limit
    dt_ratio = dt / limit if math.isfinite(limit) and limit > 0 else 0.0
    base = dict(time=s.time, step=s.step, dt=dt, stability_limit=limit, dt_ratio=dt_ratio)
    law_name = repr(sim.contact_model)  # names the slot laws of a composed model too
    with np.errstate(over="ignore", invalid="ignore"):
        # a state can be finite component by component but overflow in any arithmetic
        vals = np.hstack([s.positions, s.velocities, s.angular_velocities])
        bad_state = ~np.all(np.isfinite(vals), axis=1) | ~np.isfinite((vals * vals).sum(axis=1))
    t = sim.table
    n = t.n_pairs
    with np.errstate(invalid="ignore"):
        outputs = t.out[:n, layout.OUT_FORCE: layout.OUT_TORQUE_J + 3]
        bad_rows = np.flatnonzero(~np.all(np.isfinite(outputs), axis=1))
    if len(bad_rows):
        c = _rows(sim, bad_rows[:1])
        k = 0
        i, other = body_name(m, c["i"][k]), _partner_name(m, c, k)
        rel = np.asarray(c["relative_velocity"][k])
        return SimulationBlowUp(
            f"{when}: the contact law {law_name} returned a non-finite force or torque for the contact between {i} "
            f"and {other} (overlap {c['overlap'][k]:.6g} m, relative velocity {rel.tolist()} m/s, normal "
            f"{np.asarray(c['normal'][k]).tolist()}). The law, not the integrator, produced it: evaluate it on "
            f"this overlap with cl.probe(model, overlap=[...], dt=..., debug=True), or run the simulation with "
            f"debug=True and stop in the law.", time=s.time, step=s.step, cause="law_non_finite",
            particles=tuple(int(p) for p in (c["i"][k], c["j"][k]) if p >= 0),
            details=dict(base, law=law_name, overlap=float(c["overlap"][k]), contact=(i, other)))
    if bad_state.any():
        idx = np.flatnonzero(bad_state)
        p = int(idx[0])
        what = (f"{body_name(m, p)} has a non-finite position/velocity (position {s.positions[p].tolist()}, "
                f"velocity {s.velocities[p].tolist()}); {len(idx)} body(ies) affected")
        if dt_ratio >= NEAR_LIMIT:
            return SimulationBlowUp(
                f"{when}: {what}. Cause: the time step dt={dt:.3g} s is {dt_ratio:.2g} of the stability limit "
                f"{limit:.3g} s ({sim.limiting_contact}): the explicit integration is unstable there; use a smaller "
                f"dt (dt=None picks {default_dt_fraction(sim.contact_model):g} of the limit).", time=s.time, step=s.step,
                cause="time_step", particles=tuple(int(q) for q in idx[:10]), details=base)
        return SimulationBlowUp(
            f"{when}: {what}. The contact forces at the last evaluation were finite and dt={dt:.3g} s is "
            f"{dt_ratio:.2g} of the stability limit {limit:.3g} s, so neither the law nor the step made it: look "
            f"for a non-finite value set by hand (set_velocity, the state arrays).", time=s.time, step=s.step,
            cause="state_non_finite", particles=tuple(int(q) for q in idx[:10]), details=base)
    return _overlap_blowup(sim, when, base, law_name)


def _overlap_blowup(sim, when: str, base: dict, law_name: str) -> SimulationBlowUp:
    rows, _, ratios = _overlap_ratios(sim)
    if len(rows) == 0:  # pragma: no cover - the flag is only raised by an active contact
        return SimulationBlowUp(f"{when}: an overlap exceeded max_overlap={sim.max_overlap:g}", time=sim.state.time,
                                step=sim.state.step, cause="", details=base)
    worst = int(np.argmax(ratios))
    row = int(rows[worst])
    t = sim.table
    i_body, j_raw = int(t.pair_i[row]), int(t.pair_j[row])
    # the worst contact and every other contact of its two bodies (what holds them)
    mine = rows[(t.pair_i[rows] == i_body) | (t.pair_j[rows] == i_body)
                | ((t.pair_i[rows] == j_raw) | (t.pair_j[rows] == j_raw)) & (j_raw < sim.model.n_spheres)]
    mine = np.concatenate([[row], mine[mine != row]])
    c = _rows(sim, mine)
    ratio = float(ratios[worst])
    pair = _pair(sim, c, 0)
    a, b = pair["i"], pair["j"]
    r_small = pair["overlap"] / ratio if ratio > 0 else min(a["radius"], b["radius"])
    overlap = pair["overlap"]
    particles = tuple(int(p) for p in (c["i"][0], c["j"][0]) if p >= 0)
    head = (f"{when}: the overlap between {a['name']} and {b['name']} reached {overlap:.6g} m, "
            f"{_fmt_pct(ratio)} of the smaller radius {r_small:.4g} m (the guard max_overlap={sim.max_overlap:g} "
            f"stops a run beyond {_fmt_pct(sim.max_overlap)}).")
    details = dict(base, overlap=overlap, overlap_ratio=ratio, max_overlap=sim.max_overlap,
                   closing_speed=pair["closing_speed"], normal_force=pair["normal_force"], law=law_name)
    dt, limit, dt_ratio = base["dt"], base["stability_limit"], base["dt_ratio"]

    def blowup(cause: str, text: str) -> SimulationBlowUp:
        return SimulationBlowUp(f"{head} Cause: {text}", time=sim.state.time, step=sim.state.step, cause=cause,
                                particles=particles, details=details)

    # 1. a prescribed motion pushing one of the two bodies into something that holds it
    free_bodies = {side["body"] for side in (a, b) if side["body"] >= 0 and not side["fixed"]}
    for r in range(len(c["i"])):
        other = pair if r == 0 else _pair(sim, c, r)
        for driven, free in ((other["i"], other["j"]), (other["j"], other["i"])):
            if not driven["driven"] or free["body"] not in free_bodies:
                continue
            n = other["normal"] if driven is other["i"] else -other["normal"]   # from the driven side to the free
            push = float(np.dot(driven["velocity"], n))
            held = _held_by(sim, c, r, free["body"])
            if push <= 0.0 or not held:
                continue
            details.update(driven=driven["name"], driven_speed=push, held_by=held)
            if driven.get("servo"):
                return blowup("driven_body", (
                    f"{driven['name']} moves under servo control, {push:.4g} m/s into {free['name']}, which is "
                    f"held by {', '.join(held[:3])}{' ...' if len(held) > 3 else ''}; its target force is not "
                    f"reached before this contact's overlap passes the guard (dt={dt:.3g} s is {dt_ratio:.2g} of "
                    f"the stability limit). Give it a lower max_speed (sim.servo_wall(..., max_speed=...)) so that "
                    f"the bodies have time to rearrange, a lower target, or stiffer contacts."))
            return blowup("driven_body", (
                f"{driven['name']} moves with a prescribed velocity, {push:.4g} m/s into {free['name']}, which is "
                f"held by {', '.join(held[:3])}{' ...' if len(held) > 3 else ''}; no force slows a prescribed "
                f"motion, so the overlaps grow at the driven speed whatever the time step (dt={dt:.3g} s is "
                f"{dt_ratio:.2g} of the stability limit). Stop or reverse that motion in time "
                f"(sim.set_wall_velocity, set_mesh_velocity or set_velocity between runs), or move it more slowly."))

    # the law's own stiffness along this contact's loading: the impact's peak and the local step limit
    m_star = _effective_mass(a["mass"], b["mass"])
    try:
        estimate = expected_peak_overlap(sim.contact_model, overlap=overlap, closing_speed=pair["closing_speed"],
                                         radius_i=a["radius"], radius_j=b["radius"], material_i=a["material"],
                                         material_j=b["material"], mass_i=a["mass"], mass_j=b["mass"])
    except Exception:  # noqa: BLE001 - a law that cannot be probed gets no estimate; the diagnosis goes on
        estimate = None
    local_ratio, stiffness, local_limit = 0.0, None, math.inf
    if estimate is not None:
        stiffness, local_limit = estimate["stiffness"], estimate["local_limit"]
        local_ratio = dt / local_limit if math.isfinite(local_limit) else 0.0
        details.update(expected_peak_overlap=estimate["peak"], expected_peak_ratio=estimate["peak"] / r_small,
                       impact_speed=estimate["speed"], effective_mass=m_star, stiffness=stiffness,
                       local_limit=local_limit, local_dt_ratio=local_ratio)
    near = max(dt_ratio, local_ratio) >= NEAR_LIMIT
    step_text = (f"dt={dt:.3g} s is {dt_ratio:.2g} of the stability limit {limit:.3g} s"
                 + (f" and {local_ratio:.2g} of the limit 2/omega = {local_limit:.3g} s of this contact's stiffness "
                    f"{stiffness:.4g} N/m at this overlap (effective mass {m_star:.4g} kg)" if stiffness else ""))
    # energy the run created (an unstable step pumps energy into the contact's oscillation)
    created = float(sim.summary()["energy_balance_relative"])
    # how much of the contact force the free bodies' net force is: ~1 in an impact (the contact
    # decelerates them), ~0 under a load in equilibrium (a column, a confined packing)
    net = [abs(float(np.dot(sim.state.forces[side["body"]], pair["normal"])))
           for side in (a, b) if side["body"] >= 0 and not side["fixed"]]
    inertial = max(net, default=0.0) / max(abs(pair["normal_force"]), 1e-300)
    details.update(energy_created=created, inertial_share=inertial)

    # 2. the integration is unstable near a limit
    evidence = f"the run has created energy, {_fmt_pct(created)} of what changed form since the start"
    if created > ENERGY_CREATED:
        if near:
            optimistic = (f" The limit the model gives ({limit:.3g} s) is above this contact's: check the law's "
                          f"declared stability (stability=...)." if local_ratio > dt_ratio and local_ratio >= NEAR_LIMIT
                          else "")
            return blowup("time_step", (
                f"the time step: {step_text}; near a limit the explicit integration amplifies the contact's "
                f"oscillation ({evidence}). Use a smaller dt (dt=None picks {default_dt_fraction(sim.contact_model):g} of the "
                f"limit).{optimistic}"))

    # 3. an impact faster than the step resolves: the bodies closed more in one step than the guard
    speed = max(pair["closing_speed"], estimate["speed"] if estimate is not None else 0.0)
    guard = sim.max_overlap * r_small
    if speed * dt > guard and inertial >= 0.5:     # an impact: the contact decelerates the bodies
        details.update(impact_speed=speed, travel_per_step=speed * dt)
        resolving = 0.1 * guard / speed
        source = _speed_source(sim, a, b, speed)
        peak = ""
        if estimate is not None and estimate["reached"]:
            peak = (f" With that step this law's stiffness stops the impact at about {estimate['peak']:.4g} m, "
                    f"{_fmt_pct(estimate['peak'] / r_small)} of the radius")
            if estimate["peak"] > guard:
                suggestion = _suggest_max_overlap(estimate["peak"] / r_small)
                peak += (", above the guard too: " + (f"allow it ({_ALLOW.format(suggestion)}), or " if suggestion
                                                      is not None else "") + "make the contact stiffer or the impact slower")
            peak += "."
        elif estimate is not None:
            peak = " Even with that step this law does not stop the impact within one radius: make it stiffer."
        return blowup("impact_speed", (
            f"an impact at {speed:.4g} m/s ({source}) that the time step cannot resolve: the bodies close "
            f"{speed * dt:.4g} m in one step of dt={dt:.3g} s, more than the {guard:.4g} m overlap the guard allows "
            f"(the stability limit {limit:.3g} s counts the contacts' stiffness, not how fast bodies approach). "
            f"A step that resolves it in ten steps or more: dt <= {resolving:.3g} s, or a slower impact.{peak}"))

    # 4. the law creates energy (the step is well below the limits)
    if created > ENERGY_CREATED:
        return blowup("energy_created", (
            f"{evidence}, although the time step is well below the limits ({step_text}): the contact law creates "
            f"energy (check it with contactlab validate: its energy and objectivity checks), or a value was set by "
            f"hand."))
    note = (f" The time step is near a limit as well ({step_text}); reduce it too." if near else
            f" The time step is not the cause ({step_text}).")

    # 5. an impact: the overlap the law's stiffness gives for the approach speed
    if estimate is not None and inertial >= 0.5:
        peak, speed = estimate["peak"], estimate["speed"]
        if estimate["reached"]:
            suggestion = _suggest_max_overlap(peak / r_small)
            fix = (f"If that overlap is intended (a penalty contact), allow it: {_ALLOW.format(suggestion)}; "
                   if suggestion is not None else "")
            return blowup("soft_contact", (
                f"the contact is soft for the impact speed: an impact at {speed:.4g} m/s (the approach speed from "
                f"the kinetic and stored energy of this pair now; effective mass {m_star:.4g} kg) on this law's "
                f"stiffness peaks at about {peak:.4g} m, {_fmt_pct(peak / r_small)} of the radius (no dissipation "
                f"counted).{note} {fix}otherwise make the contact stiffer (the law's stiffness, or Young's modulus) "
                f"or the impact slower."))
        return blowup("soft_contact", (
            f"the contact is soft for the impact speed: an impact at {speed:.4g} m/s (effective mass {m_star:.4g} kg) "
            f"is not stopped by this law within one radius.{note} Make the contact stiffer (the law's stiffness, or "
            f"Young's modulus) or the impact slower."))

    # 6. a packing compressed by a prescribed motion
    driven = _driven_bodies(sim)
    power = float(sim.state.boundary_power.sum())
    if driven and power > 0.0:
        details.update(driven=driven, boundary_power=power)
        return blowup("driven_body", (
            f"bodies with a prescribed motion ({', '.join(driven[:3])}) are doing work on the bodies ({power:.4g} W "
            f"now): a prescribed motion that compresses a packing raises its forces without bound ({step_text}). "
            f"Stop that motion in time or move it more slowly."))

    # 7. a load in (near) equilibrium: a column, a confined packing
    suggestion = _suggest_max_overlap(ratio * 1.5)
    fix = f"If that is intended, allow it: {_ALLOW.format(suggestion)}; " if suggestion is not None else ""
    stiff = f" (the law's stiffness there: {stiffness:.4g} N/m)" if stiffness else ""
    return blowup("soft_contact", (
        f"the contact is soft for the load it carries: {pair['normal_force']:.4g} N{stiff}, nearly in equilibrium "
        f"(the net force on the bodies along the normal is {_fmt_pct(inertial)} of it).{note} {fix}otherwise make "
        f"the contact stiffer (the law's stiffness, or Young's modulus) or the load smaller."))


def _speed_source(sim, a: dict, b: dict, speed: float) -> str:
    """Where an approach speed comes from, as far as the numbers say: gravity over the time run can
    give it, or not (then the scene's velocities, or a wall's or mesh's motion)."""
    g = float(np.linalg.norm(sim.model.gravity))
    fallen = g * sim.state.time
    moving = [side for side in (a, b) if float(np.linalg.norm(side["velocity"])) > 0.0]
    if any(side["driven"] for side in moving):
        side = next(side for side in moving if side["driven"])
        return f"{side['name']} is driven at {float(np.linalg.norm(side['velocity'])):.4g} m/s"
    if g * sim.dt >= 0.5 * speed:
        return (f"gravity {g:.4g} m/s^2 adds {g * sim.dt:.4g} m/s in one step of {sim.dt:.3g} s: a body resting on "
                f"a contact falls {0.5 * g * sim.dt ** 2:.3g} m into it in one step")
    if fallen >= 0.5 * speed:
        return f"gravity {g:.4g} m/s^2 over the {sim.state.time:.4g} s run gives up to {fallen:.4g} m/s"
    names = " and ".join(f"{side['name']} at {float(np.linalg.norm(side['velocity'])):.4g} m/s" for side in moving)
    return (f"{names} now; gravity gives at most {fallen:.3g} m/s over the {sim.state.time:.3g} s run, so the speed "
            f"comes from the velocities the scene started with, or an earlier collision")


def check_speeds(sim, dt: float, *, before_run: bool):
    """The fastest body against its own radius: one moving more than its radius in a step of ``dt``
    can pass through another between two steps.  Returns the error to raise (an
    :class:`InputError` before a run, a :class:`SimulationBlowUp` with cause ``"too_fast"`` during
    one), or None."""
    s, m = sim.state, sim.model
    if m.n_bodies == 0 or dt is None:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        travel = np.sqrt(np.einsum("ij,ij->i", s.velocities, s.velocities)) * dt / m.radius
    k = int(np.argmax(travel))
    if not travel[k] > 1.0:
        return None
    speed = float(np.linalg.norm(s.velocities[k]))
    text = (f"{body_name(m, k)} moves at {speed:.4g} m/s, {speed * dt:.4g} m in one step of dt={dt:.3g} s, more "
            f"than its radius {float(m.radius[k]):.4g} m: it can pass through other bodies between two steps "
            f"unseen; {int((travel > 1.0).sum())} body(ies) move that fast. ")
    if before_run:
        return InputError(text + f"Check its velocity ({s.velocities[k].tolist()} m/s, SI units), or use "
                                 f"dt <= {0.1 * float(m.radius[k]) / speed:.3g} s.")
    return SimulationBlowUp(f"at t={s.time:.6g} s (step {s.step}): " + text + "Cause: a speed the time step cannot "
                            f"follow; use dt <= {0.1 * float(m.radius[k]) / speed:.3g} s or find what accelerates it.",
                            time=s.time, step=s.step, cause="too_fast", particles=(k,),
                            details=dict(time=s.time, step=s.step, dt=dt, speed=speed, body=k))


def _servo_controlled(state, kind: int, index: int) -> bool:
    """Whether wall or mesh ``index`` (``kind``: ``layout.SERVO_WALL`` or ``SERVO_MESH``) is servo-controlled."""
    si = state.servo_index
    return si is not None and bool(np.any((si[:, layout.SERVO_KIND] == kind) & (si[:, layout.SERVO_TARGET] == index)))


def _driven_bodies(sim) -> list[str]:
    m, s = sim.model, sim.state
    out = [body_name(m, b) for b in np.flatnonzero(m.fixed & (np.any(s.velocities != 0.0, axis=1)
                                                              | np.any(s.angular_velocities != 0.0, axis=1)))]
    out += [f"wall {w}" for w in np.flatnonzero(np.any(s.wall_velocities != 0.0, axis=1))]
    if m.n_meshes:
        out += [f"mesh {q} ({m.mesh_names[q]})" for q in np.flatnonzero(
            np.any(s.mesh_velocities != 0.0, axis=1) | np.any(s.mesh_angular_velocities != 0.0, axis=1))]
    return out


def _suggest_max_overlap(ratio: float) -> float | None:
    """A round ``max_overlap`` above ``ratio`` with some margin, or None if none below 1 fits."""
    want = 1.25 * ratio
    for v in (0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        if v >= want:
            return v
    return None


def initial_overlap_error(sim, tolerance: float) -> InputError | None:
    """An :class:`InputError` naming the deepest pair of bodies that interpenetrate by more than
    ``tolerance`` times the smaller radius after a force evaluation (every shape: the narrow phase
    measured them), or None."""
    n_bad, worst_row, worst_ratio = 0, -1, -np.inf
    for lo in range(0, sim.table.n_pairs, _SCAN_ROWS):
        rows, _, ratios = _overlap_ratios(sim, lo, lo + _SCAN_ROWS)
        bad = ratios > tolerance
        if bad.any():
            n_bad += int(bad.sum())
            k = int(np.argmax(np.where(bad, ratios, -np.inf)))
            if ratios[k] > worst_ratio:  # the first of equal ratios, as over the whole table
                worst_row, worst_ratio = int(rows[k]), float(ratios[k])
    if n_bad == 0:
        return None
    c = _rows(sim, np.array([worst_row]))
    m = sim.model
    return InputError(
        f"{body_name(m, c['i'][0])} and {_partner_name(m, c, 0)} interpenetrate by {c['overlap'][0]:.6g} m "
        f"({_fmt_pct(worst_ratio)} of the smaller radius) at the start; at most {_fmt_pct(tolerance)} is allowed "
        f"(initial_overlap_tolerance={tolerance:g}); {n_bad} pair(s) overlap too much. Move the bodies "
        f"apart (cl.packing.relax_into separates a packing) or raise initial_overlap_tolerance.")
