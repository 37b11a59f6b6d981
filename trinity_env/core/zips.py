"""The one door every zip a user may share is opened through: its size read from the end record before any parse.

Python's ``zipfile`` builds an object of about 480 bytes for every entry of a zip's central directory the moment it
opens one, before a caller can look at a name: a file whose directory lists two million empty members takes some
900 MiB to open, whatever the caller would then refuse. So ``open_zip`` first reads the end-of-central-directory
record (and the zip64 one, where there is one) from the file's last bytes, and refuses a zip whose entry count is
over ``MAX_ZIP_ENTRIES`` or whose central directory is over ``MAX_ZIP_DIRECTORY_BYTES`` (the directory's size
bounds the entries ``zipfile`` reads, whatever count the record claims) in one line naming the file, having parsed
nothing. Torch checkpoints (``.pt``, ``state_dict:``, ``az:``), SB3 zips and the dataset's ``.npz`` shards are zips:
each reader opens them here (``tests/test_zip_entries.py`` checks that no other code opens a zip to read).
"""

from __future__ import annotations

import io
import struct
import zipfile
from typing import IO

from trinity_env.core.errors import TrinityError

MAX_ZIP_ENTRIES = 16_384
"""Most entries a zip may list: a training run's ``latest.pt`` (the network, its optimizer, a pool of past networks,
the replay buffer) holds a few hundred; an SB3 zip six; a dataset shard a handful."""
MAX_ZIP_DIRECTORY_BYTES = 4 << 20
"""Largest central directory: at 46 bytes an entry at least, ``zipfile`` builds at most some 91,000 entries (about
44 MB) from it, whatever the record's count says."""

_END = struct.Struct("<4s4H2LH")  # signature, disk, directory's disk, entries here, entries, size, offset, comment
_LOCATOR = struct.Struct("<4sLQL")  # zip64 locator: signature, disk, the zip64 record's offset, disks
_END64 = struct.Struct("<4sQ2H2L4Q")  # zip64 record: ..., entries here, entries, directory size, offset
_TAIL = _END.size + 0xFFFF  # the end record and the longest comment


def zip_problem(handle: IO[bytes]) -> str | None:
    """Why the zip open in ``handle`` (seekable, binary) lists too much to open (one phrase), or ``None``: its entry
    count and central directory's size read from its end records, as ``zipfile`` finds them. A file with no end
    record is left to ``zipfile`` to refuse. The handle's position is kept."""
    position = handle.tell()
    try:
        size = handle.seek(0, io.SEEK_END)
        start = max(0, size - _TAIL)
        handle.seek(start)
        tail = handle.read(size - start)
    finally:
        handle.seek(position)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + _END.size > len(tail):
        return None
    _, _, _, here, entries, directory, _, _ = _END.unpack_from(tail, at)
    counts, sizes = [here, entries], [directory]
    locator = at - _LOCATOR.size
    if locator >= 0 and tail[locator : locator + 4] == b"PK\x06\x07":
        record = locator - _END64.size
        if record >= 0 and tail[record : record + 4] == b"PK\x06\x06":
            fields = _END64.unpack_from(tail, record)
            counts += fields[6:8]
            sizes.append(fields[8])
    if max(counts) > MAX_ZIP_ENTRIES:
        return (
            f"its central directory lists {max(counts):,} entries, over {MAX_ZIP_ENTRIES:,}: refused before reading it"
        )
    if max(sizes) > MAX_ZIP_DIRECTORY_BYTES:
        return (
            f"its central directory takes {max(sizes):,} bytes, over {MAX_ZIP_DIRECTORY_BYTES >> 20} MiB: refused "
            "before reading it"
        )
    return None


def open_zip(source: IO[bytes] | bytes, name: str, error: type[Exception] = TrinityError) -> zipfile.ZipFile:
    """``zipfile.ZipFile`` for reading ``source`` (an open seekable binary file, which the caller closes, or the
    zip's bytes) once ``zip_problem`` finds nothing; else ``error`` in one line naming ``name``. ``zipfile``'s own
    errors (not a zip, a damaged directory) pass through for the caller to word."""
    handle = io.BytesIO(source) if isinstance(source, bytes) else source
    problem = zip_problem(handle)
    if problem is not None:
        raise error(f"{name}: {problem}")
    return zipfile.ZipFile(handle)


__all__ = ["MAX_ZIP_DIRECTORY_BYTES", "MAX_ZIP_ENTRIES", "open_zip", "zip_problem"]
