"""The window's models: plain, evented objects (psygnal) that hold all state and know nothing of Qt.

- `launch.LaunchModel`: the launch the user describes and what sim says about it;
  `occupancy_curves`: the Occupancy Calculator's three charts around it.
- `simulation.SimulationOptions`, `simulation.SimulationModel`: how to simulate it, and the run.
- `playback.PlaybackModel`: where the animation is in time, and the frame there.
- `bench.BenchModel`: live measurements, which kernels are shown, and the scheduler's predictions.

Views subscribe to their signals; results computed in worker threads reach them on the GUI thread
through gui.adapter's queued signals.
"""
