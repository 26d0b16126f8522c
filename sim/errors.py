"""The exceptions a user meets; front ends print their message on one line and exit with
`exit_status` (the CLI's convention, docs/SETUP.md "Command-line conventions")."""


class UserError(ValueError):
    """Input the user gave (an option, a value, a file) that WarpScope cannot work with: a usage
    error, exit status 2."""

    exit_status = 2


class RunFailure(UserError):
    """The request was valid but this machine could not carry it out (no GPU, a package not
    installed, out of GPU memory, nothing left to check): a runtime failure, exit status 1."""

    exit_status = 1
