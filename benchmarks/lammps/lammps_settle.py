"""LAMMPS twin of the contactlab "settle" benchmark (``benchmarks/settle_scene.py``).

For each N the script writes a LAMMPS data file with exactly the spheres of
``settle_scene.layout(N)`` and runs LAMMPS (``pair_style granular`` Hertz-Mindlin with restitution
damping, ``fix wall/gran granular`` walls, ``fix nve/sphere``, gravity, contactlab's time step and
neighbour skin) in two timed phases:

* ``falling``: the first 0.03 s of simulated time from the lattice;
* ``dense``: 2000 steps after the bed has settled (t = 0.25 s for N <= 20000, 0.45 s above, as in
  ``benchmarks/settle.py``).  The
  settled state is computed once, saved as a LAMMPS restart file in the work directory and reused,
  so the dense phase can be re-measured cheaply.

Each phase is timed with LAMMPS's own ``Loop time of ... on ... procs for ... steps`` line and
reported as particle-steps per second (N * steps / loop time), together with the number of
contacts at the end of the phase (sphere-sphere from ``compute contact/atom``, sphere-wall from the
sphere positions; their sum is what ``contactlab.Simulation.n_contacts()`` counts).

Configurations: ``serial`` (1 MPI rank), ``mpi<k>`` (``mpirun -np k``) and ``omp<k>``
(``-sf omp -pk omp k``, only if the LAMMPS binary has the OPENMP package).

Before timing anything the script checks, with a three-sphere probe run by the same binary, that
the LAMMPS contact forces equal contactlab's (Hertz normal force, normal damping, Mindlin spring,
tangential damping, for sphere-sphere and sphere-wall contacts) and measures the restitution of a
sphere-sphere and a sphere-wall collision.  See README.md for the mapping and the LAMMPS quirks
this works around.

Usage::

    python benchmarks/lammps/lammps_settle.py --n 1000 10000 --threads 1 2

From Python::

    from lammps_settle import run_benchmark
    res = run_benchmark([1000], threads=[1, 2])
    res["results"][1000]["falling"]["serial"]["particle_steps_per_s"]
    one = run_benchmark(1000, threads=2)        # one N, the configurations using 2 cores
    one["dense"]["particle_steps_per_s"], one["dense"]["config"]   # fastest of them

If ``lmp`` is not installed the script prints a message and exits with status 0
(``run_benchmark`` returns ``{"available": False, ...}``).
"""
from __future__ import annotations

import argparse
import json
import math
import numbers
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import settle_scene as sc  # noqa: E402

#: simulated time of the falling phase, s
FALL_TIME = 0.03
#: steps of the dense phase
DENSE_STEPS = 2000
#: default work directory (ignored by git: benchmarks/out/)
DEFAULT_WORK = BENCH / "out" / "lammps"

LOOP_RE = re.compile(r"Loop time of\s+([0-9.eE+-]+)\s+on\s+(\d+)\s+procs\s+for\s+(\d+)\s+steps"
                     r"\s+with\s+(\d+)\s+atoms")


def settle_time(n: int) -> float:
    """Simulated time at which the bed counts as settled, s (as in ``benchmarks/settle.py``)."""
    return 0.25 if n <= 20_000 else 0.45


def steps_for(duration: float, dt: float) -> int:
    """Whole steps for ``duration`` exactly as ``contactlab.Simulation.run(duration=...)`` rounds."""
    return int(math.ceil(duration / dt - 1e-9))


# ---------------------------------------------------------------------------------------------
# contactlab side: time step and damping coefficient

def contactlab_reference(n: int) -> dict:
    """contactlab's default time step and skin for the scene, and the model's damping coefficient."""
    import contactlab as cl

    scene, model, lay = sc.build_scene(n)
    sim = cl.Simulation(scene, model)
    return dict(dt=float(sim.dt), skin=float(sim.table.skin), damping=float(model.damping_coefficient))


# ---------------------------------------------------------------------------------------------
# the contact model in LAMMPS terms

def tsuji_alpha(e: float) -> float:
    """LAMMPS's ``damping tsuji`` conversion of the input restitution ``e`` to alpha (pair_granular.cpp)."""
    return (1.2728 - 4.2783 * e + 11.087 * e**2 - 22.348 * e**3 + 27.467 * e**4 - 18.022 * e**5
            + 4.8218 * e**6)


