"""Suite-wide settings. Hypothesis's per-example deadline is a wall-clock limit: on CI's two busy
cores (two xdist workers, child processes) it failed correct code as "flaky", so it is off;
performance targets live in benchmarks/, not in unit tests."""

from hypothesis import settings

settings.register_profile("warpscope", deadline=None)
settings.load_profile("warpscope")
