"""Files that a crash never leaves half-written, and output folders checked before a run.

Every file contactlab rewrites during a run (checkpoints, VTK frames and ``.pvd`` collections) is
written to a temporary file next to it, ``.<name>.<pid>.tmp``, flushed to disk and renamed over
the target (an atomic rename on POSIX file systems): at any moment, a reader sees either the old
complete file or the new complete one.  A process killed while writing leaves only its temporary
file, which the next writer in that folder removes (:func:`remove_stale_temporaries`; temporaries
of a process that is still alive are left alone).
"""
from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from ..errors import OutputError

__all__ = ["atomic_write", "atomic_write_bytes", "ensure_writable_folder", "remove_stale_temporaries",
           "temporary_name"]

_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.tmp$")
#: the file :func:`ensure_writable_folder` writes and removes (left behind only by a kill)
_PROBE = "contactlab-write-test"


def temporary_name(path: Path) -> Path:
    """The temporary file this process writes ``path`` through."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


@contextlib.contextmanager
def atomic_write(path: Path) -> Iterator[BinaryIO]:
    """Open a temporary file for writing ``path``; on leaving the block without an error it is
    flushed, synced and renamed over ``path``; on an error it is removed and ``path`` is untouched.
    A failure to write raises :class:`OutputError` naming ``path``."""
    path = Path(path)
    tmp = temporary_name(path)
    try:
        with open(tmp, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        raise OutputError(f"cannot write {str(path)!r}: {exc.strerror or exc} (the previous version, if any, is "
                          f"left as it was)") from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_write`)."""
    with atomic_write(path) as f:
        f.write(data)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a process of another user holds that pid
        return True
    return True


def remove_stale_temporaries(folder: Path, keep: Callable[[str], bool] = lambda name: True) -> list[Path]:
    """Remove the temporary files left in ``folder`` by writers that died (killed while writing);
    ``keep(target_name)`` selects which targets' temporaries to consider (the probe files of
    :func:`ensure_writable_folder` always are).  Returns what it removed."""
    removed = []
    folder = Path(folder)
    if not folder.is_dir():
        return removed
    for entry in folder.iterdir():
        m = _TEMPORARY.match(entry.name)
        if m and (m.group("name") == _PROBE or keep(m.group("name"))) and not _alive(int(m.group("pid"))):
            with contextlib.suppress(FileNotFoundError):
                entry.unlink()
                removed.append(entry)
    return removed


def ensure_writable_folder(folder: Path, what: str = "output folder") -> bool:
    """Create ``folder`` (and its parents) if needed and check that a file can be written in it,
    so that a run reports an unusable folder before it starts, not at its first output.  Returns
    whether the folder was created here.  Raises :class:`OutputError` naming the folder."""
    folder = Path(folder)
    created = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputError(f"cannot use {what} {str(folder)!r}: it exists and is a file, not a folder") from None
    except NotADirectoryError:
        blocker = next((p for p in reversed(folder.parents) if p.exists() and not p.is_dir()), None)
        where = f" ({str(blocker)!r} is a file)" if blocker is not None else ""
        raise OutputError(f"cannot create {what} {str(folder)!r}: a part of the path is a file, not a "
                          f"folder{where}") from None
    except OSError as exc:
        raise OutputError(f"cannot create {what} {str(folder)!r}: {exc.strerror or exc}") from None
    probe = folder / f".{_PROBE}.{os.getpid()}.tmp"
    try:
        with open(probe, "wb") as f:
            f.write(b"contactlab")
    except OSError as exc:
        raise OutputError(f"cannot write in {what} {str(folder)!r}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):
            probe.unlink()
    return created
