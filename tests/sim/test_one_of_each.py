"""One of each (issue 16): the code holds one launch overhead per GPU (as data), one bytes-per-
element constant, one waves computation, one memory-bound model and one device-name rule. This
reads the source: a second copy of any of them, or the old duplicates coming back, fails here."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE = sorted(p for d in ("sim", "gui", "kernels") for p in (ROOT / d).rglob("*.py"))


def _hits(pattern: str, allowed: dict[str, int] | None = None) -> list[str]:
    """Lines of the code matching `pattern` (comments stripped), minus `allowed` {file: count}."""
    rx, out, left = re.compile(pattern), [], dict(allowed or {})
    for path in CODE:
        rel = path.relative_to(ROOT).as_posix()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if rx.search(code):
                if left.get(rel, 0) > 0:
                    left[rel] -= 1
                else:
                    out.append(f"{rel}:{n}: {line.strip()}")
    return out


def test_the_old_duplicates_are_gone():
    assert _hits(r"\b(H200_FIT|H200_TRIP|predict_bandwidth|MemoryBoundCost|memory_model_for|"
                 r"ARTICLE_ADD_BYTES_PER_ELEMENT|launch_trip|_same_gpu|schedule_launch|CostParams)\b") == []
    assert not (ROOT / "sim" / "predict.py").exists()
    assert _hits(r"^def predict_launch\b|^def predict_launch\(", {"sim/model/launch_model.py": 1}) == []


def test_launch_overheads_and_model_constants_are_data():
    """No launch overhead, DRAM latency or trip overhead is a number in code: they are read from
    resources/physics (sim/rules/physics.py)."""
    assert _hits(r"(launch_overhead_us|launch_us|overhead_ns|dram_latency_ns)\s*[=:]\s*[\d.]+\b") == []
    assert _hits(r"\b(4\.4|6\.2|4\.1)\b") == []


def test_one_bytes_per_element_constant():
    assert _hits(r"BYTES_PER_ELEMENT_ADD\s*=", {"sim/rules/geometry.py": 1}) == []
    assert _hits(r"\b12\.0\b|\b3\s*\*\s*4\b|\b12\s*\*\s*(n|elements)\b", {"sim/rules/geometry.py": 1}) == []


def test_one_waves_computation():
    """blocks / blocks per wave is sim.rules.geometry.waves_of (and the geometry's whole waves beside
    it); everything else reads it. plan_blocks only counts the full waves a simulation leaves out."""
    assert _hits(r"/\s*(self\.)?(blocks_per_wave|concurrent_tiles|n_slots|capacity)\b|"
                 r"/\s*tl\.capacity", {"sim/rules/geometry.py": 2, "sim/schedule/policies.py": 2}) == []


def test_one_device_name_rule():
    assert _hits(r"^def (match_device|preset_for_device_name|same_gpu)\b",
                 {"sim/rules/devices.py": 2, "sim/rules/physics.py": 1}) == []
    # names compared by hand (lower-casing a device name, stripping "NVIDIA ") live in the rule
    assert _hits(r"device_name\.lower\(\)|name\.lower\(\)\s*==") == []
