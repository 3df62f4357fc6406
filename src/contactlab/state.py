"""The time-varying state of a run: what an integrator step reads and writes.

Everything a restart needs besides the frozen model, the contact table and the law lives here, so a
checkpoint is State + Model + contact table + law (:mod:`contactlab.io.checkpoint`).
"""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

__all__ = ["State"]


@dataclass(eq=False)
class State:
    """Positions, velocities and accumulators at the end of a step.

    Attributes
    ----------
    positions : (N, 3) float64, m, per sphere (centre)
    velocities : (N, 3) float64, m/s, per sphere
    angular_velocities : (N, 3) float64, rad/s, per sphere, global frame
    orientations : (N, 4) float64, per sphere: unit quaternion (w, x, y, z), body to global
    forces : (N, 3) float64, N, per sphere: total force (contacts + gravity) of the last evaluation
    torques : (N, 3) float64, N m, per sphere: total torque about the centre, global frame
    previous_loads : (N, 6) float32, N and N m, per body: force and torque of the evaluation before
        the last (the velocity predictor averages the accelerations of the last two evaluations,
        :mod:`contactlab.engine.integrate`; single precision: 24 B a body, its rounding 6e-8 of
        the predictor's correction term); None until a stepper makes it
    wall_points : (W, 3) float64, m, per wall: a point of the plane (moves with the wall)
    wall_velocities : (W, 3) float64, m/s, per wall: translation velocity
    dissipated : (N,) float64, J, per sphere: energy dissipated so far by the contacts it owns
        (a contact is owned by its first body ``i``)
    boundary_work : (N,) float64, J, per sphere: work done so far on the free spheres by fixed
        spheres and moving walls through the contacts it owns
    time : float, s
    step : int, number of steps taken
    dissipation_terms : (N, D) float64, J, per sphere: ``dissipated`` split into the law's D
        dissipation terms (D = 0 for a law that does not split it)
    damping_work : (N,) float64, J, per sphere: work taken by local damping so far (None in a run
        without local damping)
    mesh_positions : (Mm, 3) float64, m, per mesh: its reference point (the centre it turns about)
    mesh_orientations : (Mm, 4) float64, per mesh: unit quaternion, mesh frame to global
    mesh_velocities, mesh_angular_velocities : (Mm, 3) float64, m/s and rad/s, per mesh
    shape_data : (M,) float64: the model's shape parameters with the mesh triangles' current vertices
    boundary_power : (N,) float64, W, per body: power of the driven bodies (fixed bodies, walls,
        meshes) on the body's contacts at the last evaluation; the next step's boundary work is the
        trapezoid of this and the new power
    damping_force : (N, 6) float64, N and N m, per body: local damping's force and torque at the last
        evaluation (its work over a step is booked with the trapezoid of two evaluations); None in a
        run without local damping
    time_base : float, s, and step_base : int: the time and step at which the time step was last
        set; ``time = time_base + (step - step_base) dt`` (time from the step count, bit for bit
        across restarts)
    initial_energy : dict of float, J: the energy terms at the start of the simulation (the
        reference of ``energy()["balance_error"]``), None until the first evaluation
    servo_index : (S, 6) int64 and servo_param : (S, 8) float64, per servo-controlled wall or mesh:
        what moves and the walls whose gaps give its area, and the direction, target, area factor,
        gain, relaxation and speed limit (columns ``SERVO_*`` of :mod:`contactlab.engine.layout`)
    cell : (N_CELL,) float64 or None: the periodic cell (lengths in m, rates in m/s, servo
        targets in Pa: columns ``CELL_*`` of :mod:`contactlab.geometry.periodic`); None without one
    images : (N, 3) int64 or None, per body: the cell vectors its wrapped position was brought back
        by (``x + H images`` is its unwrapped position); None without a periodic cell
    clump_positions, clump_velocities, clump_angular_velocities : (C, 3) float64, m, m/s, rad/s, per
        clump: centre of mass, its velocity, angular velocity (global frame)
    clump_orientations : (C, 4) float64, per clump: unit quaternion, principal frame to global
    clump_forces, clump_torques : (C, 3) float64, N and N m, per clump: total force (contacts of its
        members + weight) and torque about its centre of mass at the last evaluation
    clump_previous_loads : (C, 6) float32, N and N m, per clump: its force and torque of the
        evaluation before the last (the predictor's, as ``previous_loads``)
    ids : (N,) int64, per body: its stable id (never changed, never reused: the scene's bodies are
        ``0 .. N-1`` in the order added, a particle stream's get the next ones), increasing along the
        per-body arrays; None until the simulation sets it
    next_id : int: the id the next inserted body gets

    Per-sphere arrays hold one row per body (spheres and every other shape, in the order added).
    """

    positions: np.ndarray
    velocities: np.ndarray
    angular_velocities: np.ndarray
    orientations: np.ndarray
    forces: np.ndarray
    torques: np.ndarray
    wall_points: np.ndarray
    wall_velocities: np.ndarray
    dissipated: np.ndarray
    boundary_work: np.ndarray
    time: float = 0.0
    step: int = 0
    dissipation_terms: np.ndarray | None = None
    damping_work: np.ndarray | None = None
    mesh_positions: np.ndarray | None = None
    mesh_orientations: np.ndarray | None = None
    mesh_velocities: np.ndarray | None = None
    mesh_angular_velocities: np.ndarray | None = None
    shape_data: np.ndarray | None = None
    boundary_power: np.ndarray | None = None
    damping_force: np.ndarray | None = None
    time_base: float = 0.0
    step_base: int = 0
    initial_energy: dict | None = None
    servo_index: np.ndarray | None = None
    servo_param: np.ndarray | None = None
    cell: np.ndarray | None = None
    images: np.ndarray | None = None
    clump_positions: np.ndarray | None = None
    clump_velocities: np.ndarray | None = None
    clump_angular_velocities: np.ndarray | None = None
    clump_orientations: np.ndarray | None = None
    clump_forces: np.ndarray | None = None
    clump_torques: np.ndarray | None = None
    previous_loads: np.ndarray | None = None
    clump_previous_loads: np.ndarray | None = None
    ids: np.ndarray | None = None
    next_id: int = 0

    def time_at(self, step: int, dt: float) -> float:
        """Simulated time (s) at ``step`` for the time step ``dt`` set at ``step_base``."""
        return self.time_base + (step - self.step_base) * dt

    def arrays(self) -> dict[str, np.ndarray]:
        """The array fields by name (shared, not copied)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if isinstance(getattr(self, f.name), np.ndarray)}

    def copy(self) -> "State":
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        for k, v in out.items():
            if isinstance(v, (np.ndarray, dict)):
                out[k] = v.copy()
        return State(**out)
