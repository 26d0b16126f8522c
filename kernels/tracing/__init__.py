"""Which SM ran each block, and when: `trace` (the trace kernels and `trace --kernel`),
`instrument` (a user's Triton source recompiled with %smid/%globaltimer stamps), `trace_file`
(`trace --kernel-file`)."""
