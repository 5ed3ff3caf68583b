"""Where zbench keeps its data: ``$ZBENCH_HOME`` or the user's data directory."""

from __future__ import annotations

import os
from pathlib import Path

ENV_HOME = "ZBENCH_HOME"
ENV_DB = "ZBENCH_DB"


def home() -> Path:
    """The data directory, created on first use."""
    env = os.environ.get(ENV_HOME)
    if env:
        path = Path(env).expanduser()
    else:
        from platformdirs import user_data_dir

        path = Path(user_data_dir("zbench", appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def db_path(override: str | os.PathLike[str] | None = None) -> Path:
    """The results database: ``override``, else ``$ZBENCH_DB``, else ``home()/zbench.db``."""
    if override:
        return Path(override).expanduser()
    env = os.environ.get(ENV_DB)
    if env:
        return Path(env).expanduser()
    return home() / "zbench.db"


def jobs_dir() -> Path:
    """Per-job folders (events, logs)."""
    path = home() / "jobs"
    path.mkdir(parents=True, exist_ok=True)
    return path
