"""For every test: compiled kernel resources are cached in a folder of this test session, never in
the user's cache (kernels/compile.py writes under $XDG_CACHE_HOME/warpscope/compiled)."""

import os
import tempfile

os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="warpscope-test-cache-")
