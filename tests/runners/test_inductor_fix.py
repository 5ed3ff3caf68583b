"""The warm-cache fix for coordinate-descent tuning: installed only on a torch with the bug, and
what the fixed check does with a cached winner."""

from __future__ import annotations

import types
from typing import Any

import pytest

from zbench.runners.torch import inductor_fix

torch = pytest.importorskip("torch")
heuristics = pytest.importorskip("torch._inductor.runtime.triton_heuristics")


def _buggy(self: Any, reload_kernel_from_src: Any) -> None:
    configs = [r.config for r in self.compile_results]
    if len(configs) > 1:  # torch 2.11's guard
        pass


def _fixed(self: Any, reload_kernel_from_src: Any) -> None:
    if len(self.compile_results) >= 1:
        pass


def test_only_the_unfixed_method_needs_the_fix() -> None:
    assert inductor_fix.needs_fix(_buggy) is True
    assert inductor_fix.needs_fix(_fixed) is False
    assert inductor_fix.needs_fix(len) is False  # no Python source: left alone


def test_install_patches_a_buggy_torch_once(monkeypatch: pytest.MonkeyPatch) -> None:
    cls = heuristics.CachingAutotuner
    monkeypatch.setattr(cls, "recheck_autotune_cache", _buggy)
    assert inductor_fix.install() == inductor_fix.INSTALLED
    assert cls.recheck_autotune_cache is inductor_fix._recheck_autotune_cache
    assert inductor_fix.install() == inductor_fix.INSTALLED  # the same words every time
    monkeypatch.setattr(cls, "recheck_autotune_cache", _fixed)
    assert inductor_fix.install().startswith("not needed")
    assert cls.recheck_autotune_cache is _fixed


def _tuner(configs: list[Any]) -> Any:
    results = [types.SimpleNamespace(config=c) for c in configs]
    return types.SimpleNamespace(
        compile_results=results,
        filename="k.py",
        inductor_meta={"coordinate_descent_tuning": True},
        fn=types.SimpleNamespace(fn=object()),
        _precompile_config=lambda cfg: types.SimpleNamespace(config=cfg, compiled=True),
    )


def _config(block: int) -> Any:
    triton = pytest.importorskip("triton")
    return triton.Config({"XBLOCK": block}, num_warps=4, num_stages=1)


def test_a_kernel_of_one_config_keeps_its_coordinate_descent_mark(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The case torch 2.11 skipped: one precompiled config, and the cache says coordinate descent
    chose it. The fixed check marks it, so ``run()`` does not tune it again."""
    best = _config(128)
    best.found_by_coordesc = True
    monkeypatch.setattr(heuristics, "check_autotune_cache", lambda *a: ([best], None, {"hit": 1}))
    tuner = _tuner([_config(128)])
    inductor_fix._recheck_autotune_cache(tuner, lambda: None)
    assert len(tuner.compile_results) == 1
    assert tuner.compile_results[0].config.found_by_coordesc is True
    assert tuner.autotune_cache_info == {"hit": 1}


def test_a_winner_found_after_caching_is_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    best = _config(512)
    best.found_by_coordesc = True
    monkeypatch.setattr(heuristics, "check_autotune_cache", lambda *a: ([best], None, {}))
    tuner = _tuner([_config(128), _config(256)])
    inductor_fix._recheck_autotune_cache(tuner, lambda: None)
    (only,) = tuner.compile_results
    assert only.compiled is True and only.config is best


def test_no_cache_hit_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heuristics, "check_autotune_cache", lambda *a: ([], None, {}))
    tuner = _tuner([_config(128), _config(256)])
    before = list(tuner.compile_results)
    inductor_fix._recheck_autotune_cache(tuner, lambda: None)
    assert tuner.compile_results == before
