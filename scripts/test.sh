#!/usr/bin/env bash
# Installs zbench with every extra and the dev tools into .venv, then runs the full gate:
# ruff (lint + format), mypy on the core packages, and the pytest suite. Extra args go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[torch,tf-cpu,dev]'
echo "== ruff check";         .venv/bin/ruff check .
echo "== ruff format --check"; .venv/bin/ruff format --check .
echo "== mypy";               .venv/bin/mypy
echo "== pytest";             .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
