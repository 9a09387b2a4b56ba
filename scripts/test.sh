#!/usr/bin/env bash
# The tests from a fresh clone, in one command (rerunning it is quick: nothing is reinstalled).
#
#   scripts/test.sh          the default suite: a virtual environment in .venv, the package with
#                            its test tools (pip install -e ".[dev]"), no torch; the tests that
#                            need a model stack skip, each saying why
#   scripts/test.sh --full   the full suite (what CI runs): first a CPU build of torch and
#                            torchvision (the pair .ci/constraints.txt pins), then every extra
#                            (pip install -e ".[all]"), then all tests, the package's build and
#                            installs into fresh environments (tests/test_packaging.py) too
#
# With no extra arguments the suite runs on several processes (pytest-xdist, from [dev]: one a
# core, at most 4; TEST_WORKERS sets the number, 1 runs everything in one process), then the
# timing-sensitive tests (marker `serial`, tests/conftest.py) alone. Extra arguments go to one
# plain pytest run (scripts/test.sh --full -x tests/test_cli.py).
# Where the CPU torch comes from: TORCH_INDEX_URL (default https://download.pytorch.org/whl/cpu),
# or TORCH_CONSTRAINTS, a pip constraints file naming the build to install from pip's own
# indexes (CI sets neither: it runs the command as written). PYTHON picks the interpreter (default python3, 3.11 or newer); VENV the
# environment's folder (default .venv).
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
if [[ "${1:-}" == "--full" ]]; then full=1; shift; fi
venv="${VENV:-.venv}"
export PIP_DISABLE_PIP_VERSION_CHECK=1
[[ -x "$venv/bin/python" ]] || "${PYTHON:-python3}" -m venv "$venv"
pip=("$venv/bin/python" -m pip install -q)
if (( full )); then
    # torch before the extras, so that pip never picks the (large) CUDA build by itself
    if [[ -n "${TORCH_CONSTRAINTS:-}" ]]; then
        "${pip[@]}" -c "$TORCH_CONSTRAINTS" torch torchvision
        "${pip[@]}" -c "$TORCH_CONSTRAINTS" -e ".[all]"
    else
        # the pair that imports together (a bare torch torchvision can pick two that do not),
        # a CPU build from PyTorch's index; where that index cannot serve it (no network, a
        # machine whose pip configuration holds the builds), from pip's own indexes
        index="${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}"
        if ! "${pip[@]}" --retries 0 --timeout 20 -c .ci/constraints.txt torch torchvision \
                --index-url "$index" 2>/dev/null; then
            echo "scripts/test.sh: torch could not be installed from $index; installing the" \
                 "pinned pair from pip's configured indexes instead" >&2
            "${pip[@]}" -c .ci/constraints.txt torch torchvision
        fi
        "${pip[@]}" -e ".[all]"
    fi
else
    "${pip[@]}" -e ".[dev]"
fi
# the full suite also builds the package and installs it into fresh environments
# (tests/test_packaging.py); the default suite skips that, saying so
(( full )) && export DIXIT_LAB_INSTALL_TESTS=1
py="$venv/bin/python"
if (( $# )); then exec "$py" -m pytest -q "$@"; fi
cores=$(nproc 2>/dev/null || echo 1)
workers="${TEST_WORKERS:-$(( cores < 4 ? cores : 4 ))}"
if (( workers < 2 )); then exec "$py" -m pytest -q; fi
status=0
"$py" -m pytest -q -n "$workers" -m "not serial" || status=$?
echo "the timing-sensitive tests, alone (marker serial):"
"$py" -m pytest -q -m serial || { code=$?; (( status )) || status=$code; }
exit "$status"
