"""``python -m ncuwrap`` runs the CLI."""

import sys

from ncuwrap.cli import main

sys.exit(main())
