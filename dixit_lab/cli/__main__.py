"""``python -m dixit_lab.cli``: the ``dixit-lab`` command."""

from __future__ import annotations

import sys

from dixit_lab.cli.main import main

sys.exit(main())
