"""Ready-made instances of the built-in contact models, for ``contactlab validate`` and the docs.

Each is a physically sensible choice for the battery's default bodies (glass-like spheres of 1 mm
radius, E = 10 MPa, 2500 kg/m^3, see :data:`contactlab.probe.DEFAULT_PROBE_MATERIAL`): overlaps of
0.1-5 % of the radius at impact speeds of a few cm/s to about 1 m/s.

``contactlab validate contactlab.validation.builtin:hertz_mindlin`` validates one of them;

    python -m contactlab.validation.builtin --out docs/validation [--quick] [NAME ...]

regenerates the full report of every one (``docs/validation/<name>/``) and an index page.
"""
from __future__ import annotations

import argparse
import html
import json
import sys
import time
from pathlib import Path

from ..models import HertzMindlin, Ice, LinearSpringDashpot, Luding, ParallelBond, SphereSphereContact

__all__ = ["hertz_mindlin", "linear_spring_dashpot", "sphere_sphere_contact_edinburgh",
           "sphere_sphere_contact_hunt_crossley", "sphere_sphere_contact_gonthier", "luding", "ice", "parallel_bond",
           "MODELS", "main"]

#: Hertz-Mindlin, the brief's standard: e = 0.5, mu = 0.5
hertz_mindlin = HertzMindlin(restitution=0.5, friction=0.5)

#: Linear spring-dashpot with the stiffness of the test suite (contact time ~0.2 ms for 1 mm glass)
linear_spring_dashpot = LinearSpringDashpot(stiffness=2e3, restitution=0.5, friction=0.5)

#: Spec 000, impact model 0: the Edinburgh elasto-plastic adhesive model (k_2 = 2 k_c, linear adhesion);
#: friction regularised below 1 cm/s
sphere_sphere_contact_edinburgh = SphereSphereContact(contact_stiffness=2e3, impact_model=0,
                                                      contact_plasticity_ratio=0.5, adhesion_coefficient=400.0,
                                                      dynamic_friction=0.4, friction_proportional_zone=0.01)

#: Spec 000, impact model 1: Hunt-Crossley on a Hertzian spring (k_c ~ 4/3 E* sqrt(R) of the glass); the
#: impact velocity in the damping at least 5 cm/s (without a floor a contact that starts slowly is damped
#: without bound)
sphere_sphere_contact_hunt_crossley = SphereSphereContact(contact_stiffness=2e5, contact_stiffness_exponent=1.5,
                                                          impact_model=1, restitution_coefficient=0.7,
                                                          minimum_impact_velocity=0.05, dynamic_friction=0.3,
                                                          friction_proportional_zone=0.01)

#: Spec 000, impact model 2: Carvalho-Martins (e > 1/3) on a Hertzian spring
sphere_sphere_contact_gonthier = SphereSphereContact(contact_stiffness=2e5, contact_stiffness_exponent=1.5,
                                                     impact_model=2, restitution_coefficient=0.5,
                                                     minimum_impact_velocity=0.05, dynamic_friction=0.3,
                                                     friction_proportional_zone=0.01)

#: Luding (spec 001): plastic and adhesive, with a small normal viscosity and rolling/twisting springs
luding = Luding(k1_div_kn=0.5, ka_div_kn=0.2, delta_lim_rel=0.1, visc_n=0.05, visc_t=0.0, visc_r=1e-8, visc_w=1e-8,
                tan_phi=0.5, stat_r=0.4, stat_w=0.3, dyn_div_stat=0.7)

#: Ice (spec 002) with its defaults (stiffness from Young's modulus)
ice = Ice()

#: Parallel bonds (Potyondy-Cundall) over the linear spring-dashpot; bond normal stiffness k_n A ~ 30 x the
#: contact's, strengths of a weak cement (1 MPa)
parallel_bond = ParallelBond(normal_stiffness=2e10, shear_stiffness=8e9, tensile_strength=1e6, shear_strength=1e6,
                             contact=LinearSpringDashpot(stiffness=2e3, restitution=0.5, friction=0.5))

#: name -> instance, in the order of the docs
MODELS = {
    "hertz_mindlin": hertz_mindlin,
    "linear_spring_dashpot": linear_spring_dashpot,
    "sphere_sphere_contact_edinburgh": sphere_sphere_contact_edinburgh,
    "sphere_sphere_contact_hunt_crossley": sphere_sphere_contact_hunt_crossley,
    "sphere_sphere_contact_gonthier": sphere_sphere_contact_gonthier,
    "luding": luding,
    "ice": ice,
    "parallel_bond": parallel_bond,
}


def _index(out: Path, results: dict) -> None:
    rows = []
    for name, summary in results.items():
        status = "PASS" if summary["passed"] else "FAIL"
        c = summary["counts"]
        failed = ", ".join(html.escape(ch["name"]) for ch in summary["checks"] if not ch["passed"]) or "-"
        rows.append(f"<tr><td><a href='{name}/report.html'>{name}</a></td><td>{html.escape(summary['model_repr'])}</td>"
                    f"<td class='{status.lower()}'>{status}</td><td>{c['pass']} / {c['fail']} / {c['n/a']}</td>"
                    f"<td>{failed}</td></tr>")
    (out / "index.html").write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>contactlab validation reports</title>"
        "<style>body{font-family:sans-serif;margin:2em}td,th{border:1px solid #ccc;padding:4px 8px}"
        "table{border-collapse:collapse}.pass{color:#060}.fail{color:#b00;font-weight:bold}</style></head><body>"
        "<h1>Validation reports of the built-in contact models</h1>"
        "<p>Generated by <code>python -m contactlab.validation.builtin --out docs/validation</code>.</p>"
        "<table><tr><th>model</th><th>instance</th><th>result</th><th>pass / fail / n/a</th><th>failed checks</th>"
        "</tr>" + "".join(rows) + "</table></body></html>\n")
    (out / "index.json").write_text(json.dumps(
        {name: {"passed": s["passed"], "counts": s["counts"], "model": s["model_repr"],
                "failed": [c["name"] for c in s["checks"] if not c["passed"]]} for name, s in results.items()},
        indent=2) + "\n")


def main(argv=None) -> int:
    """Regenerate the validation report of every built-in model (or of the ones named)."""
    from .battery import validate

    p = argparse.ArgumentParser(prog="python -m contactlab.validation.builtin",
                                description="Validation reports of the built-in contact models.")
    p.add_argument("names", nargs="*", help=f"models to validate (default all: {', '.join(MODELS)})")
    p.add_argument("--out", default="docs/validation", help="output directory (default docs/validation)")
    p.add_argument("--quick", action="store_true", help="the reduced sweep of the CI tests")
    args = p.parse_args(argv)
    unknown = sorted(set(args.names) - set(MODELS))
    if unknown:
        print(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}", file=sys.stderr)
        return 2
    out = Path(args.out)
    results = {}
    all_ok = True
    for name in args.names or list(MODELS):
        t0 = time.perf_counter()
        report = validate(MODELS[name], quick=args.quick, out=out / name)
        all_ok &= report.passed
        results[name] = report.summary()
        print(f"{name}: {'PASS' if report.passed else 'FAIL'} in {time.perf_counter() - t0:.1f} s -> "
              f"{out / name / 'report.html'}", flush=True)
        for line in report.lines():
            print("    " + line)
    # keep the index complete when only some models were regenerated
    for name in MODELS:
        if name not in results and (out / name / "summary.json").exists():
            results[name] = json.loads((out / name / "summary.json").read_text())
    _index(out, {n: results[n] for n in MODELS if n in results})
    return 0 if all_ok else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
