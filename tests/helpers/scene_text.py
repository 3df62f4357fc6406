"""Scene files shared by the tests of the command line (a valid file that cases edit one line of)."""

#: two glass beads above a floor, HertzMindlin, every writer on; valid as it is
TWO_BEADS_ON_A_FLOOR = """
[simulation]
gravity = [0.0, 0.0, -9.81]
duration = 0.001

[materials.glass]
density = 2500.0
young = 1e7
poisson = 0.3

[[sphere]]
position = [0.0, 0.0, 0.0015]
radius = 0.001
material = "glass"

[[sphere]]
position = [0.0, 0.0, 0.0036]
radius = 0.001
material = "glass"

[[wall]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "glass"

[model]
type = "HertzMindlin"
restitution = 0.5
friction = 0.5

[output]
vtk_interval = 0.0005
csv_interval = 0.0005
checkpoint_interval = 0.0005
"""
