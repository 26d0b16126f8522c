"""What a kernel is, declared: `spec` (KernelSpec and THE grid rule), `registry` (the built-ins),
`declarations` (a user's file in a child process of its own), `kernel_file` (loading a user's
file), `user_code` (its answers, checked field by field), `matmul_problem` (a matmul's M x N x K)."""
