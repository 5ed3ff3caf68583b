"""The jobs' timings an environment variable may set (docs/results.md), read by the supervisor,
its store guard and `zbench jobs`, and checked before a job is queued."""

from __future__ import annotations

import math
import os

from zbench.settings import MIN_INTERVAL, SettingsError

# The jobs' timings an environment variable may set (docs/results.md): name -> (default, least).
ENV_SECONDS: dict[str, tuple[float, float]] = {
    "ZBENCH_SUPERVISOR_IDLE_S": (3.0, 0.0),  # an idle supervisor waits this long, then exits
    "ZBENCH_SAMPLE_INTERVAL_S": (0.5, MIN_INTERVAL),  # the supervisor's telemetry
    "ZBENCH_STALL_TIMEOUT_S": (3600.0, 0.0),  # a runner silent this long is stopped (0: never)
    "ZBENCH_QUIET_WARN_S": (600.0, 0.0),  # `zbench jobs` flags a runner silent this long
    "ZBENCH_STORE_GIVE_UP_S": (120.0, 0.0),  # a supervisor whose database keeps failing exits
}


def env_seconds(name: str) -> float:
    """The seconds ``$name`` (a key of :data:`ENV_SECONDS`) sets, else its default; a
    SettingsError when it is not a finite number of at least the least value."""
    default, least = ENV_SECONDS[name]
    text = os.environ.get(name, "")
    if not text.strip():
        return default
    try:
        value = float(text)
    except ValueError:
        raise SettingsError(f"${name}: {text!r} is not a number of seconds") from None
    if not (math.isfinite(value) and value >= least):
        raise SettingsError(f"${name}: {text!r} must be a finite number of seconds, >= {least:g}")
    return value


def check_env_seconds() -> None:
    """Every one of :data:`ENV_SECONDS` read, as a job's supervisor will read them: a bad one,
    found by the supervisor as it started, ended it in a traceback in its log while the job it
    was to run stayed queued for ever."""
    for name in ENV_SECONDS:
        env_seconds(name)
