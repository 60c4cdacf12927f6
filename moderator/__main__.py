"""``python -m moderator`` runs the ``moderator`` command."""

import sys

from .cli import main

sys.exit(main())
