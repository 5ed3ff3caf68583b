"""A demo's own options dataclass from the options `run` was given: a name it lacks is an error."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import TYPE_CHECKING, Any, TypeVar

from zbench.textfit import plural

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")


def build(cls: type[T], options: Mapping[str, Any], demo: str) -> T:
    """``cls(**options)``; a ValueError naming every option ``cls`` has no field for."""
    known = {f.name for f in fields(cls)}
    bad = sorted(set(options) - known)
    if bad:
        raise ValueError(f"unknown {demo} {plural(len(bad), 'option')}: {', '.join(bad)}")
    return cls(**dict(options))
