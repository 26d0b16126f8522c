// CUDA C twins of the Triton trace kernel (kernels/trace_kernels.py), to split "why does the
// Triton kernel fill the GPU more slowly?" into causes. Each block stays resident spin_ns and
// thread 0 stores (smid, start ns, end ns) into out[3 * block ..]; the variants differ only in
// what the block's threads do meanwhile:
//   probe_spin_all  every thread busy-loops on %globaltimer (what the Triton kernel does)
//   probe_spin_one  thread 0 busy-loops; the other threads wait at __syncthreads()
//   probe_sleep     every thread loops on __nanosleep(200) + %globaltimer
// Compiled on the GPU machine by cupy (benchmarks/dispatch_probe_cuda.py); here with
// `nvcc -arch=sm_90 -cubin benchmarks/dispatch_probe.cu` to check that it builds.

__device__ __forceinline__ unsigned long long globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ unsigned int smid() {
    unsigned int s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

__device__ __forceinline__ void stamp(long long* out, unsigned long long start,
                                      unsigned long long end) {
    if (threadIdx.x == 0) {
        long long* row = out + 3 * (long long)blockIdx.x;
        row[0] = smid();
        row[1] = (long long)start;
        row[2] = (long long)end;
    }
}

extern "C" __global__ void probe_spin_all(long long* out, long long spin_ns) {
    unsigned long long start = globaltimer(), now = start;
    while ((long long)(now - start) < spin_ns) now = globaltimer();
    stamp(out, start, now);
}

extern "C" __global__ void probe_spin_one(long long* out, long long spin_ns) {
    unsigned long long start = globaltimer(), now = start;
    if (threadIdx.x == 0) {
        while ((long long)(now - start) < spin_ns) now = globaltimer();
    }
    __syncthreads();  // the other warps sleep here until thread 0 is done
    stamp(out, start, now);
}

extern "C" __global__ void probe_sleep(long long* out, long long spin_ns) {
    unsigned long long start = globaltimer(), now = start;
    while ((long long)(now - start) < spin_ns) {
        __nanosleep(200);
        now = globaltimer();
    }
    stamp(out, start, now);
}
