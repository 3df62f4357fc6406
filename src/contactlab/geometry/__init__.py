"""The narrow phase: one module per pair of shapes, each emitting the ContactGeometry record (record.py)."""
