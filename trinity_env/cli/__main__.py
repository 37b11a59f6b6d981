"""``python -m trinity_env.cli``: the ``trinity`` command."""

import sys

from trinity_env.cli import main

sys.exit(main())