def tsuji_input_for(alpha: float) -> float:
    """The ``damping tsuji`` input value whose LAMMPS alpha equals ``alpha`` (bisection; alpha(e) decreases)."""
    lo, hi = 0.0, 1.0
    if not tsuji_alpha(hi) <= alpha <= tsuji_alpha(lo):
        raise ValueError(f"alpha={alpha} is outside the range of LAMMPS's tsuji polynomial")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if tsuji_alpha(mid) > alpha:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def model_parameters(damping_coefficient: float, mode: str = "matched", wall_young_factor: float = 1.0) -> dict:
    """LAMMPS coefficients equivalent to contactlab's HertzMindlin(restitution, friction) for the scene.

    contactlab (glass on glass, wall = glass body of infinite radius and mass):
      F_n = 4/3 E* sqrt(R*) d^1.5 + c sqrt(m* S_n) d',  S_n = 2 E* sqrt(R* d)
      S_t = 8 G* sqrt(R* d), tangential viscosity c sqrt(m* S_t), Coulomb limit mu F_n
    LAMMPS hertz/material + damping tsuji + mindlin:
      F_n = 4/3 E* a d + alpha sqrt(m* k_n) d',  k_n = 4/3 E* a,  a = sqrt(R* d)
      k_t = kt a, tangential viscosity x_gammat alpha sqrt(m* k_n), Coulomb limit mu F_n
    so alpha = c sqrt(3/2) and x_gammat = sqrt(S_t / (3/2 k_n)) = sqrt(4 G* / E*).

    ``mode`` = "matched": the tsuji input is chosen so that LAMMPS's alpha equals c sqrt(3/2)
    (identical damping force, measured restitution 0.5); "literal": the tsuji input is the nominal
    restitution 0.5 (LAMMPS's polynomial then gives alpha = 0.341, restitution ~0.65 with
    limit_damping).  ``wall_young_factor``: LAMMPS's wall effective modulus divided by the pair
    one for the same input (0.91/0.7 = 1.3 in LAMMPS 2021, see ``calibrate_wall``).
    """
    E, nu, mu = sc.YOUNG, sc.POISSON, sc.FRICTION
    e_star = 1.0 / (2.0 * (1.0 - nu**2) / E)
    g_star = 1.0 / (2.0 * 2.0 * (2.0 - nu) * (1.0 + nu) / E)
    alpha_exact = damping_coefficient * math.sqrt(1.5)
    if mode == "matched":
        e_in = tsuji_input_for(alpha_exact)
    elif mode == "literal":
        e_in = sc.RESTITUTION
    else:
        raise ValueError(f"unknown damping mode {mode!r}")
    return dict(
        mode=mode, young=E, poisson=nu, friction=mu, e_star=e_star, g_star=g_star,
        kt=8.0 * g_star,                          # k_t / a, Pa (same for pairs and walls)
        xgammat=math.sqrt(4.0 * g_star / e_star),  # tangential / normal damping prefactor
        tsuji_input=e_in, alpha=tsuji_alpha(e_in), alpha_contactlab=alpha_exact,
        wall_young=E / wall_young_factor, wall_young_factor=wall_young_factor,
    )


def model_commands(p: dict, side: float) -> str:
    """pair_coeff and fix wall/gran lines (three fixes: one per axis, each with its lo and hi plane)."""
    pair = (f"hertz/material {p['young']!r} {p['tsuji_input']!r} {p['poisson']!r} damping tsuji "
            f"tangential mindlin {p['kt']!r} {p['xgammat']!r} {p['friction']!r} limit_damping")
    wall = (f"hertz/material {p['wall_young']!r} {p['tsuji_input']!r} {p['poisson']!r} damping tsuji "
            f"tangential mindlin {p['kt']!r} {p['xgammat']!r} {p['friction']!r} limit_damping")
    return "\n".join([
        "pair_style granular",
        f"pair_coeff * * {pair}",
        f"fix wallx all wall/gran granular {wall} xplane 0.0 {side!r}",
        f"fix wally all wall/gran granular {wall} yplane 0.0 {side!r}",
        "fix wallz all wall/gran granular " + wall + " zplane 0.0 NULL",
    ])


# ---------------------------------------------------------------------------------------------
# LAMMPS discovery and execution

def find_lmp(lmp: str | None = None) -> str | None:
    return shutil.which(lmp or os.environ.get("LAMMPS_EXE", "lmp"))


def lammps_info(lmp: str) -> dict:
    """Version line and installed packages of the binary (``lmp -h``)."""
    out = subprocess.run([lmp, "-h"], capture_output=True, text=True, timeout=60).stdout
    version = ""
    for line in out.splitlines():
        if line.startswith("Large-scale Atomic/Molecular Massively Parallel Simulator"):
            version = line.split(" - ", 1)[1].strip()
            break
    pk = re.search(r"Installed packages:\s*\n(.*?)\n\s*\n", out, re.S)
    packages = pk.group(1).split() if pk else []
    return dict(version=version, packages=packages,
                openmp=("OPENMP" in packages or "USER-OMP" in packages),
                kokkos="KOKKOS" in packages)


