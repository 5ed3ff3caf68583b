"""A probe runner that speaks the runner protocol without a GPU, for `probe` job tests: the
options of ``zbench.runners.microbench``; one matmul and one memory copy per GPU it was given, and one
copy between the first two; ``FAKE_PROBE_FAIL=1``: fails as the real one does without CUDA."""

from __future__ import annotations

import argparse
import os
import sys
import time

from zbench.contract.protocol import EventWriter


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--events", required=True)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--p2p-seconds", type=float, default=3.0)
    args = p.parse_args(argv)
    w = EventWriter(args.events)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    print(f"fake probe CUDA_VISIBLE_DEVICES={visible} quick={args.quick}", flush=True)
    if os.environ.get("FAKE_PROBE_FAIL"):
        w.error("unavailable", "PyTorch sees no CUDA GPU")
        return 1
    count = len([g for g in visible.split(",") if g.strip()])
    w.emit("start", config=vars(args), env={"gpus": [f"Fake GPU {i}" for i in range(count)]})
    w.phase("measure")
    for g in range(count):
        w.emit("result", test="matmul", dtype="bf16", gpu=g, n=64, tflops=100.0 + g)
        w.emit("result", test="memcpy", gpu=g, bytes=1, bytes_s=2e12)
    if count >= 2:
        t0 = time.time()
        time.sleep(args.p2p_seconds)
        w.emit(
            "result",
            test="p2p",
            src=0,
            dst=1,
            bytes=1,
            bytes_s=300e9,
            t_start=t0,
            t_end=time.time(),
        )
    w.phase("done")
    w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
