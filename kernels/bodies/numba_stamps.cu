// The SM a block runs on and the GPU's global nanosecond timer, for Numba kernels: numba-cuda
// exposes neither, so kernels/instrument.py's stamped copy of a @cuda.jit kernel declares these
// with cuda.declare_device(..., abi="c") and links this file. `asm volatile`: every read is fresh.
// Checked here with `nvcc -arch=sm_90 -c kernels/numba_stamps.cu -rdc=true`.

extern "C" __device__ unsigned long long warpscope_globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

extern "C" __device__ unsigned int warpscope_smid() {
    unsigned int s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}