def _mpirun_prefix(mpirun: str, np_: int) -> list[str]:
    cmd = [mpirun]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd + ["-np", str(np_)]


def config_command(name: str, lmp: str, mpirun: str | None) -> list[str]:
    """The command line (without ``-in``) of a configuration: serial, mpi<k> or omp<k>."""
    if name == "serial":
        return [lmp]
    if name.startswith("mpi"):
        return _mpirun_prefix(mpirun or "mpirun", int(name[3:])) + [lmp]
    if name.startswith("omp"):
        k = int(name[3:])
        return [lmp, "-sf", "omp", "-pk", "omp", str(k)]
    raise ValueError(name)


def configurations(threads, info: dict, mpirun: str | None) -> tuple[list[str], dict]:
    """Configurations to run for the requested core counts, and the ones skipped with the reason."""
    configs, skipped = [], {}
    for k in threads:
        k = int(k)
        if k <= 1:
            configs.append("serial")
            continue
        if mpirun:
            configs.append(f"mpi{k}")
        else:
            skipped[f"mpi{k}"] = "mpirun not found"
        if info["openmp"]:
            configs.append(f"omp{k}")
        else:
            skipped[f"omp{k}"] = "this LAMMPS binary has no OPENMP package (-sf omp is unavailable)"
    return list(dict.fromkeys(configs)), skipped


def lammps_cmdline(cmd: list[str], tag: str) -> list[str]:
    """Full command line of a run: input ``in.<tag>``, log ``log.<tag>`` (in the run's directory)."""
    return cmd + ["-in", f"in.{tag}", "-log", f"log.{tag}", "-nocite"]


def run_lammps(cmd: list[str], script: str, workdir: Path, tag: str, timeout: float | None = None) -> str:
    """Run ``script`` with ``cmd`` in ``workdir``; return the log text (raises on a LAMMPS error)."""
    workdir.mkdir(parents=True, exist_ok=True)
    inp = workdir / f"in.{tag}"
    log = workdir / f"log.{tag}"
    inp.write_text(script)
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    if any(a == "omp" for a in cmd):
        env["OMP_NUM_THREADS"] = cmd[cmd.index("omp", cmd.index("-pk")) + 1]
    full = lammps_cmdline(cmd, tag)
    proc = subprocess.run(full, cwd=workdir, capture_output=True, text=True, timeout=timeout, env=env)
    text = log.read_text() if log.exists() else ""
    if proc.returncode != 0 or "ERROR" in proc.stdout:
        err = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "ERROR" in ln or "rror" in ln][:5]
        raise RuntimeError(f"LAMMPS failed ({' '.join(full)} in {workdir}): " + " | ".join(err or [proc.stderr[-500:]]))
    return text


def parse_phases(log: str) -> dict:
    """Per ``@@PHASE name`` marker: the loop line and the thermo rows of the run that follows."""
    phases, current, cols = {}, None, None
    for line in log.splitlines():
        s = line.strip()
        if s.startswith("@@PHASE"):
            current = s.split()[1]
            phases[current] = dict(thermo=[])
            cols = None
            continue
        if current is None:
            continue
        ph = phases[current]
        if "loop" in ph:
            continue
        if s.startswith("Step"):
            cols = s.split()
            continue
        m = LOOP_RE.search(s)
        if m:
            ph["loop"] = dict(time=float(m.group(1)), procs=int(m.group(2)), steps=int(m.group(3)),
                              atoms=int(m.group(4)))
            cols = None
            continue
        if cols:
            parts = s.split()
            if len(parts) == len(cols):
                try:
                    ph["thermo"].append(dict(zip(cols, map(float, parts))))
                except ValueError:
                    pass
    return phases


# ---------------------------------------------------------------------------------------------
# input files

def write_data(path: Path, n: int, z_top: float) -> dict:
    """LAMMPS data file (atom_style sphere, units si) with the spheres of ``settle_scene.layout(n)``."""
    lay = sc.layout(n)
    pos, radii = lay["positions"], lay["radii"]
    side = float(lay["side"])
    lines = [f"contactlab settle benchmark, N = {len(radii)} (benchmarks/settle_scene.py layout)", "",
             f"{len(radii)} atoms", "1 atom types", "",
             f"0.0 {side!r} xlo xhi", f"0.0 {side!r} ylo yhi", f"0.0 {z_top!r} zlo zhi", "",
             "Atoms # sphere", ""]
    lines += [f"{i + 1} 1 {2.0 * float(r)!r} {sc.DENSITY!r} {float(x)!r} {float(y)!r} {float(z)!r}"
              for i, (r, (x, y, z)) in enumerate(zip(radii, pos))]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return dict(side=side, height=float(lay["height"]), n=len(radii), rmin=float(radii.min()))


