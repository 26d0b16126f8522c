"""The input boundary: `files` (every read of a user's file, bounded and checked, and every write,
whole), `args` (argparse types: every value a user types is checked before arithmetic sees it),
`units` (counts like 2^20 and sizes like 48KiB, parsed and printed), `errors` (UserError, the one
exception a user can cause, and `printable`)."""
