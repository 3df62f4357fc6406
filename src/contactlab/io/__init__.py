"""Input and output: reporters (VTK, CSV, checkpoints), scene files, progress display."""
