"""kernels/declare/kernel_file.py: a user's kernel file in, its declarations out; anything wrong is one
line that names the file (and the line)."""

from __future__ import annotations

import sys

import pytest

from kernels.declare.kernel_file import MAX_FILE_BYTES, MODULE_PREFIX, load_kernel_file, split_path
from sim.inputs.errors import UserError

GOOD = '''
import numpy as np
import triton
import triton.language as tl
from numba import cuda


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    tl.store(out_ptr + offsets, 2 * tl.load(x_ptr + offsets, mask=mask), mask=mask)


@cuda.jit
def double_numba(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 2 * x[i]


WARPSCOPE = [
    dict(kernel=double_kernel, inputs=lambda n: [np.ones(n, np.float32)],
         block=dict(BLOCK_SIZE=1024, num_warps=4)),
    dict(kernel=double_numba, name="double_cuda", inputs=lambda n: [np.ones(n, np.float32)],
         block=dict(threads=256)),
]
'''


def _write(tmp_path, text: str, name: str = "kernels_here.py"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _our_modules() -> set[str]:
    return {m for m in sys.modules if m.startswith(MODULE_PREFIX)}


def _fails(path, match: str, name=None) -> str:
    before = _our_modules()
    with pytest.raises(UserError, match=match) as caught:
        load_kernel_file(path, name)
    message = str(caught.value)
    assert "\n" not in message, message
    assert _our_modules() == before, "a failed file stayed in sys.modules"
    return message


def test_a_file_with_two_declarations(tmp_path):
    path = _write(tmp_path, GOOD)
    triton_decl, numba_decl = load_kernel_file(path)
    assert (triton_decl["name"], triton_decl["backend"]) == ("double_kernel", "triton")
    assert (numba_decl["name"], numba_decl["backend"]) == ("double_cuda", "numba")
    assert triton_decl["block"] == {"BLOCK_SIZE": 1024, "num_warps": 4}
    assert triton_decl["inputs"](3)[0].tolist() == [1, 1, 1]


def test_one_declaration_by_name(tmp_path):
    path = _write(tmp_path, GOOD)
    assert [d["name"] for d in load_kernel_file(f"{path}:double_cuda")] == ["double_cuda"]
    assert [d["name"] for d in load_kernel_file(path, "double_kernel")] == ["double_kernel"]
    message = _fails(f"{path}:nope", "has no kernel named 'nope'")
    assert "double_kernel, double_cuda" in message


def test_two_files_of_one_name_never_meet(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = _write(tmp_path / "a", GOOD)
    b = _write(tmp_path / "b", GOOD.replace("2 * ", "3 * "))
    ka, kb = load_kernel_file(a)[0]["kernel"], load_kernel_file(b)[0]["kernel"]
    assert ka.fn.__module__ != kb.fn.__module__
    assert ka.fn.__module__.startswith(MODULE_PREFIX)


def test_split_path():
    assert split_path("k.py:softmax") == ("k.py", "softmax")
    assert split_path("k.py") == ("k.py", None)
    assert split_path("dir/k.py:my_kernel2") == ("dir/k.py", "my_kernel2")


def test_not_a_file(tmp_path):
    _fails(tmp_path, "is not a regular file")
    _fails(tmp_path / "missing.py", "does not exist")


def test_too_big(tmp_path):
    path = _write(tmp_path, "#" * (MAX_FILE_BYTES + 1))
    _fails(path, "a kernel file is source code")


def test_syntax_error_names_the_line(tmp_path):
    path = _write(tmp_path, GOOD.replace("mask = offsets < n", "mask = offsets <"))
    assert "line 11: syntax error" in _fails(path, "syntax error")


def test_raising_on_import_names_type_message_and_line(tmp_path):
    path = _write(tmp_path, "import numpy as np\n\nSIZE = int('lots')\n")
    message = _fails(path, "importing it raised ValueError")
    assert "line 3" in message and "invalid literal" in message
    path = _write(tmp_path, "import definitely_not_a_module_here\n", "imports.py")
    _fails(path, "raised ModuleNotFoundError: No module named 'definitely_not_a_module_here'")
    path = _write(tmp_path, "import sys\nsys.exit(3)\n", "exits.py")
    _fails(path, "raised SystemExit")


def test_missing_declaration(tmp_path):
    path = _write(tmp_path, GOOD.split("WARPSCOPE")[0])
    assert "docs/KERNEL_FILES.md" in _fails(path, "declares no kernel: it needs WARPSCOPE")


def test_declarations_that_are_not_dicts(tmp_path):
    path = _write(tmp_path, GOOD + "\nWARPSCOPE = 'softmax'\n")
    _fails(path, "WARPSCOPE must be a dict or a non-empty list of dicts, not str")
    path = _write(tmp_path, GOOD + "\nWARPSCOPE = [WARPSCOPE[0], 42]\n", "second.py")
    _fails(path, r"WARPSCOPE\[1\] is a int, not a dict")


def test_missing_keys(tmp_path):
    path = _write(tmp_path, GOOD + "\nWARPSCOPE = dict(kernel=double_kernel)\n")
    _fails(path, r"WARPSCOPE\[0\] lacks inputs, block \(required: kernel, inputs, block")
    path = _write(tmp_path, GOOD + "\nWARPSCOPE[1]['block'] = 256\n", "blocks.py")
    _fails(path, "declaration 'double_cuda': block must be a dict")


def test_a_kernel_that_is_neither_triton_nor_numba(tmp_path):
    path = _write(tmp_path, GOOD + "\ndef plain(x):\n    pass\n\nWARPSCOPE[0]['kernel'] = plain\n")
    _fails(path, "kernel must be a @triton.jit or @cuda.jit function, got a plain function")
    path = _write(tmp_path, GOOD + "\nWARPSCOPE[0]['kernel'] = 'double_kernel'\n", "text.py")
    _fails(path, "got a str")


def test_two_declarations_of_one_name(tmp_path):
    path = _write(tmp_path, GOOD + "\nWARPSCOPE[1]['name'] = 'double_kernel'\n")
    _fails(path, "two declarations are named 'double_kernel'")


def test_declarations_become_kernel_specs(tmp_path):
    from kernels.declare.spec import declare

    path = _write(tmp_path, GOOD)
    specs = [declare(d, origin=str(path)) for d in load_kernel_file(path)]
    assert [(s.name, s.backend, s.sweep) for s in specs] == [
        ("double_kernel", "triton", "BLOCK_SIZE"), ("double_cuda", "numba", "threads")]
    assert specs[0].launch_shape(4096).grid == (4,)
