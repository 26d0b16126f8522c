"""The launch a user meets before typing a size, the same in the window and on the command line."""

DEFAULT_GPU = "H200"  # the preset a launch names where it names none (and no GPU is detected)
DEFAULT_ELEMENTS = 1_000_000  # a vector kernel's element count
# A matmul reads the size as its side n (M = N = K = n): a side a GPU does in a few ms, never the
# 1,000,000 of a vector add (a 30-million-block grid, which froze the window once)
DEFAULT_SIDE = 4096
DEFAULT_THREADS = 256  # threads per block when none is given


def launch_elements(args) -> int:
    """--elements, or its default: --grid's threads, a matmul --kernel's side, else DEFAULT_ELEMENTS (the kernels
    layer says which a kernel takes, through the hook `args.kernel_is_sided`)."""
    if args.elements is not None:
        return args.elements
    grid = getattr(args, "grid", None)
    if grid is not None:  # a given grid covers one element per thread
        return grid.count * (args.block or DEFAULT_THREADS)
    sided = getattr(args, "kernel_is_sided", None)
    return DEFAULT_SIDE if sided is not None and sided(args) else DEFAULT_ELEMENTS
