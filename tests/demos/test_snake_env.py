"""The Snake rules on the batched env, and batched stepping against a plain per-board reference."""

from __future__ import annotations

import random

import pytest
import torch

from zbench.demos.snake.env import DC, DR, START_LENGTH, Rewards, SnakeEnv

UP, RIGHT, DOWN, LEFT = 0, 1, 2, 3


def put_fruit(env: SnakeEnv, i: int, r: int, c: int) -> None:
    env.fruit[i] = r * env.N + c


def act(env: SnakeEnv, *actions: int):
    return env.step(torch.tensor(actions))


def test_start_position_and_fruit_off_the_body() -> None:
    env = SnakeEnv(64, 6, seed=3)
    assert env.length.tolist() == [START_LENGTH] * 64
    assert (env.direction == RIGHT).all()
    occupied = env.age.reshape(64, -1).gather(1, env.fruit[:, None])
    assert (occupied == 0).all()


def test_wall_death_resets_the_board() -> None:
    env = SnakeEnv(1, 6)
    put_fruit(env, 0, 0, 0)
    out = None
    for _ in range(3):  # head at column 3 of 6: columns 4, 5, then the wall
        out = act(env, RIGHT)
    assert out is not None and bool(out.done[0]) and float(out.reward[0]) == -1.0
    assert int(env.head_c[0]) == 3 and int(env.length[0]) == START_LENGTH  # a fresh game


def test_reversal_is_ignored() -> None:
    env = SnakeEnv(1, 8)
    put_fruit(env, 0, 0, 0)
    out = act(env, LEFT)  # heading right: left would reverse
    assert not bool(out.done[0])
    assert int(env.head_c[0]) == 5 and int(env.direction[0]) == RIGHT


def test_eating_grows_and_respawns_fruit_off_the_body() -> None:
    env = SnakeEnv(1, 6)
    put_fruit(env, 0, 3, 4)
    out = act(env, RIGHT)
    assert bool(out.ate[0]) and float(out.reward[0]) == pytest.approx(1.0)
    assert int(env.length[0]) == START_LENGTH + 1
    assert int((env.age[0] > 0).sum()) == START_LENGTH + 1
    assert int(env.age.reshape(-1)[env.fruit[0]]) == 0


def test_self_collision_kills() -> None:
    env = SnakeEnv(1, 8)
    env.length[0] = 5
    env.age[0].zero_()
    for k, c in enumerate(range(4, -1, -1)):  # a length-5 line along row 4, head at column 4
        env.age[0, 4, c] = 5 - k
    put_fruit(env, 0, 0, 7)
    for a in (DOWN, LEFT):
        assert not bool(act(env, a).done[0])
    out = act(env, UP)  # into its own body
    assert bool(out.done[0]) and float(out.reward[0]) == -1.0
    assert int(out.score[0]) == 2


def test_moving_into_the_tail_cell_is_legal() -> None:
    env = SnakeEnv(1, 6)
    env.length[0] = 4
    env.age[0].zero_()
    env.age[0, 2, 2], env.age[0, 2, 3], env.age[0, 3, 3], env.age[0, 3, 2] = 1, 4, 3, 2
    env.head_r[0], env.head_c[0], env.direction[0] = 2, 3, UP
    put_fruit(env, 0, 0, 5)
    assert bool(env.action_mask()[0, LEFT])
    assert not bool(act(env, LEFT).done[0])


def test_step_limit_without_food() -> None:
    env = SnakeEnv(1, 6, step_limit=4)
    put_fruit(env, 0, 0, 0)
    outs = [act(env, a) for a in (DOWN, RIGHT, UP, LEFT)]
    assert [bool(o.done[0]) for o in outs] == [False, False, False, True]
    assert float(outs[-1].reward[0]) < -0.5


def test_action_mask_never_empty_and_forbids_reversal() -> None:
    env = SnakeEnv(256, 5, seed=1)
    for _ in range(200):
        mask = env.action_mask()
        assert mask.any(dim=1).all()
        assert not mask.gather(1, ((env.direction + 2) % 4)[:, None]).any()
        env.step(torch.multinomial(mask.float(), 1)[:, 0])


def test_faithful_rewards() -> None:
    env = SnakeEnv(1, 6, rewards=Rewards.faithful())
    put_fruit(env, 0, 0, 0)
    assert float(act(env, DOWN).reward[0]) == pytest.approx(0.1)


def reference_step(board: dict, action: int, n: int, limit: int) -> tuple[bool, bool]:
    """The rules written plainly for one board (a list of body cells, head first)."""
    body, d = board["body"], board["dir"]
    if action == (d + 2) % 4:
        action = d
    r, c = body[0][0] + DR[action], body[0][1] + DC[action]
    ate = (r, c) == board["fruit"]
    rest = body if ate else body[:-1]
    dead = not (0 <= r < n and 0 <= c < n) or (r, c) in rest
    board["hunger"] = 0 if ate else board["hunger"] + 1
    board["body"], board["dir"] = [(r, c), *rest], action
    done = dead or board["hunger"] >= limit or len(board["body"]) >= n * n
    return done, ate and not dead


def snapshot(env: SnakeEnv, i: int) -> dict:
    n = env.N
    cells = [(int(a), r, c) for r in range(n) for c in range(n) if (a := env.age[i, r, c]) > 0]
    body = [(r, c) for _, r, c in sorted(cells, reverse=True)]
    f = int(env.fruit[i])
    return {
        "body": body,
        "dir": int(env.direction[i]),
        "fruit": (f // n, f % n),
        "hunger": int(env.hunger[i]),
    }


def test_batched_step_equals_a_per_board_reference() -> None:
    rng = random.Random(7)
    env = SnakeEnv(16, 5, seed=2, step_limit=30)
    for _ in range(300):
        refs = [snapshot(env, i) for i in range(env.B)]
        actions = [rng.randrange(4) for _ in range(env.B)]
        out = env.step(torch.tensor(actions))
        for i, ref in enumerate(refs):
            done, ate = reference_step(ref, actions[i], env.N, 30)
            assert bool(out.done[i]) == done
            assert bool(out.ate[i]) == ate
            if not done:
                now = snapshot(env, i)
                assert now["body"] == ref["body"] and now["dir"] == ref["dir"]
