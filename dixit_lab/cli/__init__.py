"""The ``dixit-lab`` command line: one module per family of commands (``experiments``: run,
replay, report, show, tune; ``simulate``; ``listener``: fit-listener; ``data``: embed,
export-bench; ``agents``), assembled by :mod:`dixit_lab.cli.main` (``main``, the entry
point). The commands of a feature (``play``, ``view``) live with the feature
(:mod:`dixit_lab.web.commands`)."""
