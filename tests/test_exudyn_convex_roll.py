"""Spec 003 (the convex roll) cross-checked against Exudyn itself (``ObjectContactConvexRoll``).

Exudyn is the code the spec documents, so it is the independent reference here: each test builds
the same scene in both codes, runs Exudyn (its implicit generalized-alpha integrator, at a step
where its own result has converged to ~1 um) and contactlab, and compares.  contactlab runs with
``damping_convention="centre"``, the normal damping of Exudyn's implementation (the roll centre's
velocity; see :mod:`contactlab.laws.convex_roll`); the spec's default form is shown to differ
from Exudyn by more than the tolerance in the drop test, so the comparison can tell them apart.

Exudyn's roll contact always uses the ground plane z = 0 with the normal +z; a slope is made by
tilting gravity.  The roll's reference point is its centre of mass in both codes (a symmetric
hull).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import contactlab as cl

exudyn = pytest.importorskip("exudyn", reason="no exudyn wheel for this platform (pip install exudyn)")

HULL = [-3.6, 0.0, 0.0165]                  # spec 003's test: r(s) = -3.6 s^2 + 0.0165, m
LENGTH = 0.1                                 # m
ROD = 3e-3                                   # m: Exudyn's test takes the inertia of a steel rod of this radius
MASS = 7800.0 * math.pi * ROD**2 * LENGTH    # kg
INERTIA = (0.5 * MASS * ROD**2, MASS * (3 * ROD**2 + LENGTH**2) / 12, MASS * (3 * ROD**2 + LENGTH**2) / 12)
LAW = dict(contact_stiffness=1e3, contact_damping=1.0, dynamic_friction=0.9, static_friction_offset=0.0,
           viscous_friction=0.0, exponential_decay_static=1e-3, friction_proportional_zone=1e-4)
#: Exudyn's step (s): its positions at 0.5 s change by < 2 um from 1e-5 to 2e-6
EXUDYN_STEP = 1e-5


def _rot_y(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def _rot_z(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def exudyn_roll(position, rotation, angular_velocity, gravity, times, step=EXUDYN_STEP):
    """Run Exudyn's ConvexContactTest set-up (with the given initial state and gravity) and return
    the roll's centre and the connector's force (Exudyn's sign: on the ground, +z pushes it down)
    at ``times`` (s): two (len(times), 3) arrays."""
    from exudyn.itemInterface import (MarkerBodyRigid, MarkerNodeRigid, NodeGenericData, ObjectContactConvexRoll,
                                      ObjectGround, SensorBody, SensorObject)
    from exudyn.rigidBodyUtilities import RigidBodyInertia

    system = exudyn.SystemContainer()
    mbs = system.AddSystem()
    ground = mbs.AddObject(ObjectGround(referencePosition=[0.0, 0.0, 0.0]))
    marker_ground = mbs.AddMarker(MarkerBodyRigid(bodyNumber=ground, localPosition=[0.0, 0.0, 0.0]))
    inertia = RigidBodyInertia(mass=MASS, inertiaTensor=np.diag(INERTIA))
    created = mbs.CreateRigidBody(inertia=inertia, nodeType=exudyn.NodeType.RotationEulerParameters,
                                  referencePosition=list(position), referenceRotationMatrix=np.asarray(rotation),
                                  initialAngularVelocity=list(angular_velocity), initialVelocity=[0.0, 0.0, 0.0],
                                  gravity=list(gravity), returnDict=True)
    node, body = created["nodeNumber"], created["bodyNumber"]
    data = mbs.AddNode(NodeGenericData(initialCoordinates=[0.0, 0.0, 0.0], numberOfDataCoordinates=3))
    marker_roll = mbs.AddMarker(MarkerNodeRigid(nodeNumber=node))
    contact = mbs.AddObject(ObjectContactConvexRoll(
        markerNumbers=[marker_ground, marker_roll], nodeNumber=data, contactStiffness=LAW["contact_stiffness"],
        contactDamping=LAW["contact_damping"], dynamicFriction=LAW["dynamic_friction"],
        staticFrictionOffset=LAW["static_friction_offset"], viscousFriction=LAW["viscous_friction"],
        exponentialDecayStatic=LAW["exponential_decay_static"],
        frictionProportionalZone=LAW["friction_proportional_zone"], rollLength=LENGTH, coefficientsHull=HULL))
    s_pos = mbs.AddSensor(SensorBody(bodyNumber=body, storeInternal=True,
                                     outputVariableType=exudyn.OutputVariableType.Position))
    s_force = mbs.AddSensor(SensorObject(objectNumber=contact, storeInternal=True,
                                         outputVariableType=exudyn.OutputVariableType.Force))
    mbs.Assemble()
    settings = exudyn.SimulationSettings()
    settings.timeIntegration.generalizedAlpha.spectralRadius = 0.7
    settings.timeIntegration.endTime = max(times)
    settings.timeIntegration.numberOfSteps = int(round(max(times) / step))
    settings.timeIntegration.verboseMode = 0
    settings.timeIntegration.stepInformation = 0
    settings.solution.file.write = False
    settings.solution.sensors.writePeriod = step
    exudyn.SolveDynamic(mbs, settings)
    pos = mbs.GetSensorStoredData(s_pos)
    force = mbs.GetSensorStoredData(s_force)
    rows = [int(np.argmin(np.abs(pos[:, 0] - t))) for t in times]
    assert np.allclose(pos[rows, 0], times, atol=0.5 * step)
    return pos[rows, 1:4], force[rows, 1:4]


def contactlab_roll(position, rotation, angular_velocity, gravity, times, dt, **law):
    """The same scene in contactlab: the roll's centre and the contact's force on the roll at ``times``."""
    scene = cl.Scene(gravity=tuple(gravity))
    mat = cl.Material(density=1000.0, young=1e7, poisson=0.3, name="roll")
    roll = scene.add_convex_roll(position=position, orientation=rotation, hull_coefficients=HULL, length=LENGTH,
                                 material=mat, mass=MASS, inertia=INERTIA, angular_velocity=angular_velocity)
    scene.add_wall(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), material=mat)
    args = dict(LAW, damping_convention="centre")
    args.update(law)
    sim = cl.Simulation(scene, model=cl.models.ConvexRollContact(**args), dt=dt)
    pos, force = [], []
    for t in times:
        sim.run(duration=t - sim.time)
        pos.append(sim.positions[roll].copy())
        out = sim.convex_roll_output(roll)
        force.append(out["Force"][0] if len(out["Force"]) else np.zeros(3))
    return np.array(pos), np.array(force)


def test_spinning_roll_drop_follows_exudyn():
    """Spec 003's drop test (Exudyn's ConvexContactTest: tilted by pi/16 about y, spun at 1000 rad/s
    about its axis, dropped from 1.2 x 0.0165 m): with Exudyn's damping convention the centre stays
    within 1 mm horizontally and 0.1 mm in height of Exudyn's at 0.1 s and 0.5 s (the issue's
    tolerance; measured 2 um at dt = 2.5e-6 and 7 um at the default step ~5e-5 s, against 0.16 mm
    at 2.5e-6 with the explicit friction).  The spec's form of the damping ends more
    than 1 mm away, so the two conventions are told apart by this scene."""
    rot = _rot_y(math.pi / 16)
    state = ((0.0, 0.0, 1.2 * HULL[-1]), rot, -1000.0 * rot[:, 0], (0.0, 0.0, -9.81))
    times = (0.1, 0.5)
    ref, _ = exudyn_roll(*state, times)
    got, _ = contactlab_roll(*state, times, dt=2.5e-6)
    for k in range(len(times)):
        assert np.hypot(*(got[k, :2] - ref[k, :2])) < 1e-3
        assert abs(got[k, 2] - ref[k, 2]) < 1e-4
    assert np.linalg.norm(ref[1, :2] - ref[0, :2]) > 0.05            # it did travel: 6 cm
    spec, _ = contactlab_roll(*state, times, dt=2.5e-6, damping_convention="contact_point")
    assert np.hypot(*(spec[1, :2] - ref[1, :2])) > 1e-3
    # the default step (~5e-5 s with the implicit friction) is within the tolerance too
    default, _ = contactlab_roll(*state, times, dt=None)
    for k in range(len(times)):
        assert np.hypot(*(default[k, :2] - ref[k, :2])) < 1e-3
        assert abs(default[k, 2] - ref[k, 2]) < 1e-4


def test_roll_without_spin_rolls_down_a_slope_as_in_exudyn_and_in_theory():
    """The roll (axis horizontal, along y) released at rest on a 0.1 rad slope (gravity tilted)
    rolls down without slipping: its centre follows Exudyn's within 0.02 mm over 0.3 s, and both
    follow rigid-body rolling on the hull's equator, ``x = a t^2 / 2`` with
    ``a = g sin(beta) / (1 + I_axis / (m r^2))`` (r = 0.0165 m less the static overlap), within 1 %
    of the distance (the landing transient of the first ~20 ms is the difference)."""
    beta = 0.1
    g = 9.81
    gravity = (g * math.sin(beta), 0.0, -g * math.cos(beta))
    rot = _rot_z(math.pi / 2)                                           # roll axis (local x) along y
    overlap = MASS * g * math.cos(beta) / LAW["contact_stiffness"]
    state = ((0.0, 0.0, HULL[-1] - overlap), rot, (0.0, 0.0, 0.0), gravity)
    times = (0.1, 0.2, 0.3)
    ref, _ = exudyn_roll(*state, times)
    got, _ = contactlab_roll(*state, times, dt=2.5e-6)
    np.testing.assert_allclose(got, ref, rtol=0, atol=2e-5)
    r = HULL[-1] - overlap
    a = g * math.sin(beta) / (1.0 + INERTIA[0] / (MASS * r * r))
    for k, t in enumerate(times):
        assert got[k, 0] == pytest.approx(0.5 * a * t * t, rel=0.01)
        assert ref[k, 0] == pytest.approx(0.5 * a * t * t, rel=0.01)
    assert np.all(np.abs(got[:, 1]) < 1e-9)                            # straight down the slope


def test_contact_force_at_rest_equals_exudyns_and_the_weight():
    """A roll lying still on the ground (axis horizontal, placed at its static overlap): the contact
    force of both codes after 0.2 s equals the weight within 1 % (and each other's within 1 %)."""
    overlap = MASS * 9.81 / LAW["contact_stiffness"]
    state = ((0.0, 0.0, HULL[-1] - 0.9 * overlap), np.eye(3), (0.0, 0.0, 0.0), (0.0, 0.0, -9.81))
    times = (0.2,)
    _, ref = exudyn_roll(*state, times)
    _, got = contactlab_roll(*state, times, dt=1e-5)
    weight = MASS * 9.81
    assert got[0, 2] == pytest.approx(weight, rel=0.01)                 # on the roll, upwards
    assert abs(ref[0, 2]) == pytest.approx(weight, rel=0.01)
    assert got[0, 2] == pytest.approx(abs(ref[0, 2]), rel=0.01)
    assert np.linalg.norm(got[0, :2]) < 1e-3 * weight                   # no friction at rest
