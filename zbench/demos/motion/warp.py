"""Warping maths: coordinate grids, keypoint heatmaps, first-order sparse motions and grid_sample warps.

Coordinates are in [-1, 1], x then y, the convention of torch.nn.functional.grid_sample with
align_corners=True; keypoints are (B, K, 2) and their Jacobians (B, K, 2, 2).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def make_grid(h: int, w: int, device=None, dtype=torch.float32) -> torch.Tensor:
    """(h, w, 2) grid of (x, y) pixel-centre coordinates spanning [-1, 1] corner to corner."""
    ys = torch.linspace(-1, 1, h, device=device, dtype=dtype)
    xs = torch.linspace(-1, 1, w, device=device, dtype=dtype)
    gy, gx = torch.meshgrid(ys, xs, indexing="ij")
    return torch.stack([gx, gy], -1)


def warp(image: torch.Tensor, grid: torch.Tensor, padding: str = "zeros") -> torch.Tensor:
    """Sample `image` (B, C, H, W) at `grid` (B, h, w, 2): out[p] = image[grid[p]].

    The grid is resized to the image's resolution first when they differ, so one flow serves any
    feature map.
    """
    if grid.shape[1:3] != image.shape[2:]:
        g = grid.permute(0, 3, 1, 2)
        g = F.interpolate(g, size=image.shape[2:], mode="bilinear", align_corners=True)
        grid = g.permute(0, 2, 3, 1)
    # In float32: bf16 sampling coordinates would be off by up to a quarter pixel on a 64x64 map.
    out = F.grid_sample(
        image.float(), grid.float(), mode="bilinear", padding_mode=padding, align_corners=True
    )
    return out.to(image.dtype)


def translation_grid(b: int, h: int, w: int, dx: float, dy: float, device=None) -> torch.Tensor:
    """A flow that samples each output pixel from (x - dx, y - dy): the image moves by (dx, dy)."""
    g = make_grid(h, w, device)
    return (g - torch.tensor([dx, dy], device=device)).expand(b, h, w, 2)


def kp_heatmap(kp: torch.Tensor, h: int, w: int, variance: float = 0.01) -> torch.Tensor:
    """Gaussians at the keypoints: (B, K, h, w)."""
    grid = make_grid(h, w, kp.device, kp.dtype)  # (h, w, 2)
    diff = grid[None, None] - kp[:, :, None, None, :]
    return torch.exp(-0.5 * (diff**2).sum(-1) / variance)


def inv2x2(m: torch.Tensor) -> torch.Tensor:
    """Inverse of (..., 2, 2) matrices in closed form.

    Hand-written because torch.linalg.inv/solve check for singular input with a host-device sync,
    which would stall every streamed frame; a tiny determinant floor keeps it finite instead.
    """
    a, b, c, d = m[..., 0, 0], m[..., 0, 1], m[..., 1, 0], m[..., 1, 1]
    det = a * d - b * c
    det = torch.where(det.abs() < 1e-6, torch.full_like(det, 1e-6), det)
    return (
        torch.stack([torch.stack([d, -b], -1), torch.stack([-c, a], -1)], -2) / det[..., None, None]
    )


def sparse_motions(
    h: int,
    w: int,
    kp_src: torch.Tensor,
    jac_src: torch.Tensor,
    kp_drv: torch.Tensor,
    jac_drv: torch.Tensor,
) -> torch.Tensor:
    """Per-keypoint backward flows driving -> source, (B, K + 1, h, w, 2); index 0 is the identity.

    First-order approximation around each keypoint: T(z) = kp_src + J_src J_drv^-1 (z - kp_drv).
    """
    b = kp_src.shape[0]
    grid = make_grid(h, w, kp_src.device, kp_src.dtype)[None, None]  # (1, 1, h, w, 2)
    jac = (jac_src.float() @ inv2x2(jac_drv.float())).to(kp_src.dtype)
    rel = grid - kp_drv[:, :, None, None, :]  # (B, K, h, w, 2)
    moved = torch.einsum("bkij,bkhwj->bkhwi", jac, rel) + kp_src[:, :, None, None, :]
    ident = grid.expand(b, 1, h, w, 2)
    return torch.cat([ident, moved], 1)


def relative_motion(
    kp_src: torch.Tensor,
    jac_src: torch.Tensor,
    kp_drv: torch.Tensor,
    jac_drv: torch.Tensor,
    kp_drv0: torch.Tensor,
    jac_drv0: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Transfer the motion since the first driving frame onto the source's keypoints (relative mode).

    kp = kp_src + (kp_drv - kp_drv0) and J = (J_drv J_drv0^-1) J_src, as the published method does
    (without its optional movement-scale adaptation).
    """
    kp = kp_src + (kp_drv - kp_drv0)
    jd = jac_drv.float() @ inv2x2(jac_drv0.float())
    return kp, (jd @ jac_src.float()).to(jac_src.dtype)


