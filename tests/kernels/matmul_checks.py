"""A matmul launch checked as the stream-K and persistent tests check it: C poisoned with NaN
before every call, so a tile a call leaves unwritten (a counter or workspace left dirty by the
call before) fails, then compared with the float64 reference."""

from __future__ import annotations

from kernels.declare import matmul_problem as mp


def assert_right_on_every_call(run, c, a, b, calls: int = 2) -> None:
    ref = mp.reference(a, b)
    for _ in range(calls):
        c.fill_(float("nan"))
        run()
        assert mp.relative_error(c, ref) < mp.TOLERANCE[str(c.dtype).removeprefix("torch.")]
