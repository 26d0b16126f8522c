"""What a GPU is and allows: `devices` (GpuSpec, presets, the one device-name rule), `physics`
(the launch model's per-GPU constants, each with its provenance: resources/physics/), `occupancy`
(blocks per SM by the CUDA driver's rules, limiter by limiter), `geometry` (the grid a launch
makes, its waves, the one bytes-per-element constant)."""
