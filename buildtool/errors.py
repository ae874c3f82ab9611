"""Errors a user can act on. The CLI prints them as one line and exits with status 2."""

import os
import sys

NAME_CHARS = 48  # a tensor or operator name in a message is cut to this many characters
LIST_ITEMS = 8  # a list of values from a model file (a perm, a shape, constants) keeps this many in a message


def short(name: str, n: int = NAME_CHARS) -> str:
    """A name from a model file cut for a one-line message (converters make names of 200+ characters)."""
    return name if len(name) <= n else name[:n - 3] + "..."


def _short_list(m) -> str:
    items = m.group(1).split(", ")
    if len(items) <= LIST_ITEMS:
        return m.group(0)
    return f"[{', '.join(items[:LIST_ITEMS - 2])}, ... ({len(items)} values)]"


def one_line(msg: str) -> str:
    """A message as one line with every long quoted name and every long list of values shortened."""
    import re  # here, not at import: a warm `buildtool plan` prints what the daemon made (re is ~10 ms)

    # a quoted name opens after a non-word character and closes before one (not the text between two names)
    msg = re.sub("(?<!\\w)'([^'\n]{%d,})'(?!\\w)" % (NAME_CHARS + 1), lambda m: f"'{short(m.group(1))}'",
                 " ".join(msg.split()))
    return re.sub(r"\[([^\[\]]*)\]", _short_list, msg)


class BuildtoolError(Exception):
    """Base: the message is one line naming the problem and what to do."""

    exit_code = 2


class ModelError(BuildtoolError):
    """The model file is missing, corrupt, or uses something we do not support."""


class PlanError(BuildtoolError):
    """A plan cannot be made (impossible limit, bad option)."""


class UsageError(BuildtoolError):
    """Bad command-line or API arguments."""


REPORT = "please report it with the command and the model (BUILDTOOL_DEBUG=1 shows the traceback)"


class InternalError(BuildtoolError):
    """A broken invariant: a bug of buildtool, not of the user's input. Its own exit status (3) and a
    'please report' line; `internal(e)` wraps any unexpected exception that reached a boundary."""

    exit_code = 3

    def __init__(self, msg: str):
        super().__init__(f"internal error: {msg}; {REPORT}")


def internal(e: BaseException) -> InternalError:
    """An unexpected exception (a bare ValueError, KeyError, ...) as one InternalError line."""
    if isinstance(e, InternalError):
        return e
    return InternalError(one_line(f"{type(e).__name__}: {e}")[:300])


def one_line_status(body, *args) -> int:
    """Run body(*args) as a small command's whole work (the CMake helper, Bazel's link wrapper): 0 when
    it returns, else one `buildtool: error:` line on stderr and the error's exit status; an unexpected
    exception is an internal error (status 3), with its traceback under BUILDTOOL_DEBUG=1."""
    try:
        body(*args)
        return 0
    except BuildtoolError as e:
        print(f"buildtool: error: {e}", file=sys.stderr)
        return e.exit_code
    except Exception as e:
        if os.environ.get("BUILDTOOL_DEBUG"):
            raise
        print(f"buildtool: error: {internal(e)}", file=sys.stderr)
        return InternalError.exit_code


def did_you_mean(word: str, choices) -> str:
    """'; did you mean X?' for the choice closest to a misspelt word (difflib), '' when none is close."""
    import difflib  # (only an error line needs it: kept out of every command's start-up)

    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""
