"""People at the table: ``dixit-lab play`` (a web page per human seat) and ``dixit-lab view``
(a page to browse any results folder). See ``docs/humans.md``.

Only :mod:`dixit_lab.web.decisions` is imported without the ``web`` extra (fastapi, uvicorn):
it is what replays a human's recorded decisions.
"""
