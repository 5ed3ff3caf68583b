"""benchmarks/motion_ablation.py: bad input exits 2 with one line; (slow) two variants run end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from benchmarks import motion_ablation


@pytest.mark.parametrize(
    "argv", [["--variants", "base,nope"], ["--size", "100"], ["--frames", "1"], ["--variants", ","]]
)
def test_bad_input_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        motion_ablation.main(argv)
    assert exc.value.code == 2
    assert "error:" in capsys.readouterr().err


@pytest.mark.slow
def test_two_variants_run_and_write_their_ratios(tmp_path: Path) -> None:
    out = tmp_path / "ablation.json"
    argv = ["--variants", "base,oracle_kp", "--steps", "2", "--clips", "2", "--frames", "2"]
    assert motion_ablation.main([*argv, "--device", "cpu", "--out", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [r["variant"] for r in rows] == ["base", "oracle_kp"]
    for r in rows:
        q = r["quality"]
        assert r["vs_source"]["akd_px"] == pytest.approx(
            q["model"]["akd_px"] / q["source"]["akd_px"], abs=1e-3
        )