def affine_grid_from_points(src: torch.Tensor, dst: torch.Tensor, h: int, w: int) -> torch.Tensor:
    """Backward grid of the least-squares affine map taking `dst` points (B, N, 2) onto `src` points.

    Warping the source image with it moves the source's landmarks onto the driving landmarks: the
    oracle affine baseline (`affine_oracle`), given true landmarks no method has at inference.
    """
    ones = torch.ones_like(dst[..., :1])
    a = torch.cat([dst, ones], -1)  # (B, N, 3)
    m = torch.linalg.lstsq(a.float(), src.float()).solution  # (B, 3, 2)
    grid = make_grid(h, w, src.device)
    g = torch.cat([grid, torch.ones_like(grid[..., :1])], -1)  # (h, w, 3)
    return torch.einsum("hwi,bij->bhwj", g, m)


def transport_points(grid: torch.Tensor, points: torch.Tensor, size: int) -> torch.Tensor:
    """Where a backward warp puts source points: (B, N, 2) source -> (B, N, 2) output coordinates.

    The output pixel whose sample position (grid, resized to size x size) lies nearest each point,
    then one Newton step on the grid's local Jacobian for sub-pixel accuracy. Written out because
    no library inverts a sampled flow at a few points; a full inverse warp would be far slower.
    """
    b, n = points.shape[:2]
    g = grid.float().permute(0, 3, 1, 2)
    if g.shape[2:] != (size, size):
        g = F.interpolate(g, size=(size, size), mode="bilinear", align_corners=True)
    flat = g.flatten(2)  # (B, 2, S*S)
    # Exact differences, not the matmul form: TF32 or cancellation could pick the wrong pixel.
    dist = torch.cdist(
        points.float(), flat.transpose(1, 2), compute_mode="donot_use_mm_for_euclid_dist"
    )
    idx = dist.argmin(-1)  # (B, N)
    iy, ix = idx // size, idx % size
    step = 2 / (size - 1)

    def at(yy: torch.Tensor, xx: torch.Tensor) -> torch.Tensor:  # (B, N, 2) grid values
        lin = (yy.clamp(0, size - 1) * size + xx.clamp(0, size - 1))[:, None].expand(b, 2, n)
        return flat.gather(2, lin).transpose(1, 2)

    # Central differences (one-sided at the border) per output pixel: d sample / d output position.
    dx = (at(iy, ix + 1) - at(iy, ix - 1)) / (
        ((ix + 1).clamp(max=size - 1) - (ix - 1).clamp(min=0)).clamp(min=1)[..., None] * step
    )
    dy = (at(iy + 1, ix) - at(iy - 1, ix)) / (
        ((iy + 1).clamp(max=size - 1) - (iy - 1).clamp(min=0)).clamp(min=1)[..., None] * step
    )
    jac = torch.stack([dx, dy], -1)  # (B, N, 2, 2): columns are d/dx, d/dy
    delta = (inv2x2(jac) @ (points.float() - at(iy, ix))[..., None])[..., 0]
    base = torch.stack([ix, iy], -1).float() * step - 1
    return base + delta.clamp(-step, step)  # stay within the pixel's neighbourhood


