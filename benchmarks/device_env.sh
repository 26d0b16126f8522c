# Sourced by the GPU run scripts: `device_env FILE` writes what a run was recorded on (the date,
# the GPU, its driver, clocks and power limit, its uuid, the library versions and the tree) to FILE.
device_env() {
  { date -u +%FT%TZ
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
    nvidia-smi --query-gpu=uuid,serial,pci.bus_id --format=csv,noheader  # which chip (runs W on)
    ${PY:-python3} -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
    ${PY:-python3} -c "import numba_cuda; print('numba-cuda', numba_cuda.__version__)"
    git log -1 --format='commit %H %s' 2>/dev/null; git status --short | head -5; } > "$1" 2>&1
}