def _settings(p: dict, side: float, dt: float, skin: float) -> str:
    g = sc.GRAVITY
    gmag = math.sqrt(sum(c * c for c in g))
    return "\n".join([
        f"neighbor {skin!r} bin",
        "neigh_modify delay 0 every 1 check yes",
        model_commands(p, side),
        f"fix grav all gravity {gmag!r} vector {g[0] / gmag!r} {g[1] / gmag!r} {g[2] / gmag!r}",
        "fix integrate all nve/sphere",
        f"timestep {dt!r}",
        # contact counts, evaluated only on thermo steps (start and end of each timed run)
        "compute ncon all contact/atom",
        "compute nconsum all reduce sum c_ncon",
        "variable npair equal c_nconsum/2",
        "compute rad all property/atom radius",
        f"variable wallc atom \"(z<c_rad)+(x<c_rad)+(x>{side!r}-c_rad)+(y<c_rad)+(y>{side!r}-c_rad)\"",
        "compute nwall all reduce sum v_wallc",
        "thermo_style custom step time atoms v_npair c_nwall ke",
        "thermo_modify norm no lost error",
    ])


def falling_script(data: str, p: dict, side: float, dt: float, skin: float, fall_steps: int,
                   settle_steps: int = 0, restart: str | None = None) -> str:
    """Read the lattice, time the falling phase; optionally continue to the settled state and save it.

    The settle run uses ``pre no``: in LAMMPS 2021 ``fix wall/gran`` re-applies the tsuji
    restitution->alpha conversion every time the system is initialised, so every run after the
    first one with ``pre yes`` would use a wrong wall damping.
    """
    out = ["# LAMMPS twin of the contactlab settle benchmark: falling phase",
           "units si", "atom_style sphere", "boundary f f m", "processors * * 1", "comm_modify vel yes",
           f"read_data {data}", _settings(p, side, dt, skin),
           "print \"@@PHASE falling\"", f"thermo {fall_steps}", f"run {fall_steps}"]
    if settle_steps > 0:
        out += ["print \"@@PHASE settle\"", f"thermo {max(settle_steps // 10, 1)}",
                f"run {settle_steps} pre no"]
    if restart:
        out += [f"write_restart {restart}"]
    return "\n".join(out) + "\n"


def dense_script(restart: str, p: dict, side: float, dt: float, skin: float, steps: int) -> str:
    """Read the settled state and time ``steps`` steps (the first run of the process: see falling_script)."""
    return "\n".join([
        "# LAMMPS twin of the contactlab settle benchmark: dense phase",
        "processors * * 1", f"read_restart {restart}", "comm_modify vel yes",
        _settings(p, side, dt, skin),
        "print \"@@PHASE dense\"", f"thermo {steps}", f"run {steps}"]) + "\n"


# ---------------------------------------------------------------------------------------------
# equivalence check: the forces LAMMPS computes versus contactlab's formulas

# three balls: 1 over the floor plane (a wall), 2 and 3 a pair along x; velocities set per script
_THREE_BALLS = """units si
atom_style sphere
atom_modify map array
boundary f f f
region box block 0 0.1 0 0.1 0 0.1
create_box 1 box
create_atoms 1 single 0.02 0.05 {zw!r}
create_atoms 1 single 0.06 0.05 0.05
create_atoms 1 single {xp!r} 0.05 0.05
set atom * diameter {d!r}
set atom * density {rho!r}
"""
_SETUP = """comm_modify vel yes
{model}
fix integrate all nve/sphere
timestep {dt!r}
thermo_style custom step
"""

_PROBE = _THREE_BALLS + """set atom 1 vz {vn!r}
set atom 1 vy {vt!r}
set atom 3 vx {vn!r}
set atom 2 vy {vt!r}
""" + _SETUP + """run 0
print "@@F0 $(fz[1]:%.15g) $(fy[1]:%.15g) $(fx[2]:%.15g) $(fy[2]:%.15g)"
run 1 pre no
print "@@F1 $(fz[1]:%.15g) $(fy[1]:%.15g) $(fx[2]:%.15g) $(fy[2]:%.15g)"
"""

_BOUNCE = _THREE_BALLS + """set atom 1 vz {vw!r}
set atom 2 vx {vp!r}
set atom 3 vx {vm!r}
""" + _SETUP + """run {steps}
print "@@E $(vz[1]:%.15g) $(vx[2]:%.15g) $(vx[3]:%.15g)"
"""