def affine_grid(m: torch.Tensor, h: int, w: int) -> torch.Tensor:
    """Backward grid (B, h, w, 2) of affine maps `m` (B, 2, 3): output (x, y) samples m @ (x, y, 1)."""
    g = make_grid(h, w, m.device)
    return torch.einsum("hwj,bij->bhwi", torch.cat([g, torch.ones_like(g[..., :1])], -1), m.float())


def _align_level(
    src: torch.Tensor, drv: torch.Tensor, m: torch.Tensor, lam: torch.Tensor, iters: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """`iters` damped Gauss-Newton steps of `estimate_affine` at one resolution; (m, damping)."""
    b, c, h, w = src.shape
    # Source gradients in grid units (d/dx, d/dy of [-1, 1] coordinates), sampled with it.
    gx, gy = torch.zeros_like(src), torch.zeros_like(src)
    gx[..., 1:-1] = (src[..., 2:] - src[..., :-2]) * (w - 1) / 4
    gy[..., 1:-1, :] = (src[..., 2:, :] - src[..., :-2, :]) * (h - 1) / 4
    stack = torch.cat([src, gx, gy], 1)
    target = drv.flatten(2)
    grid = make_grid(h, w, src.device)
    xy1 = torch.cat([grid, torch.ones_like(grid[..., :1])], -1).reshape(1, 1, h * w, 3)

    def sample(mm: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        out = F.grid_sample(
            stack, affine_grid(mm, h, w), padding_mode="border", align_corners=True
        ).flatten(2)
        r = out[:, :c] - target
        return r, out[:, c:], r.square().mean((1, 2))

    r, grads, err = sample(m)
    for _ in range(iters):
        dx, dy = grads[:, :c, :, None], grads[:, c:, :, None]
        jac = torch.cat([dx * xy1, dy * xy1], -1).reshape(b, -1, 6)  # d residual / d m
        hess = jac.transpose(1, 2) @ jac
        g = jac.transpose(1, 2) @ r.reshape(b, -1, 1)
        damp = torch.diag_embed(hess.diagonal(dim1=1, dim2=2) * lam[:, None] + 1e-9)
        cand = m + torch.linalg.solve(hess + damp, -g).view(b, 2, 3)
        r_new, grads_new, err_new = sample(cand)
        ok = err_new < err  # per pair: keep the step and trust the model more, or damp harder
        m = torch.where(ok[:, None, None], cand, m)
        r = torch.where(ok[:, None, None], r_new, r)
        grads = torch.where(ok[:, None, None], grads_new, grads)
        err = torch.where(ok, err_new, err)
        lam = torch.where(ok, lam * 0.3, lam * 10).clamp(1e-6, 1e4)
    return m, lam


def estimate_affine(
    source: torch.Tensor,
    driving: torch.Tensor,
    scales: tuple[float, ...] = (1 / 16, 1 / 8, 1 / 4, 1 / 2),
    iters: int = 10,
) -> torch.Tensor:
    """The global affine map (B, 2, 3) that best warps `source` onto `driving`, from the images alone.

    Least-squares image alignment (Lucas-Kanade, forward additive, Levenberg-Marquardt damping per
    pair), coarse to fine over anti-aliased downscales (at least 8 px a side), batched on the
    images' device; on held-out rendered pairs it lands where OpenCV's ECC (`findTransformECC`,
    MOTION_AFFINE) does, in a few batched kernels instead of a host loop. Unlike
    `affine_grid_from_points` it sees only what a model sees at inference: the two frames. Every
    pixel counts, so a static background pulls the fit towards the identity. The result is
    `affine_grid`'s input; the identity for identical frames.
    """
    b, _, h0, w0 = source.shape
    m = torch.eye(2, 3, device=source.device).repeat(b, 1, 1)
    lam = torch.full((b,), 1e-3, device=source.device)
    for s in scales:
        size = (max(8, round(h0 * s)), max(8, round(w0 * s)))
        src, drv = (
            F.interpolate(
                x.float(), size=size, mode="bilinear", antialias=True, align_corners=False
            )
            for x in (source, driving)
        )
        m, lam = _align_level(src, drv, m, lam, iters)
    return m
