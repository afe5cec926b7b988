"""``python -m rlrun``: the same as the ``rlrun`` command."""

import sys

from rlrun.cli import main

sys.exit(main())
