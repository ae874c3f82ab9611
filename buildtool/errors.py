"""Errors a user can act on. The CLI prints them as one line and exits with status 2."""


class BuildtoolError(Exception):
    """Base: the message is one line naming the problem and what to do."""

    exit_code = 2


class ModelError(BuildtoolError):
    """The model file is missing, corrupt, or uses something we do not support."""


class PlanError(BuildtoolError):
    """A plan cannot be made (impossible limit, bad option)."""


class UsageError(BuildtoolError):
    """Bad command-line or API arguments."""
