"""`python -m collector` is the `badge-collector` command."""

import sys

from collector.cli import main

sys.exit(main())
