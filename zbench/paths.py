"""Where zbench keeps its data: ``$ZBENCH_HOME`` or the user's data directory."""

from __future__ import annotations

import errno
import fcntl
import os
import secrets
import shutil
import time
from pathlib import Path
from typing import IO, Any

from zbench.errors import ZbenchError

ENV_HOME = "ZBENCH_HOME"
ENV_DB = "ZBENCH_DB"
DIR_MODE = 0o700  # benchmarks' configs, logs and host details are nobody else's business
CACHE_LOCK = "cache.lock"  # in the data folder beside the cache: clearing the cache keeps it
CACHE_WAIT_S = 60.0  # how long a runner waits for a clear to finish before it goes on anyway


class DataDirError(ZbenchError):
    """The data directory (or a folder in it) cannot be created or written (exit status 2)."""


def make_dir(path: Path) -> Path:
    """``path`` created if missing, each missing folder owner-only (not just the last), or a
    :class:`DataDirError` in one line that names the folder at fault."""
    for folder in [*reversed(path.parents), path]:
        if folder.is_dir():
            continue
        try:
            folder.mkdir(mode=DIR_MODE, exist_ok=True)
        except FileExistsError:
            raise DataDirError(f"{folder}: exists and is not a folder") from None
        except OSError as exc:
            why = exc.strerror or exc
            raise DataDirError(f"{folder}: cannot create the folder ({why})") from None
    return path


def _home_path() -> Path:
    env = os.environ.get(ENV_HOME)
    if env:
        return Path(env).expanduser().absolute()
    from platformdirs import user_data_dir

    return Path(user_data_dir("zbench", appauthor=False)).absolute()


def home() -> Path:
    """The data directory (absolute: paths stored in the database must not depend on the working
    directory of whoever stored them), created on first use."""
    return make_dir(_home_path())


class CacheBusy(ZbenchError):
    """``zbench cache clear`` while a process uses the cache (exit status 2)."""


def cache_dir(create: bool = True) -> Path:
    """Compiled kernels and measured choices that later runs reuse (inductor's and Triton's caches,
    ``--preset max``'s batch search): ``home()/cache``, safe to delete. ``create=False`` only
    says where it is (the doctor creates nothing)."""
    path = _home_path() / "cache"
    return make_dir(path) if create else path


def not_a_folder(path: Path) -> Path | None:
    """The first of ``path``'s folders (its parents from the root, then itself) that is there but
    is not a folder (a file, a dangling link), or None: what ``make_dir`` would refuse, found
    without creating anything. ``is_dir`` alone reads such a path as a folder not made yet."""
    for folder in [*reversed(path.parents), path]:
        if os.path.lexists(folder) and not folder.is_dir():
            return folder
    return None


def cache_usage(base: Path | None = None) -> dict[str, int]:
    """Bytes in the cache (``base``, default :func:`cache_dir`), per entry (a folder counts all
    its files); empty where there is no cache yet. A :class:`DataDirError` where a file stands
    in for the cache or a folder above it (that is no empty cache: nothing can be kept there)."""
    base = base if base is not None else cache_dir()
    out: dict[str, int] = {}
    blocked = not_a_folder(base)
    if blocked is not None:
        raise DataDirError(f"{blocked}: exists and is not a folder")
    if not base.is_dir():
        return out
    for entry in sorted(base.iterdir()):
        size = _bytes_here(entry)
        if os.path.lexists(entry):  # not one a running compiler removed meanwhile
            out[entry.name] = size
    return out


def _bytes_here(path: Path) -> int:
    """Bytes that deleting ``path`` frees: a link is its own few bytes (clear removes the link,
    never what it points at), a folder its files and links, walked without following links.
    A file removed while it is walked (a running job's compiler replaces its temporary files)
    counts nothing."""
    if path.is_symlink() or not path.is_dir():
        return _own_bytes(str(path))
    total = 0
    for folder, _dirs, files in os.walk(path):  # os.walk does not follow links to folders
        total += sum(_own_bytes(os.path.join(folder, name)) for name in files)
        total += sum(
            _own_bytes(os.path.join(folder, d))
            for d in _dirs
            if os.path.islink(os.path.join(folder, d))
        )
    return total


def _own_bytes(path: str) -> int:
    """The size of ``path`` itself (a link's own bytes); 0 for one that is gone."""
    try:
        return os.lstat(path).st_size
    except FileNotFoundError:
        return 0


# Who uses the cache is told by a lock in the data folder, not by a database: jobs of every
# database (`--db`, $ZBENCH_DB) of one data folder share its cache, and a process that holds the
# lock is alive by definition (the kernel drops an flock when its process ends, even by SIGKILL),
# so no pid is read stale or reused. Each process that compiles or searches into the cache (the
# torch runner, runners/torch/tuning.py) holds a shared lock for the rest of its life; a clear
# takes it exclusive, without waiting, and refuses while any is held. A runner that does not use
# the cache (TensorFlow, a demo) holds none and does not stop a clear.
_held_cache: dict[Path, IO[Any]] = {}  # lock file -> its open file, for the process's life


