"""Procedural talking heads drawn with torch tensor ops, batched on any device, deterministic per seed.

Every shape is a soft signed-distance ellipse (or ring) composited front to back over a background,
so a whole batch of heads is a few hundred element-wise kernels: fast enough on a GPU to render fresh
training pairs every step, with no per-image Python loop and no dataset download.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

# Landmarks the renderer reports for every head, in image coordinates [-1, 1] (x right, y down).
# The first FIT_LANDMARKS are the classic five (the affine baseline is fitted to them); brows and
# cheeks are surface points too, so a quality measure over all of them is not the affine fit's own.
LANDMARKS = (
    "left_eye",
    "right_eye",
    "nose",
    "mouth",
    "chin",
    "left_brow",
    "right_brow",
    "left_cheek",
    "right_cheek",
)
FIT_LANDMARKS = 5

IDENTITY_KEYS = (
    "style",  # 0 realistic-ish, 1 anime
    "skin_r",
    "skin_g",
    "skin_b",
    "hair_r",
    "hair_g",
    "hair_b",
    "iris_r",
    "iris_g",
    "iris_b",
    "bg1_r",
    "bg1_g",
    "bg1_b",
    "bg2_r",
    "bg2_g",
    "bg2_b",
    "shirt_r",
    "shirt_g",
    "shirt_b",
    "bg_angle",
    "bg_pattern",
    "bg_freq",
    "face_w",
    "face_h",
    "eye_gap",
    "eye_size",
    "mouth_w",
    "hair_long",
    "fringe",
    "glasses",
    "bow",
    "cx",
    "cy",
    "size",
)
POSE_KEYS = ("yaw", "pitch", "roll", "eye_open", "mouth_open", "tx", "ty", "scale")


@dataclass(frozen=True)
class Heads:
    """Rendered heads: images (B, 3, H, W) in [0, 1], landmarks (B, L, 2) in [-1, 1] and the head's
    coverage (B, 1, H, W) in [0, 1]: hair, face, ears, neck and shoulders, everything but background."""

    images: torch.Tensor
    landmarks: torch.Tensor
    masks: torch.Tensor


def _u(g: torch.Generator, n: int, lo: float, hi: float) -> torch.Tensor:
    return lo + (hi - lo) * torch.rand(n, generator=g)


def sample_identity(g: torch.Generator, n: int) -> dict[str, torch.Tensor]:
    """Who is drawn: style, colours, proportions, hair, accessories, background (CPU tensors)."""
    ident = {
        "style": (torch.rand(n, generator=g) < 0.5).float(),
        "bg_angle": _u(g, n, 0, math.pi),
        "bg_pattern": torch.randint(0, 3, (n,), generator=g).float(),
        "bg_freq": _u(g, n, 3, 9),
        "face_w": _u(g, n, 0.30, 0.38),
        "face_h": _u(g, n, 0.38, 0.46),
        "eye_gap": _u(g, n, 0.30, 0.40),
        "eye_size": _u(g, n, 0.8, 1.2),
        "mouth_w": _u(g, n, 0.7, 1.3),
        "hair_long": (torch.rand(n, generator=g) < 0.5).float(),
        "fringe": _u(g, n, -0.55, -0.3),
        "glasses": (torch.rand(n, generator=g) < 0.3).float(),
        "bow": (torch.rand(n, generator=g) < 0.25).float(),
        "cx": _u(g, n, -0.06, 0.06),
        "cy": _u(g, n, -0.06, 0.04),
        "size": _u(g, n, 1.05, 1.25),
    }
    # Skin: from a warm tone ramp (realistic) or pale/pastel (anime); the mix stays plausible.
    tone = torch.rand(n, generator=g)
    skin = torch.stack([0.95 - 0.45 * tone, 0.80 - 0.45 * tone, 0.70 - 0.40 * tone], 1)
    for name, col in zip(("skin", "hair", "iris", "bg1", "bg2", "shirt"), range(6), strict=True):
        rgb = skin if col == 0 else torch.rand(n, 3, generator=g)
        if name == "hair":  # mostly natural hair, some anime colours
            natural = torch.stack([tone * 0 + 0.1, tone * 0 + 0.07, tone * 0 + 0.05], 1)
            natural = natural + torch.rand(n, 1, generator=g) * torch.tensor([[0.55, 0.4, 0.25]])
            rgb = torch.where(ident["style"][:, None] > 0.5, rgb, natural)
        for i, c in enumerate("rgb"):
            ident[f"{name}_{c}"] = rgb[:, i]
    return ident


def sample_pose(g: torch.Generator, n: int, strength: float = 1.0) -> dict[str, torch.Tensor]:
    """How the head is held: angles (radians), eye and mouth opening in [0, 1], small shifts."""
    s = strength
    eye = torch.where(torch.rand(n, generator=g) < 0.25, _u(g, n, 0, 0.3), _u(g, n, 0.6, 1.0))
    mouth = torch.where(torch.rand(n, generator=g) < 0.4, _u(g, n, 0, 0.1), _u(g, n, 0.1, 1.0))
    return {
        "yaw": _u(g, n, -0.6 * s, 0.6 * s),
        "pitch": _u(g, n, -0.35 * s, 0.35 * s),
        "roll": _u(g, n, -0.3 * s, 0.3 * s),
        "eye_open": eye,
        "mouth_open": mouth,
        "tx": _u(g, n, -0.08 * s, 0.08 * s),
        "ty": _u(g, n, -0.06 * s, 0.06 * s),
        "scale": _u(g, n, 1 - 0.08 * s, 1 + 0.08 * s),
    }


def neutral_pose(n: int) -> dict[str, torch.Tensor]:
    """Facing the camera, eyes open, mouth closed."""
    z = torch.zeros(n)
    return {k: z + v for k, v in zip(POSE_KEYS, (0, 0, 0, 1, 0, 0, 0, 1), strict=True)}


def scripted_poses(frames: int, start: int = 0) -> dict[str, torch.Tensor]:
    """A scripted performance, one pose per frame: nods, head turns, blinks and talking."""
    t = torch.arange(start, start + frames, dtype=torch.float32) / 25.0  # seconds at 25 fps
    blink = torch.clamp((torch.remainder(t, 2.7) - 2.5).abs() / 0.12, max=1.0)  # short closures
    talk = 0.5 + 0.5 * torch.sin(2 * math.pi * 3.1 * t) * torch.sin(2 * math.pi * 0.37 * t)
    return {
        "yaw": 0.45 * torch.sin(2 * math.pi * 0.23 * t),
        "pitch": 0.25 * torch.sin(2 * math.pi * 0.61 * t + 1.0),
        "roll": 0.18 * torch.sin(2 * math.pi * 0.17 * t + 2.0),
        "eye_open": blink,
        "mouth_open": talk.clamp(0, 1) * (torch.sin(2 * math.pi * 0.29 * t) > -0.3).float(),
        "tx": 0.04 * torch.sin(2 * math.pi * 0.11 * t),
        "ty": 0.03 * torch.sin(2 * math.pi * 0.13 * t + 0.5),
        "scale": 1 + 0.04 * torch.sin(2 * math.pi * 0.07 * t),
    }


def random_clip_poses(g: torch.Generator, n: int, frames: int) -> dict[str, torch.Tensor]:
    """n smooth random clips, (n, frames) per key: sinusoids with random phase, speed and reach."""
    t = torch.linspace(0, 1, frames)[None, :]
    out = {}
    for key, amp in zip(POSE_KEYS, (0.55, 0.3, 0.25, 0.5, 0.5, 0.06, 0.05, 0.07), strict=True):
        freq = _u(g, n, 0.5, 2.0)[:, None]
        phase = _u(g, n, 0, 2 * math.pi)[:, None]
        wave = torch.sin(2 * math.pi * freq * t + phase)
        if key in ("eye_open", "mouth_open"):
            out[key] = (0.5 + amp * wave * 1.4).clamp(0, 1)
        elif key == "scale":
            out[key] = 1 + amp * wave
        else:
            out[key] = amp * wave
    return out


def _ellipse(x, y, cx, cy, a, b, ang, soft):
    """Soft coverage in [0, 1] of a rotated ellipse; all arguments broadcast as (B, 1, 1) or grids."""
    c, s = torch.cos(ang), torch.sin(ang)
    dx, dy = x - cx, y - cy
    a, b = torch.clamp(torch.as_tensor(a), min=1e-3), torch.clamp(torch.as_tensor(b), min=1e-3)
    u = (c * dx + s * dy) / a
    v = (-s * dx + c * dy) / b
    # First-order signed distance f/|grad f| of f = r - 1: stays sharp for thin, closed-eye ellipses.
    r = torch.sqrt(u * u + v * v + 1e-8)
    grad = torch.sqrt((u / a) ** 2 + (v / b) ** 2 + 1e-8) / r
    return torch.sigmoid(-(r - 1) / grad / soft)


def _over(canvas, colour, alpha):
    return canvas * (1 - alpha) + colour * alpha


def render(
    identity: dict[str, torch.Tensor],
    pose: dict[str, torch.Tensor],
    size: int,
    device: torch.device | str = "cpu",
) -> Heads:
    """Draw one head per batch row at size x size on `device`."""
    dev = torch.device(device)
    p = {k: v.to(dev, torch.float32).reshape(-1, 1, 1) for k, v in {**identity, **pose}.items()}
    n = p["style"].shape[0]
    lin = torch.linspace(-1, 1, size, device=dev)  # grid_sample's align_corners=True convention
    y, x = torch.meshgrid(lin, lin, indexing="ij")
    x, y = x[None], y[None]
    soft = torch.tensor(1.2 / size, device=dev)

    def rgb(name):
        return torch.stack([p[f"{name}_r"], p[f"{name}_g"], p[f"{name}_b"]], 1)  # (B,3,1,1)

    # Background: two-colour gradient with stripes, rings or plain, per identity.
    ca, sa = torch.cos(p["bg_angle"]), torch.sin(p["bg_angle"])
    ramp = (ca * x + sa * y) * 0.5 + 0.5
    stripes = 0.5 + 0.5 * torch.sin(p["bg_freq"] * math.pi * (ca * y - sa * x))
    rings = 0.5 + 0.5 * torch.sin(p["bg_freq"] * math.pi * torch.sqrt(x * x + y * y))
    pat = p["bg_pattern"]
    mix = torch.where(pat < 0.5, ramp, torch.where(pat < 1.5, 0.6 * ramp + 0.4 * stripes, rings))
    canvas = rgb("bg1") * (1 - mix[:, None]) + rgb("bg2") * mix[:, None]

    # Head frame: centre, scale and roll; features live on a unit sphere rotated by yaw and pitch.
    k = p["size"] * p["scale"]
    hx, hy = p["cx"] + p["tx"], p["cy"] + p["ty"]
    roll, yaw, pitch = p["roll"], p["yaw"], p["pitch"]
    fw, fh = p["face_w"] * k, p["face_h"] * k
    anime = p["style"]

    def place(u, v):
        """Face-surface point (u, v) in face units -> image (x, y), plus its facing (cos of normal)."""
        u, v = torch.as_tensor(u, device=dev), torch.as_tensor(v, device=dev)
        z = torch.sqrt(torch.clamp(1 - u * u * 0.6 - v * v * 0.5, min=0.05))
        cy_, sy_ = torch.cos(yaw), torch.sin(yaw)
        xr = u * cy_ + z * sy_
        zr = -u * sy_ + z * cy_
        cp, sp = torch.cos(pitch), torch.sin(pitch)
        yr = v * cp - zr * sp
        zr2 = v * sp + zr * cp
        lx, ly = xr * fw, yr * fh
        cr, sr = torch.cos(roll), torch.sin(roll)
        return hx + cr * lx - sr * ly, hy + sr * lx + cr * ly, torch.clamp(zr2, 0.05, 1.0)

    def feature(canvas, u, v, a, b, colour, ang=0.0):
        fx, fy, facing = place(u, v)
        cos_yaw = torch.cos(yaw).clamp(min=0.3)
        m = _ellipse(x, y, fx, fy, a * fw * cos_yaw, b * fh, roll + ang, soft)
        return _over(canvas, colour, (m * facing.clamp(max=1))[:, None])

    skin, hair = rgb("skin"), rgb("hair")
    cover = torch.zeros_like(x).expand(n, size, size)

    def part(canvas, colour, alpha):  # a shape of the head: drawn, and added to the coverage
        nonlocal cover
        cover = cover + (1 - cover) * alpha
        return _over(canvas, colour, alpha[:, None])

    # Shoulders and neck (move a little with the head).
    canvas = part(
        canvas,
        rgb("shirt"),
        _ellipse(x, y, hx * 0.5, hy + 1.05 * k, 0.75 * k, 0.42 * k, roll * 0.2, soft),
    )
    canvas = part(
        canvas,
        skin * 0.85,
        _ellipse(x, y, hx * 0.8, hy + 0.55 * k, 0.13 * k, 0.3 * k, roll * 0.5, soft),
    )
    # Long hair behind the head.
    back = _ellipse(x, y, hx, hy + 0.12 * k, fw * 1.35, fh * 1.35, roll, soft) * p["hair_long"]
    canvas = part(canvas, hair * 0.8, back)
    # Ears, then the face: shifted against the yaw so the head appears to turn.
    shift = torch.sin(yaw) * fw * 0.25
    for side in (-1.0, 1.0):
        ex, ey, _ = place(torch.tensor(side * 1.15, device=dev), torch.tensor(0.05, device=dev))
        ear = _ellipse(x, y, ex, ey, 0.09 * k, 0.13 * k, roll, soft) * (1 - anime * 0.5)
        canvas = part(canvas, skin * 0.9, ear)
    face = _ellipse(
        x, y, hx + shift * torch.cos(roll), hy + shift * torch.sin(roll), fw, fh, roll, soft
    )
    lit = 1 - 0.25 * (1 - anime) * ((x - hx + 0.3 * fw) ** 2 + (y - hy + 0.4 * fh) ** 2) / (fh * fh)
    canvas = _over(canvas, skin * lit[:, None].clamp(0.6, 1.1), face[:, None])
    cover = cover + (1 - cover) * face
    # Eyes: sclera, iris, pupil, highlight; anime eyes are larger and taller.
    gap, es = p["eye_gap"] * 1.3, p["eye_size"] * (1 + 0.45 * anime)
    open_ = p["eye_open"].clamp(0.04, 1)
    white = torch.ones_like(skin)
    eye_v = -0.05
    for side in (-1.0, 1.0):
        u = side * gap
        canvas = feature(
            canvas, u, eye_v - 0.38 - 0.05 * anime, 0.3 * es, 0.045, hair * 0.7
        )  # brow
        canvas = feature(canvas, u, eye_v, 0.24 * es, 0.16 * es * open_ * (1 + 0.4 * anime), white)
        canvas = feature(
            canvas, u, eye_v, 0.13 * es, 0.12 * es * open_ * (1 + 0.5 * anime), rgb("iris")
        )
        canvas = feature(
            canvas, u, eye_v, 0.06 * es, 0.06 * es * open_ * (1 + 0.5 * anime), white * 0.05
        )
        canvas = feature(
            canvas, u + 0.05, eye_v - 0.04, 0.03 * es, 0.03 * es * open_ * anime, white
        )
    # Nose (a shaded dot for anime, a darker ellipse for realistic) and mouth (opens vertically).
    canvas = feature(
        canvas, 0.0, 0.25, 0.07 * (1 - 0.5 * anime), 0.12 * (1 - 0.6 * anime), skin * 0.7
    )
    mw = 0.32 * p["mouth_w"] * (1 - 0.3 * anime)
    lips = (
        torch.tensor([0.75, 0.3, 0.3], device=dev).view(1, 3, 1, 1) * (1 - anime[:, None])
        + skin * 0.6 * anime[:, None]
    )
    canvas = feature(canvas, 0.0, 0.55, mw, 0.05 + 0.03 * p["mouth_open"], lips)
    inner = torch.tensor([0.35, 0.08, 0.1], device=dev).view(1, 3, 1, 1)
    canvas = feature(canvas, 0.0, 0.55, mw * 0.85, 0.01 + 0.19 * p["mouth_open"], inner)
    # Fringe: hair over the top of the face, cut by a wavy line that follows the head.
    cr, sr = torch.cos(roll), torch.sin(roll)
    ly = -sr * (x - hx) + cr * (y - hy)
    lx = cr * (x - hx) + sr * (y - hy)
    wave = 0.04 * k * torch.sin(lx / fw * 9 + anime * 2)
    cut = torch.sigmoid(((p["fringe"] - torch.sin(pitch) * 0.4) * fh - ly + wave) / soft)
    cap = _ellipse(
        x, y, hx + shift * cr, hy - 0.08 * k + shift * sr, fw * 1.12, fh * 1.05, roll, soft
    )
    canvas = part(canvas, hair, cap * cut)
    # Accessories: round glasses and a bow in the hair.
    for side in (-1.0, 1.0):
        gx, gy, _facing = place(
            torch.tensor(side * 1.3, device=dev) * p["eye_gap"], torch.tensor(-0.05, device=dev)
        )
        outer = _ellipse(
            x, y, gx, gy, 0.32 * fw * torch.cos(yaw).clamp(min=0.3), 0.22 * fh, roll, soft
        )
        inner_r = _ellipse(
            x, y, gx, gy, 0.27 * fw * torch.cos(yaw).clamp(min=0.3), 0.18 * fh, roll, soft
        )
        canvas = _over(canvas, white * 0.1, ((outer - inner_r).clamp(0, 1) * p["glasses"])[:, None])
    bx, by, _ = place(torch.tensor(0.55, device=dev), torch.tensor(-0.95, device=dev))
    for side in (-1.0, 1.0):
        wing = _ellipse(
            x,
            y,
            bx + side * 0.07 * k * cr,
            by + side * 0.07 * k * sr,
            0.08 * k,
            0.05 * k,
            roll,
            soft,
        )
        canvas = part(canvas, rgb("iris") * 0.6 + 0.4, wing * p["bow"])

    lm = [
        place(torch.tensor(s * 1.3, device=dev) * p["eye_gap"], torch.full_like(yaw, eye_v))[:2]
        for s in (-1.0, 1.0)
    ]
    lm.append(place(torch.zeros_like(yaw), torch.full_like(yaw, 0.25))[:2])
    lm.append(place(torch.zeros_like(yaw), torch.full_like(yaw, 0.55))[:2])
    lm.append(place(torch.zeros_like(yaw), torch.full_like(yaw, 0.95))[:2])
    brow_v = eye_v - 0.38 - 0.05 * anime
    lm += [place(s * gap, brow_v)[:2] for s in (-1.0, 1.0)]  # brow centres
    lm += [place(torch.full_like(yaw, s * 0.6), torch.full_like(yaw, 0.4))[:2] for s in (-1.0, 1.0)]
    landmarks = torch.stack([torch.stack([a.reshape(n), b.reshape(n)], -1) for a, b in lm], 1)
    return Heads(canvas.clamp(0, 1), landmarks, cover[:, None].clamp(0, 1))
