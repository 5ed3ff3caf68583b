"""The demo table: name -> entry module, options schema (the one set of defaults), title, live view
and figures.

Standard library only, like the rest of the contract: the CLI, the TUI launch dialog, the job
launcher and the results read it without importing ``zbench.demos`` or a framework. A demo's entry
module (named here, in ``zbench.demos``) exposes ``run(options, emit) -> figures`` and receives the
options parsed and validated by ``contract.demo_options``; ``zbench.demos.adapter`` runs it under
the one harness.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from zbench.contract.config import RUN_OPTIONS
from zbench.contract.options import Opt, UsageError, one_of, typed_flags


@dataclass(frozen=True)
class Series:
    """One line chart of the result: points from a figure holding a list of dicts (``source``),
    or from the run's ``progress`` events (``source="progress"``)."""

    name: str
    x: str
    y: str
    unit: str
    source: str = "progress"


@dataclass(frozen=True)
class Demo:
    """One row of the demo table: entry module, option schema, live view, and result columns."""

    name: str
    title: str
    module: str  # exposes run(options, emit) -> figures
    options: tuple[Opt, ...]
    view: str  # the TUI's live view: snake (board), pixels (RGB panels), boxes (image + boxes)
    mode: Callable[[Mapping[str, Any]], str]  # the job row's mode
    summary: tuple[tuple[str, str], ...] = ()  # (label, figure path "a.b.c")
    series: tuple[Series, ...] = ()
    table: tuple[tuple[str, str], ...] = ()  # the demo table's columns of this demo
    # Why some of the table's figures are missing from a run, as (the columns it explains, the
    # result's path of a text saying why); printed under the table where a run has the text, so
    # a column of n/a never stands without its reason.
    notes: tuple[tuple[str, str], ...] = ()
    # The result's seconds the demo tables' Min column shows, where they are the training's (a
    # tracking run's ``wall_s`` is its tracking's, not its training's); None: the minutes asked.
    minutes_from: str | None = None
    frame_hz: float = 4.0  # at most this many frame events a second
    # The rates a phase's progress events carry while it runs (paths in the event, each named as
    # the result's figure it ends on), as the live view's lines of (label, path); the first is
    # the headline. The view shows them, not the loss, while the latest event has the headline.
    live_rates: tuple[tuple[tuple[str, str], ...], ...] = ()
    # What ``--smoke`` (the CPU test path) does to the options above: each named option is capped
    # at the value here, and one left unset (None) takes it. ``resolve`` applies it for the job's
    # config and for the demo's own options alike, so the stored config, the start event and the
    # live view show what ran. Knobs that are not options (a batch of training pairs) stay the
    # demo's.
    smoke: tuple[tuple[str, int], ...] = ()
    # What ``rate`` counts, as a job's progress line names it (a benchmark's: samples/s).
    rate_unit: str = "samples/s"
    extra: dict[str, Any] = field(default_factory=dict)

    def defaults(self) -> dict[str, Any]:
        return {o.name: o.default for o in self.options}

    def flags(self) -> list[str]:
        """Every flag the demo's options are typed as (``Opt.typed``)."""
        return typed_flags(self.options)

    @property
    def rate(self) -> str:
        """The figure a run's speed is, live and at the end (the jobs table's speed column): the
        headline of ``live_rates``, which the progress events carry and which ends on the result's
        own figure; else the result's ``samples_per_s``."""
        return self.live_rates[0][0][1] if self.live_rates else "samples_per_s"

    def resolve(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """``options`` as a run uses them: with ``smoke`` on, each of ``smoke``'s caps applied."""
        out = dict(options)
        if out.get("smoke"):
            for name, cap in self.smoke:
                out[name] = cap if out.get(name) is None else min(out[name], cap)
        return out

    def modes(self) -> frozenset[str]:
        """Every mode a run of this demo can have: ``mode`` over each combination of its options
        that take one of a few values (choices, switches, on/off), the rest at their defaults."""
        few = [o for o in self.options if o.choices or o.kind == "bool"]
        values = [tuple(o.choices) if o.choices else (False, True) for o in few]
        return frozenset(
            self.mode({**self.defaults(), **{o.name: v for o, v in zip(few, combo, strict=True)}})
            for combo in itertools.product(*values)
        )

    def in_mode(self) -> frozenset[str]:
        """The options the mode spells (snake's ``algo`` and ``faithful``, tracking's
        ``tracker``): each of their values, the rest at their defaults, gives a mode of its own,
        so a table's Mode column already tells runs that differ in one apart."""
        few = [o for o in self.options if o.choices or o.kind == "bool"]
        spelled = set()
        for o in few:
            values = tuple(o.choices) if o.choices else (False, True)
            if len({self.mode({**self.defaults(), o.name: v}) for v in values}) == len(values):
                spelled.add(o.name)
        return frozenset(spelled)


# The lengths of the demos' own inputs when `--frames` is not given (a file is used whole).
MOTION_SCRIPT_FRAMES = 150  # the scripted performance
SNAKE_REVIEW_BEST = 8  # the review's best Snake score after 4 hours of training (snake_dqn, 12x12)
TRACKING_GENERATED_FRAMES = 300  # a generated sequence
# Frames per detector and embedder call when tracking a file, a folder or a generated sequence (a
# webcam is tracked frame by frame, for latency).
TRACKING_BATCH = 8

# The runner's rows with a demo's words: the choices, default and bounds are the runner's.
_RUNNER = {o.name: o for o in RUN_OPTIONS}
_DEVICE = replace(_RUNNER["device"], help="Where the demo runs: an NVIDIA GPU, or the CPU.")
_SEED = replace(_RUNNER["seed"], help="Random seed of the models and the generated data.")


def _minutes(default: float) -> Opt:
    """A demo's training budget: the same option in every demo, only its default differs."""
    return Opt("minutes", "float", default, "Training budget, in minutes", low=0.0, high=24 * 60)


SNAKE = Demo(
    name="snake",
    title="Snake by reinforcement learning",
    module="zbench.demos.snake",
    minutes_from="wall_s",  # the training's wall clock, the whole run
    options=(
        Opt(
            "algo",
            "choice",
            "ppo",
            "Algorithm: ppo (masked PPO) or dqn (double DQN)",
            choices=("ppo", "dqn"),
        ),
        Opt("faithful", "bool", False, "The original reward: +0.1 a step, +1 a fruit, -1 a death"),
        Opt("board", "int", 12, "Board side, in cells", low=4, high=64),
        Opt(
            "envs",
            "int",
            None,
            "Boards played at once (default 8192 on a GPU, 64 on the CPU)",
            low=1,
            high=1 << 20,
        ),
        _minutes(5.0),
        _DEVICE,
        _SEED,
        Opt("compile", "bool", False, "Compile the policy with torch.compile (GPU only)"),
        Opt("checkpoint", "str", None, "Where to save the trained network", path=True),
    ),
    view="snake",
    rate_unit="board-steps/s",
    mode=lambda o: str(o.get("algo", "ppo")) + ("-faithful" if o.get("faithful") else ""),
    summary=(
        ("Board-steps/s", "samples_per_s"),
        ("Env alone, steps/s", "env_only_steps_per_s"),
        (f"Beat the review's {SNAKE_REVIEW_BEST} after, s", "time_to_beat_review_s"),
        ("Final mean score", "final_mean_score"),
        ("Best score", "best_score"),
        ("Games", "games"),
    ),
    series=(
        Series("mean score", "t_s", "mean_score", "score", source="curve"),
        Series("best score", "t_s", "best_score", "score", source="curve"),
    ),
    table=(
        ("Board", "board"),
        ("Envs", "envs"),
        ("Env steps", "env_steps"),
        ("Steps/s", "samples_per_s"),
        (f"Beat {SNAKE_REVIEW_BEST} s", "time_to_beat_review_s"),
        ("Mean", "final_mean_score"),
        ("Best", "best_score"),
        ("Games", "games"),
    ),
)

MOTION = Demo(
    name="motion",
    title="Talking-head motion transfer",
    module="zbench.demos.motion.job",
    options=(
        _minutes(4.0),
        Opt(
            "size",
            "int",
            256,
            "Frame side in pixels (a multiple of 32)",
            low=64,
            high=1024,
            multiple_of=32,
        ),
        Opt(
            "drive",
            "str",
            "scripted",
            "What drives the face: scripted, a video file or image folder, or webcam:N",
            path=True,
        ),
        Opt(
            "checkpoint",
            "str",
            None,
            "Checkpoint folder (default: under ZBENCH_HOME)",
            path=True,
        ),
        Opt(
            "mode",
            "switch",
            "train",
            "Train (then animate), or animate a saved checkpoint",
            choices=("train", "animate"),
        ),
        _DEVICE,
        _SEED,
        Opt(
            "frames",
            "int",
            None,
            f"Driving frames to animate (default: {MOTION_SCRIPT_FRAMES} scripted, a whole video, "
            "a webcam until stopped)",
            low=1,
            high=10_000_000,
        ),
        Opt(
            "compile",
            "bool",
            True,
            "Compile the animator with torch.compile on a GPU (about 25 s once; 300 frames/s at 256 "
            "px on an H200, eager 84-130)",
        ),
        Opt("smoke", "bool", False, "Tiny model, 64x64, a few steps (the CPU test path)"),
    ),
    smoke=(("size", 64), ("frames", 12)),
    view="pixels",
    mode=lambda o: str(o.get("mode", "train")),
    summary=(
        ("Frames/s (device, batch 1)", "fps"),
        ("Frames/s (demo loop, after warm-up)", "stream_fps"),
        ("First call (compile + warm-up), s", "first_call_s"),
        ("L1, model", "quality.model.l1"),
        ("L1, affine baseline (estimated)", "quality.affine.l1"),
        ("L1, source baseline", "quality.source.l1"),
        ("Keypoint distance px, model", "quality.model.akd_px"),
        ("Keypoint distance px, affine (estimated)", "quality.affine.akd_px"),
        ("Keypoint distance px, source", "quality.source.akd_px"),
        ("Keypoint distance px, affine (oracle)", "quality.affine_oracle.akd_px"),
        ("Training steps", "train_steps"),
    ),
    series=(Series("training loss", "step", "loss", "loss"),),
    live_rates=((("generated", "stream_fps"),),),
    rate_unit="frames/s",
    table=(
        ("Size", "size"),
        ("FPS", "fps"),
        ("Loop FPS", "stream_fps"),
        ("L1", "quality.model.l1"),
        ("L1 affine", "quality.affine.l1"),
        ("L1 source", "quality.source.l1"),
        ("AKD px", "quality.model.akd_px"),
        ("AKD affine", "quality.affine.akd_px"),
    ),
)

TRACKING = Demo(
    name="tracking",
    title="Multi-object tracking",
    module="zbench.demos.tracking",
    options=(
        _minutes(3.0),
        Opt(
            "input",
            "str",
            "generated",
            "What to track: generated, a MOT folder, a video file, or webcam:N",
            path=True,
        ),
        Opt(
            "frames",
            "int",
            None,
            f"Frames to track (default: {TRACKING_GENERATED_FRAMES} generated, the whole input "
            "otherwise)",
            low=1,
            high=1_000_000,
        ),
        Opt(
            "tracker",
            "choice",
            "deepsort",
            "Tracker: deepsort (as published), bytetrack, or fused (two passes, appearance + motion)",
            choices=("deepsort", "bytetrack", "fused"),
        ),
        Opt(
            "batch",
            "int",
            None,
            f"Frames per detector and embedder call (default {TRACKING_BATCH}; 1 for a webcam)",
            low=1,
            high=64,
        ),
        Opt(
            "gt",
            "str",
            None,
            "Ground truth (MOT gt.txt) to score with (default: a MOT folder's own gt)",
            path=True,
        ),
        Opt("out", "str", None, "Results folder (default: under ZBENCH_HOME)", path=True),
        Opt(
            "video",
            "bool",
            True,
            "Write the annotated video to the results folder (its own thread; off: no frame "
            "leaves the GPU but the preview's)",
        ),
        Opt("checkpoint", "str", None, "Model folder (default: under ZBENCH_HOME)", path=True),
        _DEVICE,
        _SEED,
        Opt("smoke", "bool", False, "Tiny models, a short scene (the CPU test path)"),
    ),
    smoke=(("frames", 8), ("batch", 4)),  # two chunks: one warm-up, one timed
    view="boxes",
    mode=lambda o: str(o.get("tracker", "deepsort")),
    summary=(
        ("Tracking frames/s (end to end, after warm-up)", "fps.end_to_end"),
        ("Frames/s (detector)", "fps.detector"),
        ("Frames/s (embedder)", "fps.embedder"),
        ("Frames/s (tracker)", "fps.tracker"),
        ("Frames/s (drawing and video writing, its own thread)", "output_fps"),
        ("Tracking waited on the video, s", "video_wait_s"),
        ("Video finished after the last frame, s", "video_tail_s"),
        ("Warm-up (graph capture, first calls), s", "warmup_s"),
        ("Tracking wall time (warm-up and video included), s", "wall_s"),
        ("Rendering the generated frames beforehand, s", "render_s"),
        ("HOTA", "metrics.HOTA"),
        ("MOTA", "metrics.MOTA"),
        ("IDF1", "metrics.IDF1"),
        ("ID switches", "metrics.IDSW"),
        ("Scores", "metrics_note"),  # only where they could not be computed, and why
        ("Frames", "frames"),
        ("Results", "results"),
    ),
    # The device's stages on one line, the host's association on the next: each line fits the
    # figures' column whole at four-digit rates.
    rate_unit="frames/s",
    live_rates=(
        (("tracked", "fps.end_to_end"),),
        (("detector", "fps.detector"), ("embedder", "fps.embedder")),
        (("association", "fps.tracker"),),
    ),
    table=(
        ("Frames", "frames"),
        ("FPS", "fps.end_to_end"),
        ("Tracker FPS", "fps.tracker"),
        ("HOTA", "metrics.HOTA"),
        ("MOTA", "metrics.MOTA"),
        ("IDF1", "metrics.IDF1"),
    ),
    notes=(("HOTA, MOTA, IDF1", "metrics_note"),),
)

_ALL: tuple[Demo, ...] = (SNAKE, MOTION, TRACKING)


def has_run_entry(module: str) -> bool:
    """Whether ``module`` exists and defines a top-level ``run`` (read, not imported: an entry
    module may import a framework)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return False
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return False
    try:
        with open(spec.origin, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError):
        return False
    return any(isinstance(n, ast.FunctionDef) and n.name == "run" for n in tree.body)


def demos() -> dict[str, Demo]:
    """The demos present here, in display order (one still being built is left out)."""
    return {d.name: d for d in _ALL if has_run_entry(d.module)}


def known(name: str) -> Demo | None:
    """A demo by name whether or not it is present here (stored runs of another machine)."""
    return next((d for d in _ALL if d.name == name), None)


def get(name: str) -> Demo:
    """The demo table's entry for ``name``; a UsageError naming the choices when there is none."""
    found = demos()
    if name not in found:
        raise UsageError(f"demo: {one_of(found, name)}")
    return found[name]


def check(demo: Demo, options: Mapping[str, Any]) -> str | None:
    """The entry module's own ``check(options)`` (bad input it can see before running: a missing
    checkpoint), where it has one; entry modules import frameworks only inside ``run``."""
    module = importlib.import_module(demo.module)
    fn = getattr(module, "check", None)
    return fn(options) if callable(fn) else None


def figure(figures: Mapping[str, Any], path: str) -> Any:
    """A figure by dotted path (``quality.model.l1``), None where missing."""
    value: Any = figures
    for part in path.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def has_figure(figures: Mapping[str, Any], path: str) -> bool:
    """Whether the dotted path is there, whatever its value (a rate not known yet is None)."""
    *parents, last = path.split(".")
    holder = figure(figures, ".".join(parents)) if parents else figures
    return isinstance(holder, Mapping) and last in holder
