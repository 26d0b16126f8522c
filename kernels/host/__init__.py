"""User code and GPU libraries run here, never in the window's or the CLI's process: `process`
(the kernel host: HostProcess, its frames and jobs), `in_host` (run one job in a fresh host)."""
