"""How long a test waits on another process (a kernel or compiler host, a compile, a whole app
in a child) before it calls it hung. A guard against hangs, never a speed bar: a wait ends as
soon as its answer comes, so a long guard costs nothing. In a fresh root on two cores shared
with a second suite, the no-torch app's child (36 s quiet) ran past a 120-s guard (2026-12-03)."""

HANG_S = 600
HANG_MS = HANG_S * 1000  # pytest-qt's waits take milliseconds
