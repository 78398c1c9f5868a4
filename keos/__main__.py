"""``python -m keos``: the command line, as the ``keos`` script runs it."""

import sys

from keos.checker.cli.main import main

sys.exit(main())
