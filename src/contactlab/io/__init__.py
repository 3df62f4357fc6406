"""Input and output: reporters (VTK, CSV, checkpoints), scene files, progress display."""
from .checkpoint import Checkpoint, CheckpointReporter, read_checkpoint, save_checkpoint
from .csv import EnergyCSVReporter
from .reporter import Reporter
from .sensors import Recorder
from .vtk import VTKReporter

__all__ = ["Reporter", "Recorder", "VTKReporter", "EnergyCSVReporter", "CheckpointReporter", "save_checkpoint",
           "read_checkpoint", "Checkpoint"]
