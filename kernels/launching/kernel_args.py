"""`--kernel NAME` / `--kernel-file FILE.py[:NAME]` for sim's `explain` and `simulate`: the launch a
kernel's declaration makes (its own grid rule), with its registers and shared memory from its
compiler for the chosen GPU, without that GPU. sim/cli.py cannot import kernels, so it asks through
the hook these options set (`args.kernel_launch(args, gpu)`).
"""

from __future__ import annotations

import argparse

from sim.inputs.args import arg_count, arg_path
from sim.inputs.errors import UserError

def add_kernel_options(parser) -> None:
    """`--kernel NAME` / `--kernel-file FILE.py[:NAME]`: take the grid from that kernel's
    declaration and its registers and shared memory from its compiler (sim/cli.py asks
    `args.kernel_launch(args, gpu)`)."""
    parser.add_argument("--kernel", metavar="NAME", default=None,
                        help="a registry kernel: its own grid rule gives the blocks (e.g. add_numba "
                             "covers 4 elements per thread); --block sets its block parameter; "
                             "registers and shared memory come from its compiler for --gpu "
                             "(unless --regs and --smem are given)")
    parser.add_argument("--kernel-file", metavar="FILE.py[:NAME]", default=None,
                        type=arg_path("--kernel-file"), help="your own kernel (docs/KERNEL_FILES.md; the file is run): like "
                             "--kernel, for the kernel the file declares (NAME picks one of "
                             "several)")
    parser.add_argument("--warps", type=arg_count("--warps", 1, 64), default=None, metavar="W",
                        help="with a Triton --kernel: num_warps (default: the kernel's own)")
    parser.add_argument("--dims", type=_one_product, default=None, metavar="M=..,N=..,K=..",
                        help="with a matmul --kernel: the product's sizes (default: "
                             "M=N=K=--elements)")
    parser.set_defaults(kernel_launch=kernel_launch, kernel_is_sided=kernel_is_sided)


def kernel_is_sided(args) -> bool:
    """Whether --kernel reads --elements as a matrix side (a matmul: M = N = K = n)."""
    if not getattr(args, "kernel", None) or getattr(args, "kernel_file", None):
        return False
    from kernels.declare.registry import get_kernel

    try:
        return get_kernel(args.kernel).is_matrix_product
    except (KeyError, UserError):
        return False  # an unknown name is refused, in one line, where the launch is made


def _one_product(text: str) -> dict:
    from sim.traces.waves import parse_sweep

    found = parse_sweep(text)
    if len(found) != 1:
        raise argparse.ArgumentTypeError(f"--dims takes one size each of M, N and K, got {text!r}")
    return found[0]


def _file_facts(args, gpu, cc) -> dict:
    """kernels.declare.user_code's launch facts of the kernel --kernel-file names. A file's code runs in
    its own process under kernels.declare.declarations.Limits, never in this one: its prints stay out of
    our output, and a loop, a 10 GB allocation, a crash or a bad grid rule is one line (exit
    status 1)."""
    from kernels.declare.user_code import file_declared_launch

    if getattr(args, "dims", None) is not None:
        raise UserError("--dims is for a built-in matmul --kernel; a file's kernel takes --elements")
    return file_declared_launch(args.kernel_file, args.kernel, args.elements, _block_value(args), args.warps,
                             gpu.sm_count, cc, getattr(args, "max_registers", None))


def _block_value(args, spec=None):
    """--block as the kernel's sweep value: a number, or a 2D/3D block as its tuple, for a kernel
    that declares one (a Numba threads=(16, 16)); a 1D kernel refuses it."""
    dims = getattr(args, "block_dims", None)
    if dims is None:
        return args.block
    if spec is not None and not isinstance(spec.block.get("threads"), (tuple, list)):
        raise UserError(f"{spec.name} indexes its threads in 1D, so a {dims.text('x')} block would "
                        "not be its launch; give --block as one number")
    return list(dims.tuple[:dims.rank])


def _builtin_launch(args, gpu):
    """(the declaration launched, its block setting, matmul_auto's choice or None) of --kernel."""
    from kernels.measure.harness import block_setting
    from kernels.declare.registry import get_kernel

    spec = get_kernel(args.kernel)
    if not spec.launchable:
        raise UserError(f"{spec.name}: torch chooses its own grid; pick a Triton or Numba kernel")
    given = getattr(args, "dims", None)
    if given is not None and not spec.is_matrix_product:
        raise UserError(f"--dims is for a matrix product; {spec.name} takes --elements")
    block, choice = block_setting(spec, _block_value(args, spec), args.warps), None
    if spec.name == "matmul_auto":  # what it launches is the candidate it chose
        from kernels.declare.registry import matmul_choice, matmul_variants

        choice = matmul_choice(given or spec.size_dims(args.elements), gpu)
        spec = matmul_variants()[choice.chosen.variant]
        block = dict(choice.chosen.params)
    return spec, block, choice


def kernel_launch(args, gpu):
    """The launch of `--kernel` (or `--kernel-file`) at `args.elements` on `gpu`, registers and
    shared memory from its compiler for gpu's compute capability; None without a kernel."""
    if not getattr(args, "kernel", None) and not getattr(args, "kernel_file", None):
        if getattr(args, "warps", None) is not None:
            raise UserError("--warps needs a Triton --kernel")
        return None
    from sim.cli import CompiledFacts, KernelLaunch

    from kernels.declare.user_code import declared_launch

    need_compile = getattr(args, "regs", None) is None or getattr(args, "smem", None) is None
    cc = gpu.compute_capability if need_compile else None
    spec, choice = None, None
    if args.kernel_file:
        facts = _file_facts(args, gpu, cc)
    else:
        spec, block, choice = _builtin_launch(args, gpu)
        facts = declared_launch(spec, args.elements, None, None, gpu.sm_count, cc, setting=block,
                             dims=getattr(args, "dims", None),
                             max_registers=getattr(args, "max_registers", None))
    params = ", ".join(f"{k}={_param(v)}" for k, v in facts["params"].items())
    dims = facts["dims"]
    if set(dims) != {"n"}:
        params = ", ".join(f"{k}={v:,}" for k, v in dims.items()) + "; " + params
    note = (f"matmul_auto chose {facts['name']}; " if choice else "") + \
        f"grid from {facts['name']}'s declaration: {params}"
    compiled = None
    if facts["compiled"] is not None:
        compiled = CompiledFacts(**facts["compiled"])
        note += f"; registers from {compiled.compiler} for {compiled.target}"
        if getattr(args, "max_registers", None) is not None:
            note += f", capped at {args.max_registers} per thread"
        if compiled.elements != args.elements:
            note += f" (compiled at {compiled.elements:,} elements, the same remainder mod 16)"
    return KernelLaunch(name=facts["name"], blocks=facts["blocks"],
                        threads_per_block=facts["threads_per_block"],
                        elements_per_block=facts["elements_per_block"],
                        bytes_moved=facts["bytes_moved"],
                        regs_per_thread=compiled.regs_per_thread if compiled else None,
                        smem_per_block=compiled.smem_per_block if compiled else None,
                        note=note, compiled=compiled, sizes=dims, declaration=spec,
                        block_params=dict(facts["params"]), choice=choice, chain=facts["chain"])


def _param(value) -> str:
    return str(tuple(value)) if isinstance(value, (list, tuple)) else str(value)
