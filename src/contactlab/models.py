"""The contact models: ``cl.models.HertzMindlin(...)``, ``cl.models.LinearSpringDashpot(...)``, ...

This module re-exports the registry (:mod:`contactlab.laws.registry`, one row per law), so a law is
declared in one place: every registered model is ``cl.models.<Name>``, including
``cl.models.Contact(normal=..., ...)``, a model assembled from slot laws (built-in ones in
:mod:`contactlab.laws.parts`, or your own, :func:`contactlab.contact_law`).
"""
from .laws.base import ContactModel
from .laws.registry import MODELS

globals().update(MODELS)

__all__ = ["ContactModel", *MODELS]
