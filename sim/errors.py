"""The one exception type a user can cause; front ends print its message on one line."""


class UserError(ValueError):
    """Input the user gave (or a device they asked for) that WarpScope cannot work with."""
