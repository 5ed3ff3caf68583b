"""Progress that tells the truth: each demo phase's steps of a total (projected from a time
budget), the job's clock and the phase's time left, and a finished demo that reads done of total."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from zbench.demos import progress as progress_mod
from zbench.demos.progress import PhaseProgress
from zbench.jobs.eta import PhaseClock, clock
from zbench.tui.demo_view import DemoView


def test_phase_progress_projects_a_budget_and_ends_done_of_total(monkeypatch) -> None:
    now = [100.0]
    monkeypatch.setattr(progress_mod.time, "monotonic", lambda: now[0])
    events: list[dict] = []
    p = PhaseProgress(lambda _t, **f: events.append(f), "train", budget_s=60.0)
    now[0] = 110.0
    p(50)  # 50 steps in 10 s of a 60 s budget: about 300 steps in all
    p(51)  # too soon: not sent
    now[0] = 130.0
    p(140)
    assert [(e["step"], e["total"], e["elapsed_s"]) for e in events] == [
        (50, 300, 10.0),
        (140, 280, 30.0),
    ]
    now[0] = 130.1
    p(150)
    p.done()
    assert events[-1]["step"] == events[-1]["total"] == 150 and events[-1]["phase"] == "train"


def test_phase_progress_with_a_total_always_sends_the_last_step(monkeypatch) -> None:
    monkeypatch.setattr(progress_mod.time, "monotonic", lambda: 5.0)
    events: list[dict] = []
    p = PhaseProgress(lambda _t, **f: events.append(f), "track", total=3)
    for i in (1, 2, 3):
        p(i)
    assert [(e["step"], e["total"]) for e in events] == [(1, 3), (3, 3)]


def test_phase_progress_adds_live_figures_only_to_the_events_it_sends(monkeypatch) -> None:
    """A phase that measures a rate as it goes adds it to each event sent, and measures it only
    then (not at every step); the last event's figures are the phase's own."""
    monkeypatch.setattr(progress_mod.time, "monotonic", lambda: 5.0)
    events: list[dict] = []
    reads = [0]

    def live() -> dict:
        reads[0] += 1
        return {"fps": {"end_to_end": 10.0 * reads[0]}}

    p = PhaseProgress(lambda _t, **f: events.append(f), "track", total=4, live=live)
    for i in (1, 2, 3):
        p(i)
    p.done()
    assert reads[0] == 2 and [(e["step"], e["fps"]["end_to_end"]) for e in events] == [
        (1, 10.0),
        (3, 20.0),
    ]


def _job(step, total, phase="track", started=1000.0, ended=None):
    return SimpleNamespace(id=1, phase=phase, step=step, total=total, started=started, ended=ended)


def test_phase_clock_estimates_the_time_left_from_the_phase_rate() -> None:
    c = PhaseClock()
    assert c.left(_job(10, 110), now=1010.0) is None  # one look: no rate yet
    assert c.left(_job(30, 110), now=1020.0) == 40.0  # 20 steps in 10 s: 80 left in 40 s
    assert c.left(_job(5, 50, phase="evaluate"), now=1021.0) is None  # a new phase starts over
    assert c.elapsed(_job(30, 110), now=1065.0) == 65.0
    assert c.elapsed(_job(110, 110, ended=1100.0), now=2000.0) == 100.0  # the clock stops at end
    assert clock(3725.0) == "1:02:05" and clock(None) == "-:--:--"


def test_a_compile_phase_gets_no_estimate_its_first_step_is_not_like_the_next() -> None:
    """A cold compile's first step takes minutes and its second seconds: no "~4:50 left" after it.
    The warm-up after it is estimated again."""
    c = PhaseClock()
    assert c.left(_job(0, 2, phase="compile"), now=1000.0) is None
    assert c.left(_job(1, 2, phase="compile"), now=1290.0) is None
    assert c.left(_job(0, 40, phase="warmup"), now=1291.0) is None  # a new phase: one look
    assert c.left(_job(1, 40, phase="warmup"), now=1292.0) is None  # past its first step
    assert c.left(_job(11, 40, phase="warmup"), now=1293.0) == 2.9


def test_the_rate_is_taken_past_a_phases_first_step() -> None:
    """A GPU warm-up as recorded on an H100: step 1 of 40 after 10 s (cuDNN autotuning), then 10
    steps in 0.5 s. Counted from step 0 the estimate read 6:30, then 0:00:27, for 1.5 s left."""
    c = PhaseClock()
    assert c.left(_job(0, 40, phase="warmup"), now=1000.0) is None
    assert c.left(_job(1, 40, phase="warmup"), now=1010.0) is None
    assert c.left(_job(11, 40, phase="warmup"), now=1010.5) == pytest.approx(1.45)
    # A viewer that first looks mid-phase takes its rate from there: one look, then an estimate.
    late = PhaseClock()
    assert late.left(_job(20, 40, phase="warmup"), now=1011.0) is None
    assert late.left(_job(30, 40, phase="warmup"), now=1011.5) == pytest.approx(0.5)


def test_demo_view_reads_phase_steps_clock_estimate_and_done() -> None:
    v = DemoView()
    v.apply(
        [
            {"type": "start", "t": 100.0, "demo": "tracking", "title": "Multi-object tracking"},
            {"type": "phase", "t": 101.0, "phase": "track"},
            {
                "type": "progress",
                "t": 120.0,
                "phase": "track",
                "step": 50,
                "total": 300,
                "elapsed_s": 10.0,
            },
            {
                "type": "progress",
                "t": 130.0,
                "phase": "track",
                "step": 100,
                "total": 300,
                "elapsed_s": 20.0,
            },
        ]
    )
    # 50 frames in the 10 s since the first look: 200 left in 40 s
    assert v.progress_line() == "phase [b]track[/b] 100/300  elapsed 0:00:30  ~0:00:40 left"
    v.apply(
        [
            {"type": "phase", "t": 190.0, "phase": "evaluate"},
            {"type": "result", "t": 195.0, "summary": {}},
        ]
    )
    assert v.progress_line() == "phase [b]evaluate[/b] 300/300  elapsed 0:01:35"


def test_demo_view_takes_the_rate_past_the_phases_first_step_as_the_cli_does() -> None:
    """The live view read its time left from the phase's start, first step included: a tracker
    whose first frame autotunes for 10 s, then runs 10 frames in 0.5 s, read ~0:00:27 left for
    1.5 s. It now reads as ``zbench demo``'s bar and the job view (jobs.eta): none from one look,
    then the rate past the first step; a damaged event estimates nothing."""

    def at(step: int, elapsed: float, phase: str = "track") -> dict[str, object]:
        return {"type": "progress", "phase": phase, "step": step, "total": 40, "elapsed_s": elapsed}

    v = DemoView()
    v.apply([{"type": "phase", "t": 1.0, "phase": "track"}, at(1, 10.0)])
    assert "left" not in v.progress_line()  # one look: no rate yet
    v.apply([at(11, 10.5)])
    assert v.progress_line().endswith("~0:00:01 left")  # 29 frames at 0.05 s
    v.apply([{"type": "phase", "t": 2.0, "phase": "evaluate"}, at(5, 1.0, "evaluate")])
    assert "left" not in v.progress_line()  # a new phase starts over
    v.apply([at(10, 2.0, "evaluate"), {"type": "progress", "step": "x", "total": 40}])
    assert "left" not in v.progress_line()


@pytest.mark.parametrize(
    ("result", "line"),
    [
        (
            {"time_to_beat_review_s": 41.5, "review_best": 8, "best_score": 36},
            "[$success]done[/]: beat the review's 8 after 41.5 s",
        ),
        # It read "beat the review's 8 after - s" for a short CPU run that never scored.
        (
            {"time_to_beat_review_s": None, "review_best": 8, "best_score": 0},
            "[$warning]done[/]: best 0, not above the review's 8",
        ),
    ],
)
def test_snakes_last_line_says_whether_it_beat_the_review(result: dict, line: str) -> None:
    v = DemoView()
    v.apply(
        [
            {"type": "start", "t": 100.0, "demo": "snake", "title": "Snake"},
            {"type": "result", "t": 130.0, **result},
        ]
    )
    assert v.figures().splitlines()[-1] == line


def test_snakes_envs_read_the_runners_choice_once_made() -> None:
    # "envs default" stayed all run long, while the runner had chosen 8,192 boards.
    v = DemoView()
    v.apply([{"type": "start", "t": 1.0, "demo": "snake", "config": {"algo": "ppo", "envs": None}}])
    assert "envs default" in v.figures()
    v.apply([{"type": "phase", "t": 2.0, "phase": "warmup", "envs": 8192, "board": 12}])
    assert "envs 8,192" in v.figures()
