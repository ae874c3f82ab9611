"""`python -m buildtool.cli`: the `buildtool` command."""

import sys

from . import main

sys.exit(main())
