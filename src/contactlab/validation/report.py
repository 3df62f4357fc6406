"""Write a :class:`~contactlab.validation.results.ValidationReport` to disk.

``report.html`` is self-contained (the figures are embedded as base64 PNG data URIs, no external
style or script); the same figures are written next to it as ``<name>.png``, and ``summary.json``
holds the machine-readable summary (model, parameters, declared properties, every check with its
value, criterion and status, the overall result).  Figures are drawn with matplotlib's Agg backend
(``pip install -e ".[plot]"``).
"""
from __future__ import annotations

import base64
import html
import io
import json
import math
from pathlib import Path

import numpy as np

from .formatting import fmt

__all__ = ["write_report", "render_figure"]

DPI = 90
_STYLE = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:1.5em 2em;color:#222;max-width:1400px}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.88em;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 7px;
vertical-align:top;text-align:left}th{background:#f3f3f3}.pass{color:#070;font-weight:bold}
.fail{color:#b00;font-weight:bold}.na{color:#777;font-weight:bold}.verdict{font-size:1.3em;padding:.3em .6em;
display:inline-block;border-radius:4px}.verdict.pass{background:#e6f4e6}.verdict.fail{background:#fbe7e7}
.small{font-size:.85em;color:#555}figure{margin:1em 0}figure img{max-width:100%;border:1px solid #eee}
code{background:#f6f6f6;padding:0 3px}
"""


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def render_figure(spec: dict) -> bytes:
    """PNG bytes of one figure spec (``title`` and ``panels``, each with ``series`` of ``x``/``y``)."""
    plt = _plt()
    from matplotlib.ticker import NullFormatter

    panels = spec["panels"]
    n = max(len(panels), 1)
    cols = min(n, 3)
    rows = int(math.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4.3 * cols, 3.3 * rows), squeeze=False)
    for k, panel in enumerate(panels):
        ax = axes[k // cols][k % cols]
        for s in panel["series"]:
            x = np.asarray(s["x"], dtype=float)
            y = np.asarray(s["y"], dtype=float)
            keep = np.isfinite(x) & np.isfinite(y)
            if panel.get("xscale") == "log":
                keep &= x > 0
            if panel.get("yscale") == "log":
                keep &= y > 0
            if not keep.any():
                continue
            kind = s.get("kind", "line")
            if kind == "points":
                ax.plot(x[keep], y[keep], "o", ms=4, label=s.get("label"))
            elif kind == "dashed":
                ax.plot(x[keep], y[keep], "--", lw=1.2, label=s.get("label"))
            else:
                ax.plot(x[keep], y[keep], "-", lw=1.2, label=s.get("label"))
        ax.set_xscale(panel.get("xscale", "linear"))
        ax.set_yscale(panel.get("yscale", "linear"))
        if panel.get("xscale") == "log":
            ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(panel.get("title", ""), fontsize=9)
        ax.set_xlabel(panel.get("xlabel", ""), fontsize=8)
        ax.set_ylabel(panel.get("ylabel", ""), fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, alpha=0.3)
        if any(s.get("label") for s in panel["series"]):
            ax.legend(fontsize=6.5, loc="best")
    for k in range(len(panels), rows * cols):
        axes[k // cols][k % cols].axis("off")
    fig.suptitle(spec.get("title", ""), fontsize=10)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    plt.close(fig)
    return _small_png(buf.getvalue())


def _small_png(png: bytes) -> bytes:
    """The same picture with a 64-colour palette (line plots need no more; 3-4 times smaller)."""
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - Pillow comes with matplotlib
        return png
    image = Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=64)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue() if out.tell() < len(png) else png


def _value(c) -> str:
    if c.value is None:
        return ""
    return f"{fmt(c.value)} {html.escape(c.unit)}".strip()


def write_report(report, out_dir) -> Path:
    """Write ``report.html``, ``summary.json`` and one PNG per figure into ``out_dir``; returns it."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = report.summary()
    images = {}
    for spec in report.figures:
        png = render_figure(spec)
        (out / f"{spec['name']}.png").write_bytes(png)
        images[spec["name"]] = png
    summary["figures"] = [f"{name}.png" for name in images]
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (out / "report.html").write_text(_html(report, summary, images))
    return out


def _html(report, summary, images) -> str:
    esc = html.escape
    verdict = "pass" if report.passed else "fail"
    c = summary["counts"]
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>contactlab validation: "
             f"{esc(report.model_name)}</title><style>{_STYLE}</style></head><body>",
             f"<h1>Validation of {esc(report.model_name)}</h1>",
             f"<p><code>{esc(report.model_repr)}</code></p>",
             f"<p><span class='verdict {verdict}'>{'PASS' if report.passed else 'FAIL'}</span> &nbsp; "
             f"{c['pass']} passed, {c['fail']} failed, {c['n/a']} not applicable "
             f"({'quick' if report.settings.get('quick') else 'full'} battery, {report.elapsed:.1f} s)</p>"]
    # the checks
    parts.append("<h2>Checks</h2><table><tr><th>status</th><th>group</th><th>check</th><th>value</th>"
                 "<th>criterion</th><th>reference</th><th>details</th></tr>")
    for ch in report.checks:
        cls = {"pass": "pass", "FAIL": "fail", "n/a": "na"}[ch.status]
        fig = f" <a href='#{esc(Path(ch.figure).stem)}'>[figure]</a>" if ch.figure else ""
        detail = esc(ch.details) + (f"<br><i>not applicable: {esc(ch.not_applicable)}</i>" if ch.not_applicable else "")
        parts.append(f"<tr><td class='{cls}'>{esc(ch.status)}</td><td>{esc(ch.group)}</td><td>{esc(ch.name)}{fig}</td>"
                     f"<td>{_value(ch)}</td><td>{esc(ch.criterion)}</td><td>{esc(ch.reference)}</td>"
                     f"<td class='small'>{detail}</td></tr>")
    parts.append("</table>")
    # the model
    parts.append("<h2>Model, properties and settings</h2><table><tr><th>parameter</th><th>value</th></tr>")
    for k, v in summary["parameters"].items():
        parts.append(f"<tr><td>{esc(str(k))}</td><td>{esc(json.dumps(v))}</td></tr>")
    parts.append("</table><table><tr><th>declared property</th><th>value</th></tr>")
    for k, v in summary["properties"].items():
        parts.append(f"<tr><td>{esc(str(k))}</td><td>{esc(str(v))}</td></tr>")
    parts.append(f"</table><p>Closed form of the impact: {esc(str(report.closed_form or 'none declared'))}</p>")
    parts.append("<table><tr><th>scale / setting</th><th>value</th></tr>")
    for k, v in list(summary["scales"].items()) + list(summary["settings"].items()):
        parts.append(f"<tr><td>{esc(str(k))}</td><td>{esc(json.dumps(v))}</td></tr>")
    parts.append("</table>")
    # the figures
    parts.append("<h2>Figures</h2>")
    for spec in report.figures:
        data = base64.b64encode(images[spec["name"]]).decode("ascii")
        parts.append(f"<figure id='{esc(spec['name'])}'><img alt='{esc(spec.get('title', ''))}' "
                     f"src='data:image/png;base64,{data}'><figcaption class='small'>{esc(spec.get('title', ''))} "
                     f"(<a href='{esc(spec['name'])}.png'>{esc(spec['name'])}.png</a>)</figcaption></figure>")
    parts.append("<p class='small'>Generated by <code>contactlab validate</code> "
                 "(contactlab.validation.battery); criteria and references: docs/validation.md.</p></body></html>\n")
    return "\n".join(parts)
