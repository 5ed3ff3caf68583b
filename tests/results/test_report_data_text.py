"""Stored text is data, never Markdown: a GPU name or tag with Markdown syntax neither breaks
`zbench report` nor changes the document (issue 28, case 10)."""

from __future__ import annotations

from pathlib import Path

from tests.rows import job_row, run_config, run_row
from zbench.results.api import Filters
from zbench.results.report import write_report
from zbench.store import Store

T0 = 1_790_000_000.0
NASTY = "![x](../../etc/passwd) [link](http://e) <b>bold</b> *star* `tick` &amp; #1 |pipe|\nnext"


def _add(db: Path, gpu_name: str, tag: str) -> None:
    store = Store(db)
    cfg = run_config(device="cuda", preset="review")
    [job] = store.add_jobs([job_row(config=cfg, state="done", created=T0, tag=tag)])
    store.add_run(
        run_row(
            job_id=job,
            created=T0,
            gpu_name=gpu_name,
            samples_per_s=100.0,
            config=cfg,
            env={"cpu_model": NASTY, "torch": "2.11"},
            result={"samples_per_s": 100.0},
        )
    )


def test_md_text_escapes_inline_syntax_and_keeps_one_line() -> None:
    from zbench.results.export import md_escape, md_text

    out = md_text(NASTY)
    assert "\n" not in out
    for raw in ("![", "[link]", " <b>", " *star*", " `tick`", " &amp;"):
        assert raw not in out
    assert "\\&amp;" in out and "\\|pipe\\|" in out
    assert md_escape("a|b\nc") == "a\\|b<br>c"


def test_a_gpu_name_with_an_image_does_not_stop_the_report(tmp_path: Path) -> None:
    db = tmp_path / "z.db"
    _add(db, NASTY, tag=NASTY)
    report = write_report(tmp_path / "out", Filters(), db=db)
    html = report.html.read_text()
    assert "etc/passwd" in html  # shown as text ...
    assert 'src="../../etc/passwd' not in html and "<b>bold" not in html  # ... never as markup
    assert 'href="http://e"' not in html
    md = report.markdown.read_text()
    assert "On \\!\\[x\\](../../etc/passwd)" in md  # the prose line, escaped


def test_a_short_window_note_counts_its_samples_in_words() -> None:
    """The note read "only 1 samples"."""
    from zbench.results.api import ResultRow
    from zbench.results.report_md import notes_for

    def row(n: int) -> ResultRow:
        measure = {"n_samples": n, "gpu_util_mean": 90.0}
        return ResultRow(
            "resnet50", "torch", "train", 1, "H200", "fp32", 128, 1.0, phases={"measure": measure}
        )

    assert "only 1 sample in the measured window: the means are rough" in notes_for(row(1), True)
    assert "only 2 samples in the measured window: the means are rough" in notes_for(row(2), True)
