"""The launch being looked at, on a second GPU: both sides and what differs (sim.model.gpu_diff).

`CompareGpusModel` follows the LaunchModel; the second GPU is any name the launch model knows (a
preset or the detected device). The second side is the same inputs through the same
`compute_state` (the kernel's own grid rule included), so the two sides differ only by the GPU.
Both sides are predicted when first read after a change (a tab behind another asks nothing),
once per launch and second GPU. No Qt here.
"""

from __future__ import annotations

from dataclasses import replace

from psygnal import Signal

from gui.models.kernel_rules import RulesPending, RulesRequest
from gui.models.launch import LaunchModel, LaunchState, compute_state
from gui.models.matmul_auto import launched
from sim.model.gpu_diff import Difference, LaunchSide, differences, side_of


class CompareGpusModel:
    """Signals: `changed()` when either side changed; `rules_wanted(RulesRequest)` when a rule of
    the user's kernel file must be asked for the second GPU (off the GUI thread: gui/rules_jobs.py,
    which answers through `rules_answered`)."""

    changed = Signal()
    rules_wanted = Signal(object)

    def __init__(self, launch: LaunchModel, insight=None, other: str | None = None) -> None:
        self.launch, self.insight = launch, insight  # insight: the ceiling rule (InsightModel)
        self._other = other or self.default_other()
        self._of: tuple | None = None  # (launch state, second GPU) the sides were made for
        self._asked: set[tuple] = set()  # RulesRequest keys a worker has answered
        launch.changed.connect(self._on_launch_changed)
        launch.specs_changed.connect(self._on_specs_changed)

    def default_other(self) -> str:
        """The detected GPU beside a preset, else a T4 (or an H200 when the launch is on a T4)."""
        names = self.launch.gpu_names()
        here = self.launch.inputs.gpu
        detected = [n for n in names[:1] if n not in _presets()]
        if detected and detected[0] != here:
            return detected[0]
        return "T4" if here != "T4" else "H200"

    @property
    def other(self) -> str:
        return self._other

    @property
    def sides(self) -> tuple[LaunchSide, LaunchSide] | None:
        return self._derived()._sides

    @property
    def differences(self) -> list[Difference]:
        return self._derived()._differences

    @property
    def message(self) -> str:
        """Why there are no sides (a launch that is nonsense on one GPU), or ""."""
        return self._derived()._message

    def set_other(self, name: str) -> bool:
        if name == self._other:
            return True
        try:
            self.launch.spec_for(name)
        except ValueError:
            return False
        self._other = name
        self.changed.emit()
        return True

    def _on_launch_changed(self, *_args) -> None:
        self.changed.emit()

    def _on_specs_changed(self) -> None:
        if self._other not in self.launch.gpu_names():
            self._other = self.default_other()
        self._of = None  # a detected GPU may now stand behind the name
        self.changed.emit()

    def _derived(self) -> CompareGpusModel:
        """This model, its sides made for the launch state and second GPU now held (the
        LaunchModel makes a new state object only when the launch changed)."""
        of = self._of
        if of is None or of[0] is not self.launch.state or of[1] != self._other:
            self._recompute()
        return self

    def _recompute(self) -> None:
        here = self.launch.state
        self._of = (here, self._other)
        there = self._state_on(self._other)
        self._sides, self._differences, self._message = None, [], ""
        for st in (here, there):
            if st.error or st.occ is None or st.geometry is None:
                self._message = f"{st.spec.name}: {st.error or st.asking or 'no launch'}"
                return
        self._sides = (self._side(here), self._side(there))
        self._differences = differences(*self._sides)

    def _state_on(self, name: str) -> LaunchState:
        spec = self.launch.spec_for(name)
        inputs = replace(self.launch.inputs, gpu=name)
        try:  # matmul_auto: the candidate it picks on that GPU
            kernel, inputs = launched(self.launch.kernel(), inputs, spec)
        except ValueError as exc:  # no candidate suits these sizes there
            return LaunchState(inputs, spec, None, None, str(exc).splitlines()[0])
        try:
            return compute_state(inputs, spec, kernel)
        except RulesPending:  # a rule of the user's file that needs this GPU's SMs
            request = RulesRequest(inputs, spec, kernel)
            if request.key in self._asked:  # answered, yet not at hand: no endless asking
                return LaunchState(inputs, spec, None, None, f"grid: {request.file} gave no answer")
            self.rules_wanted.emit(request)
            return LaunchState(inputs, spec, None, None, asking=request.text)

    def rules_answered(self, request: RulesRequest, _error: str = "") -> None:
        """A worker asked the second GPU's rules: their answers (an error too) are at hand now."""
        self._asked.add(request.key)
        self._of = None
        self.changed.emit()

    def _side(self, st: LaunchState) -> LaunchSide:
        ceiling = self.insight.ceiling_for(st.spec)[0] if self.insight is not None else None
        return side_of(st.spec, st.occ, st.geometry, bytes_moved=st.bytes_moved,
                       ceiling_gbps=ceiling, work=st.work, loads=st.loads, chain=st.chain)


def _presets() -> list[str]:
    from sim.rules.devices import presets

    return presets()
