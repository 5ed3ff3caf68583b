"""Snake in the terminal: replay a trained checkpoint (``--play``) or play it with the arrow keys
(``--human``). Rich ``Live`` draws the board; keys are read raw from stdin (POSIX terminals)."""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import sys
import time
from collections.abc import Iterator

import torch
from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from zbench.demos.snake.env import SnakeEnv
from zbench.demos.snake.model import load_checkpoint
from zbench.demos.snake.ppo import masked_logits
from zbench.demos.snake.render import render_board, utf8_terminal

KEYS = {
    "\x1b[A": 0,
    "\x1b[C": 1,
    "\x1b[B": 2,
    "\x1b[D": 3,
    "w": 0,
    "d": 1,
    "s": 2,
    "a": 3,
    "k": 0,
    "l": 1,
    "j": 2,
    "h": 3,
}


@contextlib.contextmanager
def raw_keys() -> Iterator[None]:
    """Stdin in cbreak mode (no echo, key by key) while the game runs; restored on exit."""
    if not sys.stdin.isatty():
        yield
        return
    import termios
    import tty

    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def read_key(timeout: float) -> str | None:
    """One key (an arrow's whole escape sequence) or None after ``timeout`` seconds."""
    if not sys.stdin.isatty():
        time.sleep(timeout)
        return None
    ready, _, _ = select.select([sys.stdin], [], [], timeout)
    if not ready:
        return None
    data = os.read(sys.stdin.fileno(), 8).decode(errors="ignore")
    return data or None


def _view(env: SnakeEnv, title: str, games: list[int], ascii: bool, hint: str) -> Group:
    board = env.board(0)
    best = max(games, default=0)
    mean = sum(games) / len(games) if games else 0.0
    status = Text(
        f"{title}  score {board['score']}  best {best}  mean {mean:.1f}  games {len(games)}",
        style="bold",
    )
    return Group(status, render_board(board, ascii=ascii), Text(hint, style="dim"))


def play(checkpoint: str | None, *, board: int = 12, fps: float = 8.0, games: int = 0) -> int:
    """Run until ``q``/Ctrl-C (or ``games`` finished games when above 0). Returns an exit code."""
    console = Console(highlight=False)
    ascii = not utf8_terminal()
    net = None
    if checkpoint is not None:
        net, meta = load_checkpoint(checkpoint)
        board = int(meta["size"])
    env = SnakeEnv(1, board, "cpu", seed=int(time.time()))
    human = net is None
    title = "you" if human else f"net {os.path.basename(checkpoint or '')}"
    hint = "arrows/wasd steer, q quits" if human else "q or Ctrl-C quits"
    finished: list[int] = []
    action = 1
    with raw_keys(), Live(console=console, auto_refresh=False, transient=False) as live:
        try:
            while games <= 0 or len(finished) < games:
                live.update(_view(env, title, finished, ascii, hint), refresh=True)
                key = read_key(1.0 / fps)
                if key in ("q", "Q", "\x03"):
                    break
                if human:
                    action = KEYS.get(key or "", action)
                else:
                    assert net is not None
                    with torch.no_grad():
                        logits = net(env.observe())[0]
                    action = int(masked_logits(logits, env.action_mask()).argmax(dim=1)[0])
                out = env.step(torch.tensor([action]))
                if bool(out.done[0]):
                    finished.append(int(out.score[0]))
                    action = 1
        except KeyboardInterrupt:
            pass
    if finished:
        console.print(
            f"\n{len(finished)} games, best {max(finished)}, "
            f"mean {sum(finished) / len(finished):.1f}"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m zbench.demos.snake.play [CHECKPOINT] [--board N]``: the CLI runs this in a
    process of its own, so the ``zbench`` process never imports torch."""
    p = argparse.ArgumentParser(prog="python -m zbench.demos.snake.play")
    p.add_argument("checkpoint", nargs="?", default=None, help="a trained net; none: you play")
    p.add_argument("--board", type=int, default=12)
    p.add_argument("--games", type=int, default=0, help="stop after this many games (0: never)")
    args = p.parse_args(argv)
    from zbench.runners.harness import BadInput

    try:
        return play(args.checkpoint, board=args.board, games=args.games)
    except BadInput as exc:  # a file that is not a snake checkpoint: one line, no traceback
        print(f"zbench: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
