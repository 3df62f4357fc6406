"""contactlab on an NVIDIA GPU: ``cl.Simulation(scene, model, device="cuda")``.

The GPU runs the explicit engine's step (:mod:`contactlab.engine.gpu_kernels`) from the same law
and engine source as the CPU, compiled by numba-cuda (the ``gpu`` extra:
``pip install -e ".[gpu]"``).  What runs there and what does not is checked before anything is
built (:func:`check_scene`), and said in ``docs/gpu.md``'s table, which :data:`RUNS_ON_GPU` and
:data:`NOT_ON_GPU` are.

The backend (:mod:`contactlab.gpu.backend`, numba.cuda) and the GPU stepper are imported by the
functions here that need them, so that ``import contactlab`` does not load the CUDA bindings.
"""
from __future__ import annotations

from ..errors import InputError
from ..geometry.shapes import KIND_NAMES, SPHERE

__all__ = ["DEVICES", "RUNS_ON_GPU", "NOT_ON_GPU", "DeviceError", "check_device", "check_scene", "check_law",
           "available", "stepper_class", "refuse_streams"]

#: the devices a simulation runs on
DEVICES = ("cpu", "cuda")

#: what a GPU simulation runs (docs/gpu.md)
RUNS_ON_GPU = ("spheres", "2-D disks", "plane and line walls", "cylinder walls", "gravity",
               "periodic cells with Lees-Edwards shear", "every built-in sphere law",
               "composite cl.models.Contact laws", "user laws with history", "local damping", "servo walls",
               "bonds made and broken", "switched-off pairs", "energy bookkeeping",
               "time-step policy and blow-up diagnosis", "sensors, VTK/CSV reporters, checkpoints")

#: what it refuses, and what each would take (docs/gpu.md)
NOT_ON_GPU = {
    "triangle meshes": "the triangle selection per body and the mesh motion as device passes",
    "ellipsoids, polyhedra, ellipses and other non-spherical bodies": "GJK/EPA and the ellipsoid solver without "
    "their per-call polytope allocation (a fixed-size polytope per thread)",
    "clumps": "a per-clump reduction of its members' loads (a CSR over members, as for pairs)",
    "the convex roll": "its narrow phase and rigid-body update as device functions",
    "particle inlets and outlets": "the resize of every per-body array on the device between chunks",
    "particle DDA": "its matrix-free solver's sparse products as device kernels (cl.DDA runs on the CPU)",
    "debug mode": "debug=True runs the law as plain Python on the CPU; the GPU compiles it",
}


class DeviceError(InputError):
    """A simulation asks a device for something it does not run, or a device that is not there."""


def check_device(device) -> str:
    """The device named (``"cpu"`` or ``"cuda"``; ``"gpu"`` is taken as ``"cuda"``), checked."""
    name = device.lower() if isinstance(device, str) else device
    if name == "gpu":
        name = "cuda"
    if name not in DEVICES:
        raise DeviceError(f"device must be one of {list(DEVICES)} (cuda: one NVIDIA GPU), got {device!r}")
    return name


def available() -> str | None:
    """Why no GPU simulation can run here, or None when one can (a device or numba-cuda's simulator)."""
    from . import backend  # noqa: PLC0415 - imports numba.cuda, only when a GPU is asked for

    return backend.unavailable_reason()


def check_scene(model, *, debug: bool = False) -> None:
    """Refuse, before anything long, a scene the GPU does not run (:class:`DeviceError` naming
    what, and listing what runs there) and a machine without a GPU or numba-cuda."""
    refused = []
    if debug:
        refused.append("debug=True (debug mode runs the law as plain Python on the CPU)")
    if model.n_triangles:
        refused.append(f"triangle meshes (this scene has {model.n_meshes} mesh(es))")
    if model.n_clumps:
        refused.append(f"clumps (this scene has {model.n_clumps})")
    kinds = sorted({int(k) for k in model.shape_kind} - {SPHERE})
    if kinds:
        names = ", ".join(KIND_NAMES.get(k, str(k)) for k in kinds)
        refused.append(f"non-spherical bodies ({names})")
    if refused:
        raise DeviceError(f"device='cuda' does not run {'; '.join(refused)}. On the GPU run: "
                          f"{', '.join(RUNS_ON_GPU)} (docs/gpu.md); run this scene with device='cpu'")
    reason = available()
    if reason is not None:
        raise DeviceError(f"device='cuda' cannot run here: {reason}")


def refuse_streams(method: str) -> DeviceError:
    """The error of an inlet or outlet added to a GPU simulation."""
    return DeviceError(f"{method}: particle inlets and outlets do not run on the GPU yet (device='cuda'); "
                       f"on the GPU run: {', '.join(RUNS_ON_GPU)} (docs/gpu.md); use device='cpu'")


def check_law(sim, cc=(9, 0)) -> str:
    """Compile ``sim``'s GPU kernels for compute capability ``cc`` without a GPU (needs numba-cuda's
    libNVVM, from the ``gpu`` extra, and no simulator) and return the PTX of the pair pass: a user
    law the GPU compiler refuses raises :class:`~contactlab.errors.LawError` naming the construct
    and the line, before any GPU is rented."""
    from ..engine.gpu_check import compile_step_ptx  # noqa: PLC0415

    return compile_step_ptx(sim, cc)


def stepper_class():
    """The GPU stepper (:class:`contactlab.engine.gpu_stepper.GpuStepper`)."""
    from ..engine.gpu_stepper import GpuStepper  # noqa: PLC0415 - imports numba.cuda

    return GpuStepper
