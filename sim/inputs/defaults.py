"""The launch a user meets before typing a size, the same in the window and on the command line."""

DEFAULT_ELEMENTS = 1_000_000  # a vector kernel's element count
# A matmul reads the size as its side n (M = N = K = n): a side a GPU does in a few ms, never the
# 1,000,000 of a vector add (a 30-million-block grid, which froze the window once)
DEFAULT_SIDE = 4096
