"""`python -m tilewise.cli`: the `tilewise` command."""

import sys

from .main import main

sys.exit(main())
