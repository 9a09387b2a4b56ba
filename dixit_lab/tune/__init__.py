"""``dixit-lab tune``: the search for the best values of one parameter (``search``), its
candidates and how they are compared (``candidates``), its outputs (``report``). Above the
runner, which plays its games."""