def _probe_forces(lmp: str, p: dict, workdir: Path, overlap: float, vn: float, vt: float, dt: float) -> dict:
    r, rho = sc.RADIUS, sc.DENSITY
    model = model_commands(p, 0.1).split("\n")
    model = "\n".join(model[:2] + [model[4].replace("wallz", "wall")])
    script = _PROBE.format(zw=r - overlap, xp=0.06 + 2 * r - overlap, d=2 * r, rho=rho, vn=-vn, vt=vt,
                           model=model, dt=dt)
    log = run_lammps([lmp], script, workdir, "probe")
    vals = {}
    for line in log.splitlines():
        if line.startswith("@@F"):
            k, *v = line.split()
            vals[k[3:]] = [float(x) for x in v]
    return vals


def contactlab_forces(p: dict, radius_eff: float, mass_eff: float, overlap: float, vn: float, vt: float,
                      damping: float) -> dict:
    """contactlab's force components for a contact (elastic normal, damping normal, spring per m, tangential viscous)."""
    a = math.sqrt(radius_eff * overlap)
    s_n = 2.0 * p["e_star"] * a
    s_t = 8.0 * p["g_star"] * a
    return dict(normal_elastic=4.0 / 3.0 * p["e_star"] * a * overlap,
                normal_damping=damping * math.sqrt(mass_eff * s_n) * vn,
                tangential_stiffness=s_t,
                tangential_damping=damping * math.sqrt(mass_eff * s_t) * vt)


def check_equivalence(lmp: str, p: dict, damping: float, workdir: Path) -> dict:
    """Measure LAMMPS's pair and wall contact forces and compare with contactlab's formulas.

    Returns ``{"pair": {...}, "wall": {...}}`` with for each quantity (lammps, contactlab, ratio).
    Elastic force, normal and tangential damping are read at ``run 0`` (no tangential history yet).
    The Mindlin spring is measured over one step of tangential slip ``vt dt`` (``run 1 pre no``)
    with the damping switched (almost) off (tsuji input 1.0, alpha = 3e-4), so that the change of
    velocity over the step does not pollute it; for the pair, the small rotation of the contact
    normal caused by that slip is subtracted.  With ``p["mode"] == "literal"`` the damping rows
    differ from contactlab by design.
    """
    r, rho = sc.RADIUS, sc.DENSITY
    m = rho * 4.0 / 3.0 * math.pi * r**3
    d, vn, vt = 1e-5, 0.05, 0.01  # slow enough to stay below the Coulomb limit
    dt_probe = 1e-8
    base = _probe_forces(lmp, p, workdir, d, 0.0, 0.0, dt_probe)       # elastic only
    damp = _probe_forces(lmp, p, workdir, d, vn, 0.0, dt_probe)        # + normal damping
    tang = _probe_forces(lmp, p, workdir, d, 0.0, vt, dt_probe)        # tangential damping
    slip = _probe_forces(lmp, dict(p, tsuji_input=1.0), workdir, d, 0.0, vt, dt_probe)  # spring
    out = {}
    for kind, reff, meff, idx_n, idx_t, sign in (("wall", r, m, 0, 1, 1.0), ("pair", r / 2, m / 2, 2, 3, -1.0)):
        ref = contactlab_forces(p, reff, meff, d, vn, vt, damping)
        el = sign * base["0"][idx_n]
        nd = sign * damp["0"][idx_n] - el
        td = -tang["0"][idx_t]
        shift = vt * dt_probe
        geometric = el * shift / (2 * r - d) if kind == "pair" else 0.0
        spring = (-(slip["1"][idx_t] - slip["0"][idx_t]) + geometric) / shift
        rows = dict(normal_elastic=(el, ref["normal_elastic"]), normal_damping=(nd, ref["normal_damping"]),
                    tangential_stiffness=(spring, ref["tangential_stiffness"]),
                    tangential_damping=(td, ref["tangential_damping"]))
        out[kind] = {k: dict(lammps=a, contactlab=b, ratio=a / b) for k, (a, b) in rows.items()}
    return out


def measure_restitution(lmp: str, p: dict, workdir: Path, speed: float = 0.5) -> dict:
    """Normal restitution of a sphere-wall and a sphere-sphere collision in LAMMPS (no gravity)."""
    r, rho = sc.RADIUS, sc.DENSITY
    model = model_commands(p, 0.1).split("\n")
    model = "\n".join(model[:2] + [model[4].replace("wallz", "wall")])
    script = _BOUNCE.format(zw=r * 1.01, xp=0.06 + 2.02 * r, d=2 * r, rho=rho, vw=-speed, vp=speed / 2,
                            vm=-speed / 2, model=model, dt=1e-7, steps=20000)
    log = run_lammps([lmp], script, workdir, "bounce")
    for line in log.splitlines():
        if line.startswith("@@E"):
            vz, v2, v3 = (float(x) for x in line.split()[1:])
            return dict(wall=vz / speed, pair=(v3 - v2) / speed, impact_speed=speed)
    raise RuntimeError("restitution probe produced no output")


