"""Writing the files a user names: whole-or-nothing for regular files, write-through for devices.

Two rules hold for every output path (an export, a report, an answers file):

* Something that is not a regular file -- ``/dev/null``, ``/dev/stdout``, a FIFO, a socket --
  is written through, never replaced: renaming a temporary file over a device node would put
  a regular file where the system's device was.
* A symlink is followed on purpose: the file it points to is replaced, the link stays a link.

An append-only JSONL file (``ask --questions --out``, bench predictions) can end in a line cut
short by a full disk or a kill; ``open_jsonl_for_append`` cuts that torn tail off before new
lines are added, so a resumed run never glues an answer onto half a line.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from t2rag.errors import InputError


def is_special(path: str | Path) -> bool:
    """Whether ``path`` exists and is not a regular file or a directory (a device, FIFO, socket)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path``: a regular file is replaced whole (temporary file + rename in
    its folder, so a crash leaves the old file or the new one), a special file is written
    through, a symlink's target is the file replaced. Errors become one-line InputErrors."""
    p = Path(path)
    try:
        if is_special(p):
            with open(p, "w", encoding="utf-8") as f:
                f.write(text)
            return
        target = Path(os.path.realpath(p)) if p.is_symlink() else p
        if target.is_dir():
            raise InputError(f"cannot write {p}: it is a directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as e:
        raise InputError(f"cannot write {p}: {e.strerror or e}") from None


def repair_torn_tail(path: Path) -> bool:
    """Cut a last line that has no newline (a write cut short) off a regular file; True if cut."""
    if is_special(path) or not path.is_file():
        return False
    with open(path, "rb+") as f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return False
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return False
        keep = 0
        pos = size
        while pos > 0:  # find the last newline, reading backwards in blocks
            step = min(65536, pos)
            pos -= step
            f.seek(pos)
            block = f.read(step)
            nl = block.rfind(b"\n")
            if nl >= 0:
                keep = pos + nl + 1
                break
        f.truncate(keep)
        f.flush()
        os.fsync(f.fileno())
    return True


def jsonl_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The readable object rows of a JSONL file (none for a missing or special file)."""
    if is_special(path) or not path.is_file():
        return
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict):
                yield row


def open_jsonl_for_append(path: Path) -> IO[str]:
    """Open a JSONL file for appending after cutting off a torn last line (see the module)."""
    if not is_special(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        repair_torn_tail(path)
    return open(path, "a", encoding="utf-8")


def append_line(f: IO[str], row: dict[str, Any]) -> None:
    """Append one JSON row and make it durable before the caller counts it as written."""
    f.write(json.dumps(row, ensure_ascii=False) + "\n")
    f.flush()
    try:
        os.fsync(f.fileno())
    except OSError:  # a pipe or terminal cannot be synced; its bytes are already passed on
        pass
