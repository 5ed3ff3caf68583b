"""GPU indices as the user names them (``--gpu-ids 0,1`` of run, probe and monitor, the launch
dialog's GPUs field, a suite's ``gpu_ids = [0, 1]``): the one parser and the one wording of what
is wrong with them, standard library only, so the CLI, the TUI, the jobs and telemetry all read it.

Every problem here is bad input, exit 2: a value that is not an index, one named twice, a GPU the
machine does not offer, and GPU work asked of a machine with no GPU at all (docs/reliability.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from zbench.errors import ZbenchError
from zbench.textfit import gpu_list

OPTION = "--gpu-ids"


class GpuRequestError(ZbenchError, ValueError):
    """GPUs asked for that cannot be had: the message names where they were asked for."""

    exit_code = 2


def parse_gpu_ids(text: str | None, option: str = OPTION, sep: str = ",") -> tuple[int, ...] | None:
    """``"0,1"`` -> ``(0, 1)`` in the order given; ``None`` -> ``None`` (the command's default
    GPUs). Anything else raises :class:`GpuRequestError`: a part that is not a decimal number
    (``x``, ``-1``, ``+1``, ``1_0``, an empty part; a blank value too, as ``--gpu-ids "$UNSET"``
    must not read as every GPU) and a GPU named twice. ``sep``: what joins the indices (``+`` in
    ``--nodes HOST:0+1``, where a comma already joins the hosts)."""
    if text is None:
        return None
    return _checked(text.split(sep), option, sep.join("01"), _text_index)


def gpu_ids_from(value: object, option: str = "gpu_ids") -> tuple[int, ...]:
    """A suite's ``gpu_ids = [0, 1]`` as a tuple, checked as :func:`parse_gpu_ids` checks text; a
    TOML string (``["0"]``) is the wrong kind of value, as ``steps = "10"`` is."""
    example = "[0, 1]"
    if not isinstance(value, list):
        raise GpuRequestError(f"{option}: expected a list of GPU indices, e.g. {example}")
    if not value:
        raise GpuRequestError(f"{option}: names no GPU (expected e.g. {example})")
    return _checked(value, option, example, _int_index)


def _checked(
    parts: Sequence[object], option: str, example: str, index: Callable[[object], int | None]
) -> tuple[int, ...]:
    ids: list[int] = []
    for part in parts:
        i = index(part)
        if i is None:
            shown = part.strip() if isinstance(part, str) else part
            raise GpuRequestError(
                f"{option}: {shown!r} is not a GPU index (expected e.g. {example})"
            )
        if i in ids:
            raise GpuRequestError(f"{option}: GPU {i} is named twice")
        ids.append(i)
    return tuple(ids)


def _text_index(part: object) -> int | None:
    text = str(part).strip()
    return int(text) if text.isdecimal() else None  # isdecimal: a full-width ０ too, not ²


def _int_index(part: object) -> int | None:
    return part if isinstance(part, int) and not isinstance(part, bool) and part >= 0 else None


def check_offered(
    ids: Iterable[int] | None,
    offered: Sequence[int],
    option: str = OPTION,
    why: str = "",
    machine: str = "this machine",
) -> None:
    """Raise :class:`GpuRequestError` naming every one of ``ids`` that ``offered`` lacks (a machine
    with no GPU lacks them all); ``why``: why the machine offers none, when it offers none;
    ``machine``: whose GPUs they are (a replay's are the traced machine's)."""
    missing = [i for i in ids or () if i not in offered]
    if missing:
        reason = f": {why}" if why and not offered else ""
        raise GpuRequestError(
            f"{option}: no {gpu_list(missing)} on {machine} (it offers {gpu_list(offered)}{reason})"
        )


def no_gpu(what_to_do: str, why: str = "") -> str:
    """The one line for GPU work asked of a machine that offers no GPU (no ids named); ``why``:
    why it offers none, when known (no driver, ``CUDA_VISIBLE_DEVICES=-1``)."""
    return f"no GPU on this machine{f' ({why})' if why else ''}: {what_to_do}"