def calibrate_wall(lmp: str, damping: float, workdir: Path) -> float:
    """LAMMPS's wall elastic force for a given Young's modulus, relative to the pair formula.

    LAMMPS 2021 computes the wall's effective modulus as E / (2 (1 - nu)) instead of
    E / (2 (1 - nu^2)) (factor 1.3 for nu = 0.3); the factor is measured, not assumed, so that a
    fixed LAMMPS gives 1.0 here.
    """
    p = model_parameters(damping, "matched", 1.0)
    f = check_equivalence(lmp, p, damping, workdir)
    return f["wall"]["normal_elastic"]["ratio"]


# ---------------------------------------------------------------------------------------------
# the benchmark

def _phase_result(samples: list[dict], n: int) -> dict:
    best = min(samples, key=lambda s: s["loop"]["time"])
    loop = best["loop"]
    th = best["thermo"]
    end = th[-1] if th else {}
    start = th[0] if th else {}
    npair = int(round(end.get("v_npair", float("nan")))) if end else None
    nwall = int(round(end.get("c_nwall", float("nan")))) if end else None
    return dict(
        steps=loop["steps"], procs=loop["procs"], atoms=loop["atoms"],
        loop_times=[s["loop"]["time"] for s in samples], best_loop_time=loop["time"],
        load_averages=[s.get("load_before") for s in samples],
        particle_steps_per_s=n * loop["steps"] / loop["time"],
        contacts_end=dict(sphere_sphere=npair, sphere_wall=nwall,
                          total=(npair + nwall) if npair is not None else None),
        contacts_start=dict(sphere_sphere=int(round(start.get("v_npair", 0))),
                            sphere_wall=int(round(start.get("c_nwall", 0)))) if start else None,
    )


def _timed_phase(phase, configs, repeat, n, exe, mpi, ndir, log, script, commands) -> dict:
    """Run ``phase`` ``repeat`` times per configuration, interleaving the configurations (a noisy
    neighbour then hits all of them alike); keep every sample and report the best."""
    samples = {cfg: [] for cfg in configs}
    for k in range(repeat):
        for cfg in configs:
            load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
            t0 = time.perf_counter()
            logtxt = run_lammps(config_command(cfg, exe, mpi), script(), ndir, f"{phase}_{cfg}_{k}")
            ph = parse_phases(logtxt)[phase]
            ph["load_before"] = load
            samples[cfg].append(ph)
            log(f"  {phase:7s} {cfg:>7s} #{k + 1}: loop {ph['loop']['time']:.3f} s "
                f"({n * ph['loop']['steps'] / ph['loop']['time']:.4g} particle-steps/s, wall clock "
                f"{time.perf_counter() - t0:.1f} s, load average before {load})")
            commands[f"{phase}/{cfg}"] = " ".join(lammps_cmdline(config_command(cfg, exe, mpi), f"{phase}_{cfg}_0"))
    return {cfg: _phase_result(samples[cfg], n) for cfg in configs}


