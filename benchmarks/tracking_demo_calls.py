"""The tracking demo's own figures, its ``run`` called several times in one process.

    python3 benchmarks/tracking_demo_calls.py --videos on,off --out calls.json      # on a GPU
    PYTHONPATH=OLD_CHECKOUT python3 benchmarks/tracking_demo_calls.py --videos on,off --out old.json
    python3 benchmarks/tracking_demo_calls.py --videos off,off --pad 64 --out pad.json

Each call is what `zbench demo tracking` runs (models trained for ``--minutes`` on the first call,
loaded after; ``--frames`` generated frames), with the annotated video on or off as ``--videos``
lists. It prints each call's end-to-end, detector, embedder and tracker frames/s and the video's
figures. A process's first call is what a user's run is; the later ones show what the first paid
(docs/demos-tracking.md: the embedder's first calls at each crop count); ``--pad N`` pads the
embedder's crops to a multiple of N in every call (the demo's ``EMBEDDER_PAD``). With PYTHONPATH
naming another checkout it measures that code, for a before/after pair on one machine.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))  # after PYTHONPATH: another checkout given there comes first

from benchmarks.args import OneLineParser, comma_choices  # noqa: E402

FIELDS = ("fps", "output_fps", "video_wait_s", "video_tail_s", "wall_s", "warmup_s", "render_s")


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="tracking_demo_calls.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--videos", type=lambda t: comma_choices(t, ("on", "off"), "video"))
    ap.add_argument("--minutes", type=float, default=0.4)
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu", "auto"))
    ap.add_argument("--smoke", action="store_true", help="tiny models and frames (the CPU path)")
    ap.add_argument(
        "--pad", type=int, default=0, help="the embedder's crops padded to a multiple of this"
    )
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    if a.frames < 1 or a.minutes < 0 or a.pad < 0:
        ap.error("--frames wants at least 1, --minutes and --pad at least 0")
    from zbench.demos.tracking import demo

    demo.EMBEDDER_PAD = a.pad

    calls = []
    for n, video in enumerate(a.videos or ("on", "off"), start=1):
        options = {"minutes": a.minutes, "frames": a.frames, "video": video == "on"}
        result = demo.run({**options, "device": a.device, "smoke": a.smoke}, lambda *_, **__: None)
        call = {"call": n, "video": video, **{k: result.get(k) for k in FIELDS}}
        calls.append(call)
        fps = call["fps"]
        print(
            f"call {n} video {video:<3}  end to end {fps['end_to_end']}  detector {fps['detector']}"
            f"  embedder {fps['embedder']}  tracker {fps['tracker']}  video {call['output_fps']}"
            f"  waited {call['video_wait_s']}  tail {call['video_tail_s']}",
            flush=True,
        )
    code = {"module": demo.__file__, "embedder_pad": a.pad}
    a.out.write_text(json.dumps({"code": code, "calls": calls}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
