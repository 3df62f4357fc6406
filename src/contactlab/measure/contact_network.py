"""The contact network of a region: coordination number (with and without rattlers) and fabric tensor.

Counting is per body, with the region's weights (:mod:`~contactlab.measure.weights`): body ``p``
has ``c_p`` contacts (other bodies, and with ``walls=True``, the default, plane walls and mesh
walls too: a wall supports a body as a neighbour does).

* **Coordination number** ``Z = sum_p w_p c_p / sum_p w_p``; for the whole simulation without
  walls ``Z = 2 C / N``.
* **Mechanical coordination number** (rattlers excluded): a *rattler* has fewer than
  ``min_contacts`` contacts (default 2: a body held by one contact carries no load, Thornton 2000),
  and ``Z_m = sum_{p not rattler} w_p c_p / sum_{p not rattler} w_p``.  With the default this is
  Thornton's ``Z_m = (2C - N_1) / (N - N_0 - N_1)`` (``N_0``, ``N_1``: bodies with 0 and 1 contacts;
  a non-rattler's contacts with rattlers still count).  ``iterative=True`` removes rattlers
  repeatedly, counting only contacts among the bodies left, until none has fewer than
  ``min_contacts`` (the usual definition for frictionless packings, with ``min_contacts = d + 1``:
  4 in 3-D, 3 in 2-D).
* **Fabric tensor** ``phi_ij = <n_i n_j>``: the average over the region's contacts of the outer
  product of the unit contact normal, each contact weighted by the weights of its bodies
  (``w_i + w_j``; ``w_i`` for a wall), so that a contact inside the region counts once per body.
  ``tr(phi) = 1``; isotropic ``phi = I/3`` (``I/2`` in the plane of a 2-D scene).
"""
from __future__ import annotations

import numpy as np

from .._arguments import as_bool, as_int, checked_call
from .snapshot import Snapshot, snapshot
from .volumes import as_measure_region
from .weights import particle_weights

__all__ = ["coordination", "fabric", "coordination_of", "fabric_of"]


def _counts(snap: Snapshot, walls: bool, keep: np.ndarray | None = None) -> np.ndarray:
    """Contacts per body (N,), among the bodies of ``keep`` (None: all)."""
    n = snap.n_bodies
    ci, cj = snap.contact_i, snap.contact_j
    body_pair = cj >= 0
    use = body_pair.copy() if not walls else np.ones(len(ci), dtype=bool)
    if keep is not None:
        use &= keep[ci] & np.where(body_pair, keep[np.maximum(cj, 0)], True)
    counts = np.bincount(ci[use], minlength=n)
    counts += np.bincount(cj[use & body_pair], minlength=n)
    return counts


def coordination_of(snap: Snapshot, region=None, *, weighting: str = "volume", walls: bool = True,
                    min_contacts: int = 2, iterative: bool = False) -> dict:
    """:func:`coordination` of a :class:`~contactlab.measure.snapshot.Snapshot`."""
    walls = as_bool("walls", walls)
    min_contacts = as_int("min_contacts", min_contacts, low=0)
    iterative = as_bool("iterative", iterative)
    w = particle_weights(snap, as_measure_region(region), weighting)
    counts = _counts(snap, walls)
    total = float(w.sum())
    z = float(np.dot(w, counts) / total) if total > 0 else 0.0
    keep = counts >= min_contacts
    kept_counts = counts
    if iterative:
        while True:
            kept_counts = _counts(snap, walls, keep)
            again = keep & (kept_counts >= min_contacts)
            if np.array_equal(again, keep):
                break
            keep = again
    held = float(w[keep].sum())
    zm = float(np.dot(w[keep], kept_counts[keep]) / held) if held > 0 else 0.0
    return {"coordination": z, "mechanical": zm, "rattler_fraction": (1.0 - held / total) if total > 0 else 0.0,
            "bodies": total, "contacts_per_body": counts}


@checked_call
def coordination(sim, region=None, *, weighting: str = "volume", walls: bool = True, min_contacts: int = 2,
                 iterative: bool = False) -> dict:
    """Coordination numbers of a region (see :mod:`contactlab.measure.contact_network`).

    Returns a dict: ``coordination`` (``Z``, contacts per body), ``mechanical`` (``Z_m``, rattlers
    excluded), ``rattler_fraction`` (weighted fraction of bodies that are rattlers), ``bodies``
    (the sum of the weights) and ``contacts_per_body`` ((N,) int: every body's count).

    Parameters
    ----------
    sim : Simulation
    region : box, sphere or cylinder region, :func:`~contactlab.measure.domain` or None (all)
    weighting : ``"volume"`` or ``"centre"`` (:mod:`~contactlab.measure.weights`)
    walls : bool
        Count contacts with plane and mesh walls (default True).
    min_contacts : int
        A body with fewer contacts is a rattler (default 2).
    iterative : bool
        Remove rattlers repeatedly (default False: once, Thornton's definition).
    """
    return coordination_of(snapshot(sim), region, weighting=weighting, walls=walls, min_contacts=min_contacts,
                           iterative=iterative)


def fabric_of(snap: Snapshot, region=None, *, weighting: str = "volume", walls: bool = True) -> np.ndarray:
    """:func:`fabric` of a :class:`~contactlab.measure.snapshot.Snapshot`."""
    walls = as_bool("walls", walls)
    w = particle_weights(snap, as_measure_region(region), weighting)
    cj = snap.contact_j
    body_pair = cj >= 0
    wc = w[snap.contact_i] + np.where(body_pair, w[np.maximum(cj, 0)], 0.0)
    if not walls:
        wc = np.where(body_pair, wc, 0.0)
    total = float(wc.sum())
    if total == 0.0:
        return np.zeros((3, 3))
    n = snap.contact_normal
    return np.einsum("c,ca,cb->ab", wc, n, n) / total


@checked_call
def fabric(sim, region=None, *, weighting: str = "volume", walls: bool = True) -> np.ndarray:
    """The fabric tensor ``<n (x) n>`` (3, 3) of the contacts in a region (trace 1; see
    :mod:`contactlab.measure.contact_network`).

    ``walls``: include contacts with plane and mesh walls (default True).  A region without
    contacts gives zeros.
    """
    return fabric_of(snapshot(sim), region, weighting=weighting, walls=walls)
