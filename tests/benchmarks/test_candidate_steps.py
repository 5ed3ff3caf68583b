"""The candidates of benchmarks/peak_candidates.py (benchmarks/candidate_steps.py): a padded stem
computes the same network, and the max-pool fallback reaches ATen's kernel past the compile caches."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_padded_stem_computes_the_same_network() -> None:
    torch = pytest.importorskip("torch")
    torchvision = pytest.importorskip("torchvision")
    from benchmarks import candidate_steps

    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None, num_classes=10).eval()
    x = torch.randn(2, 3, 64, 64)
    want = model(x)
    padded, x4 = candidate_steps.pad_stem(model, x, 4)
    assert x4.shape == (2, 4, 64, 64) and padded.conv1.weight.shape[1] == 4
    torch.testing.assert_close(padded(x4), want, rtol=1e-4, atol=1e-5)
    padded.train()
    padded(x4).sum().backward()
    assert padded.conv1.weight.grad[:, 3].abs().max() == 0  # the zero channel never learns
    assert padded.conv1.weight.grad[:, :3].abs().max() > 0


_MAXPOOL_CHECK = """
import torch
from torch._inductor.utils import run_and_get_code
from benchmarks import candidate_steps

candidate_steps.SETUPS["maxpool_fallback"]()
import torch._functorch.config as fc, torch._inductor.config as ic
assert not ic.fx_graph_cache and not fc.enable_autograd_cache

def f(x):
    torch.nn.functional.max_pool2d(x, 3, 2, 1).sum().backward()
    return x.grad

x = torch.randn(2, 4, 16, 16, requires_grad=True)
want = f(x).clone()
x.grad = None
got, codes = run_and_get_code(torch.compile(f), x)
torch.testing.assert_close(got, want)
print("ATEN" if any("aten.max_pool2d_with_indices_backward" in c for c in codes) else "FUSED")
"""


def _fresh_python(code: str, **env: str) -> str:
    """``code``'s output in a fresh interpreter (it changes torch's process-wide tables)."""
    environ = {**os.environ, "PYTHONPATH": str(REPO), **env}
    if "TORCHINDUCTOR_CACHE_DIR" not in env:  # the test's own cache, or the data folder's
        environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env=environ,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.slow  # compiles a step in a fresh interpreter (~20 s on 2 cores)
@pytest.mark.torch
def test_maxpool_fallback_candidate_compiles_the_backward_to_aten(tmp_path: Path) -> None:
    """The mpfb candidates: their max-pool backward is ATen's kernel, not a cached fused gather."""
    pytest.importorskip("torch")
    out = _fresh_python(_MAXPOOL_CHECK, TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "cache"))
    assert out.split()[-1] == "ATEN"


_ZBENCH_MPFB_CHECK = """
import torch._functorch.config as fc, torch._inductor.config as ic
from benchmarks import candidate_steps
from zbench.runners.torch import adapter, tuning

class Fake:  # the runner as far as the caches go: prepare turns them on, build makes the step
    def prepare(self, cfg):
        tuning.compile_cache()
    def build(self, cfg):
        return lambda: None

adapter.TorchAdapter = Fake
for name in ("zbench", "zbench-mpfb"):
    candidate_steps.zbench_step(candidate_steps.BY_NAME[name])
    print(name, ic.fx_graph_cache, fc.enable_autograd_cache)
"""


@pytest.mark.torch
def test_zbench_mpfb_builds_its_step_with_the_compile_caches_off(tmp_path: Path) -> None:
    """The runner's prepare turns the caches on: the fallback's switch comes after it, or a warm
    data folder would hand the zbench-mpfb side zbench's own fused kernel."""
    pytest.importorskip("torch")
    out = _fresh_python(_ZBENCH_MPFB_CHECK, ZBENCH_HOME=str(tmp_path))
    assert out.split("\n")[:2] == ["zbench True True", "zbench-mpfb False False"]
