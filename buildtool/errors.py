"""Errors a user can act on. The CLI prints them as one line and exits with status 2."""

import re

NAME_CHARS = 48  # a tensor or operator name in a message is cut to this many characters
_LONG_QUOTED = re.compile("'([^'\n]{%d,})'" % (NAME_CHARS + 1))


def short(name: str, n: int = NAME_CHARS) -> str:
    """A name from a model file cut for a one-line message (converters make names of 200+ characters)."""
    return name if len(name) <= n else name[:n - 3] + "..."


def one_line(msg: str) -> str:
    """A message as one line with every long quoted name shortened."""
    return _LONG_QUOTED.sub(lambda m: f"'{short(m.group(1))}'", " ".join(msg.split()))


class BuildtoolError(Exception):
    """Base: the message is one line naming the problem and what to do."""

    exit_code = 2


class ModelError(BuildtoolError):
    """The model file is missing, corrupt, or uses something we do not support."""


class PlanError(BuildtoolError):
    """A plan cannot be made (impossible limit, bad option)."""


class UsageError(BuildtoolError):
    """Bad command-line or API arguments."""