def use_cache() -> Path:
    """:func:`cache_dir`, for a process that reads or writes it (a runner compiling into it): it
    holds the cache's shared lock from now until it ends, so ``zbench cache clear`` refuses. A
    clear under way is waited for (at most ``CACHE_WAIT_S``: a clear stopped with Ctrl-Z must
    not hold a run for ever); a folder where no lock can be taken holds none."""
    base = cache_dir()
    lock = home() / CACHE_LOCK
    if lock in _held_cache:
        return base
    try:
        fh = open_private(lock)
    except OSError:
        return base  # a read-only data folder: no clear can delete anything in it either
    deadline = time.monotonic() + CACHE_WAIT_S
    while True:
        try:
            fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
            break
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EWOULDBLOCK) or time.monotonic() > deadline:
                break  # no locks on this file system, or a clear that never ends: go on
            time.sleep(0.1)
    _held_cache[lock] = fh
    return base


def release_cache() -> None:
    """Give up this process's hold on the cache (:func:`use_cache`): one done with it that goes
    on living, as a test that clears what it compiled."""
    while _held_cache:
        _held_cache.popitem()[1].close()


def clear_cache() -> int:
    """Delete everything in :func:`cache_dir` (the next ``--preset max`` run compiles and
    searches again); the bytes freed. :class:`CacheBusy` while any process holds the cache
    (:func:`use_cache`), whichever database its job is in; nothing is deleted then."""
    try:
        fh: IO[Any] | None = open_private(home() / CACHE_LOCK)
    except OSError:
        fh = None  # a read-only data folder: no runner could make the lock to hold it either
    try:
        if fh is not None:
            _lock_alone(fh)
        freed = sum(cache_usage().values())
        for entry in cache_dir().iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    finally:
        if fh is not None:
            fh.close()
    return freed


def _lock_alone(fh: IO[Any]) -> None:
    """The cache's lock, exclusive, or :class:`CacheBusy` at once where a process holds it."""
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
            raise CacheBusy(
                "a running job uses the cache (its runner may be compiling into it); "
                "clear it when the job ends"
            ) from None
        # any other error: a file system without locks, where no runner could take one either


def db_path(override: str | os.PathLike[str] | None = None) -> Path:
    """The results database: ``override``, else ``$ZBENCH_DB``, else ``home()/zbench.db``
    (absolute, for the same reason as :func:`home`)."""
    if override:
        return Path(override).expanduser().absolute()
    env = os.environ.get(ENV_DB)
    if env:
        return Path(env).expanduser().absolute()
    return home() / "zbench.db"


def jobs_dir(store_id: str | None = None) -> Path:
    """Per-job folders (events, logs). ``store_id`` (the database's own id): job ids belong to
    one database, so two databases in one home get folders of their own and never share one."""
    path = home() / "jobs"
    return make_dir(path / store_id if store_id else path)


def new_job_dir(store_id: str | None, job_id: int) -> Path:
    """A folder of its own for one start of job ``job_id``: ``jobs/<store id>/<job id>-<random>``,
    made here and never before (``mkdir`` fails on one that exists), so no two starts share one,
    not even of two databases with the same store id and job ids (a copied file before it got an
    id of its own, a restored backup)."""
    parent = jobs_dir(store_id)
    while True:
        folder = parent / f"{job_id}-{secrets.token_hex(4)}"
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue
        except OSError as exc:
            raise DataDirError(
                f"{folder}: cannot create the folder ({exc.strerror or exc})"
            ) from None
        return folder


def open_private(path: Path, mode: str = "a+") -> IO[Any]:
    """Open ``path`` (created owner-only when missing) in ``mode``."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | (os.O_APPEND if "a" in mode else 0), 0o600)
    return os.fdopen(fd, mode)


def check_writable(path: Path) -> None:
    """A :class:`DataDirError` unless files can be created in the folder ``path``."""
    make_dir(path)
    if not os.access(path, os.W_OK | os.X_OK):
        raise DataDirError(f"{path}: the folder is not writable")


_IN_PLACE = ("/dev/", "/proc/")  # devices and open files (/dev/stdout, /proc/self/fd/1)


def write_text_replacing(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all: into a new file beside it, renamed over it
    once written, so a write that fails (a full disk) leaves the old file as it was. A device or
    pipe (``/dev/stdout``) is written in place, as is a file in a folder where no new file may be
    made; a link is followed, its target replaced."""
    target = Path(os.path.realpath(path))
    named = (str(Path(path).absolute()), str(target))
    if any(p.startswith(_IN_PLACE) for p in named) or (target.exists() and not target.is_file()):
        Path(path).write_text(text, encoding="utf-8")  # /dev/stdout is the caller's open file
        return
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
    except OSError as exc:
        if exc.errno not in (errno.EACCES, errno.EPERM) or not target.is_file():
            exc.filename = str(path)
            raise
        target.write_text(text, encoding="utf-8")
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        if target.exists():
            shutil.copymode(target, tmp)
        os.replace(tmp, target)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename in (str(tmp), None):
            exc.filename = str(path)  # the name the user gave, not the new file's
        raise
