"""A fix for torch's coordinate-descent tuning on a warm cache (pytorch/pytorch#172819), installed
only on a torch that still has the bug.

On a warm start inductor loads each Triton kernel from the FX-graph cache and asks the autotune
cache which config won before (``CachingAutotuner.recheck_autotune_cache``). Up to torch 2.11 that
check skips kernels with one precompiled config (``len(configs) > 1``) and, where the winner is
among the precompiled configs, drops its ``found_by_coordesc`` mark; so ``run()`` tunes every
kernel again, as on the cold start. On one H200 a warm ResNet-50 ``--preset max`` start spent 46 s
compiling instead of 7 s. torch's own fix (pytorch/pytorch#173391, in torch 2.14) is the method
below; written here, not vendored, since it is one method of a few lines and a newer torch needs
none of it. The kernels a warm start then runs are the ones the cold start's search chose.
"""

from __future__ import annotations

import inspect
from typing import Any

BUGGY_GUARD = "len(configs) > 1"  # the guard of the unfixed method, as its source reads


def _recheck_autotune_cache(self: Any, reload_kernel_from_src: Any) -> None:
    """torch's ``recheck_autotune_cache`` with the fix: a cached winner is taken for a kernel of
    one config too, and its ``found_by_coordesc`` mark is kept on the compile result chosen."""
    from torch._inductor.runtime.triton_heuristics import (
        check_autotune_cache,
        dynamo_timed,
        triton_config_to_hashable,
    )

    configs = [result.config for result in self.compile_results]
    cached, _, info = check_autotune_cache(configs, self.filename, self.inductor_meta)
    self.autotune_cache_info = info
    if len(cached) != 1:  # no autotune cache hit
        return
    best = cached[0]
    by_coordesc = getattr(best, "found_by_coordesc", False)
    wanted = triton_config_to_hashable(best)
    for result in self.compile_results:
        if triton_config_to_hashable(result.config) == wanted:
            result.config.found_by_coordesc = by_coordesc
            self.compile_results = [result]
            return
    if by_coordesc:  # found by the search after the kernel was cached: compile it now
        with dynamo_timed("CachingAutotuner.slow_precompile_config"):
            if self.fn.fn is None:
                self.fn = reload_kernel_from_src().fn
            self.compile_results = [self._precompile_config(best)]


def needs_fix(method: Any) -> bool:
    """Whether ``method`` (torch's ``recheck_autotune_cache``) is the unfixed one."""
    try:
        return BUGGY_GUARD in inspect.getsource(method)
    except (OSError, TypeError):  # no source to read: leave torch as it is
        return False


def install() -> str:
    """Patch torch where it has the bug; a line for the run's settings saying what was done."""
    try:
        from torch._inductor.runtime.triton_heuristics import CachingAutotuner
    except ImportError:
        return "not needed: no inductor"
    method = getattr(CachingAutotuner, "recheck_autotune_cache", None)
    if method is None:
        return "not needed: this torch has no such check"
    if method is not _recheck_autotune_cache:
        if not needs_fix(method):
            return "not needed: this torch keeps cached coordinate-descent results"
        CachingAutotuner.recheck_autotune_cache = _recheck_autotune_cache  # type: ignore[method-assign]
    return INSTALLED


INSTALLED = "installed (pytorch/pytorch#172819: cached coordinate-descent results reused)"