def run_benchmark(ns=(1000, 10_000), threads=(1, 2), *, repeat: int = 2, phases=("falling", "dense"),
                  lmp: str | None = None, mpirun: str | None = None, damping_mode: str = "matched",
                  workdir: Path | str = DEFAULT_WORK, dt: float | None = None, resettle: bool = False,
                  settle_config: str | None = None, log=print) -> dict:
    """Run the LAMMPS settle benchmark; return a dict of results.

    ``ns``: a list of N, or one N.  ``threads``: a list of core counts, or one (then only the
    configurations using that many cores run: ``serial`` for 1, ``mpi<k>``/``omp<k>`` for k).

    With a list of N: ``{"available", "lammps_version", "parameters", "equivalence",
    "restitution", "results": {N: {phase: {config: entry}, "fastest": {phase: config}, ...}}}``
    where an entry holds ``particle_steps_per_s`` (best of ``repeat``), the loop times, steps,
    procs and the contact counts at the end of the phase.

    With one N (what ``benchmarks/settle.py --lammps`` uses): the same metadata plus, per phase,
    the entry of the fastest configuration with ``config`` naming it and ``configs`` holding all,
    e.g. ``res["dense"]["particle_steps_per_s"]``.

    Without LAMMPS: ``{"available": False, "reason": ...}``.
    """
    if isinstance(ns, numbers.Integral):
        full = run_benchmark([int(ns)], threads, repeat=repeat, phases=phases, lmp=lmp, mpirun=mpirun,
                             damping_mode=damping_mode, workdir=workdir, dt=dt, resettle=resettle,
                             settle_config=settle_config, log=log)
        return _single(full, int(ns))
    if isinstance(threads, numbers.Integral):
        threads = [int(threads)]
    exe = find_lmp(lmp)
    if exe is None:
        return dict(available=False, reason=f"LAMMPS executable {lmp or 'lmp'!r} not found on PATH")
    info = lammps_info(exe)
    mpi = shutil.which(mpirun or "mpirun")
    configs, skipped = configurations(threads, info, mpi)
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)

    ref = contactlab_reference(min(ns))
    damping = ref["damping"]
    factor = calibrate_wall(exe, damping, workdir / "check")
    p = model_parameters(damping, damping_mode, factor)
    equivalence = check_equivalence(exe, p, damping, workdir / "check")
    restitution = measure_restitution(exe, p, workdir / "check")
    log(f"LAMMPS {info['version']} ({exe}); configurations: {', '.join(configs)}"
        + (f"; skipped: {skipped}" if skipped else ""))
    log(f"damping mode {damping_mode}: tsuji input {p['tsuji_input']:.6f} -> alpha {p['alpha']:.6f} "
        f"(contactlab c sqrt(3/2) = {p['alpha_contactlab']:.6f}); measured restitution wall "
        f"{restitution['wall']:.4f}, pair {restitution['pair']:.4f}; wall modulus factor {factor:.6f}")
    for kind, rows in equivalence.items():
        log(f"  {kind}: " + ", ".join(f"{k} {v['ratio']:.6f}" for k, v in rows.items()) + "  (LAMMPS/contactlab)")

    out = dict(available=True, lammps_version=info["version"], lammps_exe=exe, lammps_packages=info["packages"],
               mpirun=mpi, machine=dict(platform=platform.platform(), processor=sc.cpu_name(), cores=os.cpu_count()),
               configurations=configs, skipped=skipped, damping_mode=damping_mode, parameters=p,
               equivalence=equivalence, restitution=restitution, repeat=repeat, results={})
    for n in ns:
        r_n = contactlab_reference(n) if dt is None else dict(ref, dt=dt)
        step = r_n["dt"] if dt is None else dt
        skin = r_n["skin"]
        ndir = workdir / f"n{n}"
        z_top = sc.layout(n)["height"] + 4.0 * sc.RADIUS
        geo = write_data(ndir / "settle.data", n, z_top)
        side = geo["side"]
        fall_steps = steps_for(FALL_TIME, step)
        total_settle = steps_for(settle_time(n), step)
        res = dict(n=n, dt=step, skin=skin, side=side, fall_steps=fall_steps, settle_time=settle_time(n),
                   settle_steps=total_settle - fall_steps, dense_steps=DENSE_STEPS, commands={})
        log(f"\nN = {n}: dt = {step:.6e} s, skin = {skin:g} m, falling = {fall_steps} steps, settle to "
            f"{settle_time(n)} s ({total_settle} steps), dense = {DENSE_STEPS} steps")
        tag = f"{damping_mode}_dt{step:.6e}"
        restart = ndir / f"settled_{tag}.restart"
        if "falling" in phases:
            res["falling"] = _timed_phase("falling", configs, repeat, n, exe, mpi, ndir, log,
                                          lambda: falling_script("settle.data", p, side, step, skin, fall_steps),
                                          res["commands"])
        if "dense" in phases:
            if resettle or not restart.exists():
                cfg = settle_config or _default_settle_config(configs)
                log(f"  settling with {cfg} to t = {settle_time(n)} s (once; saved to {restart.name}) ...")
                t0 = time.perf_counter()
                logtxt = run_lammps(config_command(cfg, exe, mpi),
                                    falling_script("settle.data", p, side, step, skin, fall_steps,
                                                   total_settle - fall_steps, restart.name),
                                    ndir, f"settle_{damping_mode}_{cfg}")
                st = parse_phases(logtxt)
                end = st["settle"]["thermo"][-1] if st["settle"]["thermo"] else {}
                res["settle"] = dict(config=cfg, wall_clock_s=time.perf_counter() - t0,
                                     loop_time_s=st["settle"]["loop"]["time"] + st["falling"]["loop"]["time"],
                                     steps=total_settle, kinetic_energy_end=end.get("KinEng"),
                                     contacts_end=dict(sphere_sphere=end.get("v_npair"), sphere_wall=end.get("c_nwall")))
                log(f"  settled in {res['settle']['wall_clock_s']:.1f} s wall clock; end of settle: {end}")
                res["commands"]["settle"] = " ".join(lammps_cmdline(config_command(cfg, exe, mpi),
                                                                    f"settle_{damping_mode}_{cfg}"))
            else:
                res["settle"] = dict(reused=str(restart))
                log(f"  reusing the settled state {restart}")
            res["dense"] = _timed_phase("dense", configs, repeat, n, exe, mpi, ndir, log,
                                        lambda: dense_script(restart.name, p, side, step, skin, DENSE_STEPS),
                                        res["commands"])
        res["fastest"] = {ph: max(res[ph], key=lambda c: res[ph][c]["particle_steps_per_s"])
                          for ph in ("falling", "dense") if res.get(ph)}
        res["workdir"] = str(ndir)
        out["results"][n] = res
    return out


