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


class _Head:
    """One batch of heads being drawn: the pixel grid, the per-row parameters (B, 1, 1), the head's
    frame, and the canvas and coverage that each part of the head is composited onto in turn."""

    def __init__(self, p: dict[str, torch.Tensor], size: int, dev: torch.device) -> None:
        self.p, self.dev = p, dev
        self.n = p["style"].shape[0]
        lin = torch.linspace(-1, 1, size, device=dev)  # grid_sample's align_corners=True convention
        y, x = torch.meshgrid(lin, lin, indexing="ij")
        self.x, self.y = x[None], y[None]
        self.soft = torch.tensor(1.2 / size, device=dev)
        # Head frame: centre, scale and roll; features live on a unit sphere turned by yaw and pitch.
        self.k = p["size"] * p["scale"]
        self.hx, self.hy = p["cx"] + p["tx"], p["cy"] + p["ty"]
        self.roll, self.yaw, self.pitch = p["roll"], p["yaw"], p["pitch"]
        self.fw, self.fh = p["face_w"] * self.k, p["face_h"] * self.k
        self.anime = p["style"]
        self.skin, self.hair = self.rgb("skin"), self.rgb("hair")
        self.white = torch.ones_like(self.skin)
        # The face turns: shifted against the yaw, so the head appears to turn.
        self.shift = torch.sin(self.yaw) * self.fw * 0.25
        self.canvas = self.background()
        self.cover = torch.zeros_like(self.x).expand(self.n, size, size)

    def rgb(self, name: str) -> torch.Tensor:
        p = self.p
        return torch.stack([p[f"{name}_r"], p[f"{name}_g"], p[f"{name}_b"]], 1)  # (B,3,1,1)

    def ellipse(self, cx, cy, a, b, ang) -> torch.Tensor:
        return _ellipse(self.x, self.y, cx, cy, a, b, ang, self.soft)

    def place(self, u, v):
        """Face-surface point (u, v) in face units -> image (x, y), plus its facing (cos of normal)."""
        u, v = torch.as_tensor(u, device=self.dev), torch.as_tensor(v, device=self.dev)
        yaw, pitch, roll = self.yaw, self.pitch, self.roll
        z = torch.sqrt(torch.clamp(1 - u * u * 0.6 - v * v * 0.5, min=0.05))
        cy_, sy_ = torch.cos(yaw), torch.sin(yaw)
        xr = u * cy_ + z * sy_
        zr = -u * sy_ + z * cy_
        cp, sp = torch.cos(pitch), torch.sin(pitch)
        yr = v * cp - zr * sp
        zr2 = v * sp + zr * cp
        lx, ly = xr * self.fw, yr * self.fh
        cr, sr = torch.cos(roll), torch.sin(roll)
        return self.hx + cr * lx - sr * ly, self.hy + sr * lx + cr * ly, torch.clamp(zr2, 0.05, 1.0)

    def feature(self, u, v, a, b, colour, ang=0.0) -> None:
        """A flat mark on the face (eye, brow, nose, mouth): foreshortened by the yaw, faded as it
        turns away; not part of the coverage (it lies on the face)."""
        fx, fy, facing = self.place(u, v)
        cos_yaw = torch.cos(self.yaw).clamp(min=0.3)
        m = self.ellipse(fx, fy, a * self.fw * cos_yaw, b * self.fh, self.roll + ang)
        self.canvas = _over(self.canvas, colour, (m * facing.clamp(max=1))[:, None])

    def part(self, colour, alpha) -> None:
        """A shape of the head: drawn, and added to the coverage."""
        self.cover = self.cover + (1 - self.cover) * alpha
        self.canvas = _over(self.canvas, colour, alpha[:, None])

    def background(self) -> torch.Tensor:
        """Two-colour gradient with stripes, rings or plain, per identity."""
        p, x, y = self.p, self.x, self.y
        ca, sa = torch.cos(p["bg_angle"]), torch.sin(p["bg_angle"])
        ramp = (ca * x + sa * y) * 0.5 + 0.5
        stripes = 0.5 + 0.5 * torch.sin(p["bg_freq"] * math.pi * (ca * y - sa * x))
        rings = 0.5 + 0.5 * torch.sin(p["bg_freq"] * math.pi * torch.sqrt(x * x + y * y))
        pat = p["bg_pattern"]
        mix = torch.where(
            pat < 0.5, ramp, torch.where(pat < 1.5, 0.6 * ramp + 0.4 * stripes, rings)
        )
        return self.rgb("bg1") * (1 - mix[:, None]) + self.rgb("bg2") * mix[:, None]

    def body(self) -> None:
        """Shoulders and neck (they move a little with the head), long hair behind, ears, the face."""
        k, hx, hy, roll, fw, fh = self.k, self.hx, self.hy, self.roll, self.fw, self.fh
        self.part(
            self.rgb("shirt"), self.ellipse(hx * 0.5, hy + 1.05 * k, 0.75 * k, 0.42 * k, roll * 0.2)
        )
        self.part(
            self.skin * 0.85, self.ellipse(hx * 0.8, hy + 0.55 * k, 0.13 * k, 0.3 * k, roll * 0.5)
        )
        back = self.ellipse(hx, hy + 0.12 * k, fw * 1.35, fh * 1.35, roll) * self.p["hair_long"]
        self.part(self.hair * 0.8, back)
        for side in (-1.0, 1.0):
            ex, ey, _ = self.place(
                torch.tensor(side * 1.15, device=self.dev), torch.tensor(0.05, device=self.dev)
            )
            ear = self.ellipse(ex, ey, 0.09 * k, 0.13 * k, roll) * (1 - self.anime * 0.5)
            self.part(self.skin * 0.9, ear)
        shift = self.shift
        face = self.ellipse(
            hx + shift * torch.cos(roll), hy + shift * torch.sin(roll), fw, fh, roll
        )
        x, y, anime = self.x, self.y, self.anime
        lit = 1 - 0.25 * (1 - anime) * ((x - hx + 0.3 * fw) ** 2 + (y - hy + 0.4 * fh) ** 2) / (
            fh * fh
        )
        self.part(self.skin * lit[:, None].clamp(0.6, 1.1), face)

    def eyes(self) -> None:
        """Brow, sclera, iris, pupil and highlight; anime eyes are larger and taller."""
        p, anime, white = self.p, self.anime, self.white
        gap, es = p["eye_gap"] * 1.3, p["eye_size"] * (1 + 0.45 * anime)
        open_ = p["eye_open"].clamp(0.04, 1)
        for side in (-1.0, 1.0):
            u = side * gap
            self.feature(u, EYE_V - 0.38 - 0.05 * anime, 0.3 * es, 0.045, self.hair * 0.7)
            self.feature(u, EYE_V, 0.24 * es, 0.16 * es * open_ * (1 + 0.4 * anime), white)
            self.feature(
                u, EYE_V, 0.13 * es, 0.12 * es * open_ * (1 + 0.5 * anime), self.rgb("iris")
            )
            self.feature(u, EYE_V, 0.06 * es, 0.06 * es * open_ * (1 + 0.5 * anime), white * 0.05)
            self.feature(u + 0.05, EYE_V - 0.04, 0.03 * es, 0.03 * es * open_ * anime, white)

    def nose_and_mouth(self) -> None:
        """A shaded dot (anime) or a darker ellipse (realistic); a mouth that opens vertically."""
        p, anime, skin, dev = self.p, self.anime, self.skin, self.dev
        self.feature(0.0, 0.25, 0.07 * (1 - 0.5 * anime), 0.12 * (1 - 0.6 * anime), skin * 0.7)
        mw = 0.32 * p["mouth_w"] * (1 - 0.3 * anime)
        lips = (
            torch.tensor([0.75, 0.3, 0.3], device=dev).view(1, 3, 1, 1) * (1 - anime[:, None])
            + skin * 0.6 * anime[:, None]
        )
        self.feature(0.0, 0.55, mw, 0.05 + 0.03 * p["mouth_open"], lips)
        inner = torch.tensor([0.35, 0.08, 0.1], device=dev).view(1, 3, 1, 1)
        self.feature(0.0, 0.55, mw * 0.85, 0.01 + 0.19 * p["mouth_open"], inner)

    def fringe(self) -> None:
        """Hair over the top of the face, cut by a wavy line that follows the head."""
        x, y, hx, hy, k, fw, fh, roll = (
            self.x,
            self.y,
            self.hx,
            self.hy,
            self.k,
            self.fw,
            self.fh,
            self.roll,
        )
        cr, sr = torch.cos(roll), torch.sin(roll)
        ly = -sr * (x - hx) + cr * (y - hy)
        lx = cr * (x - hx) + sr * (y - hy)
        wave = 0.04 * k * torch.sin(lx / fw * 9 + self.anime * 2)
        cut = torch.sigmoid(
            ((self.p["fringe"] - torch.sin(self.pitch) * 0.4) * fh - ly + wave) / self.soft
        )
        cap = self.ellipse(
            hx + self.shift * cr, hy - 0.08 * k + self.shift * sr, fw * 1.12, fh * 1.05, roll
        )
        self.part(self.hair, cap * cut)

    def accessories(self) -> None:
        """Round glasses and a bow in the hair, each shown per identity."""
        p, dev, k, roll, fw, fh = self.p, self.dev, self.k, self.roll, self.fw, self.fh
        for side in (-1.0, 1.0):
            gx, gy, _facing = self.place(
                torch.tensor(side * 1.3, device=dev) * p["eye_gap"], torch.tensor(-0.05, device=dev)
            )
            outer = self.ellipse(
                gx, gy, 0.32 * fw * torch.cos(self.yaw).clamp(min=0.3), 0.22 * fh, roll
            )
            inner = self.ellipse(
                gx, gy, 0.27 * fw * torch.cos(self.yaw).clamp(min=0.3), 0.18 * fh, roll
            )
            rim = ((outer - inner).clamp(0, 1) * p["glasses"])[:, None]
            self.canvas = _over(self.canvas, self.white * 0.1, rim)
        bx, by, _ = self.place(torch.tensor(0.55, device=dev), torch.tensor(-0.95, device=dev))
        cr, sr = torch.cos(roll), torch.sin(roll)
        for side in (-1.0, 1.0):
            wing = self.ellipse(
                bx + side * 0.07 * k * cr, by + side * 0.07 * k * sr, 0.08 * k, 0.05 * k, roll
            )
            self.part(self.rgb("iris") * 0.6 + 0.4, wing * p["bow"])

    def landmarks(self) -> torch.Tensor:
        """(B, L, 2) in LANDMARKS' order, placed on the face surface as the features are."""
        yaw, gap, anime = self.yaw, self.p["eye_gap"], self.anime
        lm = [
            self.place(torch.tensor(s * 1.3, device=self.dev) * gap, torch.full_like(yaw, EYE_V))[
                :2
            ]
            for s in (-1.0, 1.0)
        ]
        for v in (0.25, 0.55, 0.95):  # nose, mouth, chin
            lm.append(self.place(torch.zeros_like(yaw), torch.full_like(yaw, v))[:2])
        brow_v = EYE_V - 0.38 - 0.05 * anime
        lm += [self.place(s * (gap * 1.3), brow_v)[:2] for s in (-1.0, 1.0)]  # brow centres
        lm += [
            self.place(torch.full_like(yaw, s * 0.6), torch.full_like(yaw, 0.4))[:2]
            for s in (-1.0, 1.0)
        ]
        n = self.n
        return torch.stack([torch.stack([a.reshape(n), b.reshape(n)], -1) for a, b in lm], 1)


EYE_V = -0.05  # the eyes' height on the face, in face units


def render(
    identity: dict[str, torch.Tensor],
    pose: dict[str, torch.Tensor],
    size: int,
    device: torch.device | str = "cpu",
) -> Heads:
    """Draw one head per batch row at size x size on `device`, back to front."""
    dev = torch.device(device)
    p = {k: v.to(dev, torch.float32).reshape(-1, 1, 1) for k, v in {**identity, **pose}.items()}
    head = _Head(p, size, dev)
    head.body()
    head.eyes()
    head.nose_and_mouth()
    head.fringe()
    head.accessories()
    return Heads(head.canvas.clamp(0, 1), head.landmarks(), head.cover[:, None].clamp(0, 1))
