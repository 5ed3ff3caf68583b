"""What a demo job's live view shows, folded from its events (pure: tests feed it events).

One fold for every demo: Snake frames carry a ``board``, motion frames ``panels`` (source, driving,
result), tracking frames an ``image`` with ``boxes``; progress events make the curve (scores, or
the training loss); the result adds the figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from zbench.contract.demos import figure, has_figure, known
from zbench.contract.events import Error, Frame, PhaseEvent, Progress, typed
from zbench.jobs.eta import PhaseClock, clock
from zbench.jobs.states import JobState

from .format import escape


@dataclass
class DemoView:
    """A demo's live view folded from its events: phase, board or frame, curve, figures."""

    title: str = "demo"
    demo: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    phase: str = "setup"
    board: dict[str, Any] | None = None
    frame: dict[str, Any] | None = None  # the latest pixel frame (motion, tracking)
    curve: list[dict[str, Any]] = field(default_factory=list)
    latest: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    error: Error | None = None
    env_rate: float | None = None
    envs: int | None = None  # the boards Snake plays at once, once its runner has chosen them
    frames: int = 0
    fps: float | None = None  # frames the view received per second of the demo's clock
    _first_t: float | None = None
    progress: dict[str, Any] = field(default_factory=dict)  # the latest progress event
    started_t: float | None = None  # the start event's clock
    last_t: float | None = None  # the latest event's clock
    # The job's state and reason once it ended (the jobs layer's): a runner killed by SIGKILL
    # writes no error event, so its events alone never say it ended.
    ended_as: str | None = None
    ended_why: str | None = None
    # The phase's time left as of its latest progress event, at the rate past the phase's first
    # step, as the CLI's bar and the job view read it (jobs.eta).
    left: float | None = None
    _clock: PhaseClock = field(default_factory=PhaseClock, repr=False)

    def apply(self, events: list[dict[str, Any]]) -> None:
        """Fold parsed events in, each read typed (``contract.events.typed``)."""
        for ev in filter(None, map(typed, events)):
            if ev.t:
                self.last_t = ev.t
            if isinstance(ev, PhaseEvent):
                self.phase = str(ev.phase)
                if number(ev.get("env_steps_per_s")) is not None:
                    self.env_rate = float(ev.get("env_steps_per_s"))
                if number(ev.get("envs")) is not None:
                    self.envs = int(ev.get("envs"))
            elif isinstance(ev, Frame):
                self._frame(ev.as_record())
            elif isinstance(ev, Progress):
                self.progress = ev.as_record()
                self._look(ev)
                point = {
                    k: number(ev.get(k))
                    for k in ("t_s", "env_steps", "mean_score", "best_score", "loss")
                }  # a figure that is not a number is not drawn
                point.update(steps_per_s=number(ev.samples_per_s), step=number(ev.step))
                phase = ev.get("phase")  # the tracker trains two models, each from step 1
                point["phase"] = phase if isinstance(phase, str) else None
                self.curve.append(point)
                self.latest.update(point, games=ev.get("games"))
            elif isinstance(ev, Error):
                self.error = ev
            elif ev.type == "start":
                self.started_t = self.last_t
                self.title = str(ev.get("title") or ev.get("demo") or "demo")
                self.demo = str(ev.get("demo") or "")
                config = ev.get("config")
                self.config = dict(config) if isinstance(config, dict) else {}
            elif ev.type == "result":
                self.result = ev.as_record()

    def _look(self, ev: Progress) -> None:
        step, total, spent = number(ev.step), number(ev.get("total")), number(ev.get("elapsed_s"))
        if step is None or total is None or spent is None:
            self.left = None  # a damaged event: no estimate from it
            return
        phase = str(ev.get("phase", self.phase))
        self.left = self._clock.look(0, phase, int(step), int(total), float(spent))

    def _frame(self, ev: dict[str, Any]) -> None:
        if isinstance(ev.get("board"), dict):
            self.board = ev["board"]
            self.latest.update({k: ev.get(k) for k in ("t_s", "mean_score", "best_score")})
            return
        self.frame = ev
        self.frames += 1
        t = float(ev.get("t") or 0.0)
        if self._first_t is None:
            self._first_t = t
        elif t > self._first_t and self.frames >= 3:
            self.fps = (self.frames - 1) / (t - self._first_t)
        if isinstance(ev.get("fps"), int | float):
            self.fps = float(ev["fps"])

    def figures(self) -> str:
        if self.board is not None or self.demo in ("", "snake"):
            return self._snake_figures()
        return self._pixel_figures()

    def progress_line(self) -> str:
        """Phase, steps done of the total, time since the start and the phase's time left (none once
        the demo has ended: a result, an error, after which a runner writes nothing more, or the
        job's final state)."""
        p = self.progress
        step, total = p.get("step"), p.get("total")
        done = self.result is not None
        ended = done or self.error is not None or self.ended_as is not None
        if done and isinstance(total, int | float):
            step = total  # a finished demo reads done of total
        steps = f"{num(step)}/{num(total)}" if total else num(step) if step is not None else ""
        since = self.last_t - self.started_t if self.last_t and self.started_t else None
        line = f"phase [b]{escape(self.phase)}[/b] {steps}  elapsed {clock(since)}"
        if not ended and self.left is not None and p.get("phase", self.phase) == self.phase:
            line += f"  ~{clock(self.left)} left"
        return line

    def _snake_figures(self) -> str:
        c, f = self.config, self.latest
        envs = self.envs or c.get("envs")  # the runner's choice, once made
        faithful = " faithful" if c.get("faithful") else ""
        lines = [
            f"[b]{escape(self.title)}[/b]",
            f"{c.get('algo', '?')}{faithful}  board {c.get('board', '?')}  "
            f"envs {num(envs) if envs else 'default'}  {c.get('device', '')}",
            self.progress_line(),
            f"score now {num((self.board or {}).get('score'))}  "
            f"mean {num(f.get('mean_score'))}  best [b]{num(f.get('best_score'))}[/b]",
            f"env steps {num(f.get('env_steps'))}  steps/s {num(f.get('steps_per_s'))}",
            f"games {num(f.get('games'))}  env alone {num(self.env_rate)} steps/s",
        ]
        if self.result:
            lines.append(self._verdict(self.result))
        return "\n".join(lines + self._error())

    @staticmethod
    def _verdict(result: dict[str, Any]) -> str:
        """Snake's last line: when it beat the review's best score, or that it did not (it read
        "beat the review's 8 after - s" for a run that never scored above it)."""
        review, beat = num(result.get("review_best")), result.get("time_to_beat_review_s")
        if beat is None:
            best = num(result.get("best_score"))
            return f"[$warning]done[/]: best {best}, not above the review's {review}"
        return f"[$success]done[/]: beat the review's {review} after {num(beat)} s"

    def _pixel_figures(self) -> str:
        c, fr = self.config, self.frame or {}
        lines = [
            f"[b]{escape(self.title)}[/b]",
            "  ".join(
                k if c[k] is True else f"{k} {escape(str(c[k]))}"
                for k in ("mode", "size", "drive", "tracker", "device", "smoke")
                if c.get(k) not in (None, False)
            ),
            self.progress_line(),
            *self._rate_lines(),
        ]
        if isinstance(fr.get("boxes"), list):
            ids = [
                str(int(b[4]))
                for b in fr["boxes"]
                if isinstance(b, list)
                and len(b) >= 5
                and isinstance(b[4], int | float)
                and math.isfinite(b[4])
            ]
            lines.append(f"tracks {len(ids)}: {escape(' '.join(ids[:20]))}")
        summary = (self.result or {}).get("summary")
        for label, value in (summary if isinstance(summary, dict) else {}).items():
            lines.append(f"{escape(str(label))}: [b]{num(value, 4)}[/b]")
        return "\n".join(lines + self._error())

    def _rate_lines(self) -> list[str]:
        """The rates the latest progress event measured, as the demo table's ``live_rates`` names
        them (tracking: frames tracked per second, then each stage's alone, which overlap; motion:
        frames generated per second), not the preview's; where it measured none (training), the
        loss and the preview's frame rate."""
        p = self.progress
        entry = known(self.demo)
        lines = entry.live_rates if entry is not None else ()
        if not lines or not has_figure(p, lines[0][0][1]):
            return [f"loss {num(self.latest.get('loss'), 4)}  preview frames/s {num(self.fps)}"]
        (label, path), *_ = lines[0]
        warmup = "  (warm-up, timed apart)" if p.get("warmup") is True else ""
        out = [f"{escape(label)} [b]{num(number(figure(p, path)))}[/b] frames/s{warmup}"]
        for rates in lines[1:]:
            found = [
                f"{escape(label)} {num(number(figure(p, path)))}"
                for label, path in rates
                if number(figure(p, path)) is not None
            ]
            if found:
                out.append(f"{'  '.join(found)} frames/s")
        return out

    def _error(self) -> list[str]:
        if self.error:
            return [f"[$error]{escape(self.error.kind)}: {escape(self.error.message)}[/]"]
        if self.ended_as and self.ended_as != JobState.DONE and self.result is None:
            why = f": {self.ended_why}" if self.ended_why else ""  # as the job list says it
            return [f"[$error]{escape(self.ended_as + why)}[/]"]
        return []


def number(value: Any) -> float | int | None:
    """A field's value where it is a finite number, else None (a damaged or missing field)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return value
    return None


def num(value: Any, digits: int | None = None) -> str:
    """A figure for the view: thousands grouped, one decimal; ``digits`` significant ones below 1."""
    if value is None:
        return "-"
    if isinstance(value, float):
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.{digits}g}" if digits and abs(value) < 1 else f"{value:.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return escape(str(value))