def _single(full: dict, n: int) -> dict:
    """Flatten the results of one N: per phase, the fastest configuration's entry."""
    if not full.get("available"):
        return full
    out = {k: v for k, v in full.items() if k != "results"}
    res = full["results"][n]
    out.update({k: v for k, v in res.items() if k not in ("falling", "dense")})
    for ph in ("falling", "dense"):
        if res.get(ph):
            best = res["fastest"][ph]
            out[ph] = dict(res[ph][best], config=best, configs=res[ph])
    return out


def _default_settle_config(configs: list[str]) -> str:
    par = [c for c in configs if c.startswith("mpi")]
    return max(par, key=lambda c: int(c[3:])) if par else configs[0]


def format_table(res: dict) -> str:
    """Plain-text table of particle-steps/s per N, phase and configuration."""
    if not res.get("available"):
        return f"LAMMPS not available: {res.get('reason')}"
    rows = [f"LAMMPS {res['lammps_version']}, damping mode {res['damping_mode']}, best of {res['repeat']}",
            f"{'N':>8s} {'phase':>8s} {'config':>7s} {'steps':>6s} {'loop s':>9s} {'particle-steps/s':>17s} "
            f"{'contacts (s-s + s-w)':>22s}"]
    for n, r in res["results"].items():
        for ph in ("falling", "dense"):
            for cfg, v in (r.get(ph) or {}).items():
                c = v["contacts_end"]
                mark = " *" if r["fastest"].get(ph) == cfg else ""
                rows.append(f"{n:>8d} {ph:>8s} {cfg:>7s} {v['steps']:>6d} {v['best_loop_time']:>9.3f} "
                            f"{v['particle_steps_per_s']:>17.4g} "
                            f"{c['total']:>8d} = {c['sphere_sphere']} + {c['sphere_wall']}{mark}")
    if res.get("skipped"):
        rows.append("skipped: " + "; ".join(f"{k}: {v}" for k, v in res["skipped"].items()))
    rows.append("* fastest configuration for that N and phase")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 10_000], help="numbers of spheres")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2],
                    help="core counts: 1 = serial, k > 1 = mpirun -np k (and -sf omp -pk omp k if available)")
    ap.add_argument("--repeat", type=int, default=2, help="runs per configuration and phase (best is kept)")
    ap.add_argument("--phases", nargs="+", default=["falling", "dense"], choices=["falling", "dense"])
    ap.add_argument("--damping", choices=["matched", "literal"], default="matched",
                    help="matched: tsuji input chosen so LAMMPS's damping equals contactlab's (restitution 0.5); "
                         "literal: tsuji input 0.5 (LAMMPS's polynomial, measured restitution ~0.65)")
    ap.add_argument("--lmp", default=None, help="LAMMPS executable (default: $LAMMPS_EXE or lmp)")
    ap.add_argument("--mpirun", default=None, help="mpirun executable (default: mpirun)")
    ap.add_argument("--workdir", default=str(DEFAULT_WORK), help="where data, inputs, logs and restarts go")
    ap.add_argument("--dt", type=float, default=None, help="time step override, s (default: contactlab's)")
    ap.add_argument("--resettle", action="store_true", help="recompute the settled state even if saved")
    ap.add_argument("--settle-config", default=None, help="configuration used to settle (default: mpi<max>)")
    ap.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = ap.parse_args(argv)

    if find_lmp(args.lmp) is None:
        print(f"LAMMPS ({args.lmp or os.environ.get('LAMMPS_EXE', 'lmp')}) is not installed or not on PATH; "
              "nothing to compare against (install e.g. the Debian/Ubuntu 'lammps' package).")
        return 0
    res = run_benchmark(args.n, args.threads, repeat=args.repeat, phases=tuple(args.phases), lmp=args.lmp,
                        mpirun=args.mpirun, damping_mode=args.damping, workdir=args.workdir, dt=args.dt,
                        resettle=args.resettle, settle_config=args.settle_config)
    print()
    print(format_table(res))
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
