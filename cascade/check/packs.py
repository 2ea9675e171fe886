"""What git's packs say about how two versions of a file begin, read without reading either.

A pack stores most versions as a *delta* against another object: instructions that copy byte
ranges of the base and insert new bytes. A delta whose leading instructions copy the base
from its first byte on, range after range, proves that the two texts begin with those bytes:
for a ledger that only grew, the proof of an append (history.py) that costs what was
appended, where hashing the old text again (appendonly.extends) costs its whole size.

The proof is as strict as the hash, and trusts the object store as far as reading a blob
does (``git cat-file`` does not re-hash either). Anything not understood here -- a loose
object, an alternate object store, an index version other than 2, an object stored whole, a
base that is not the other version -- proves nothing, and the walk hashes as before.
"""
from __future__ import annotations

import mmap
import os
import zlib
from pathlib import Path
from typing import Self

from msgspec import Struct
from msgspec.structs import replace

from cascade.base.gitio import git

_OFS_DELTA, _REF_DELTA = 6, 7
_IDX_MAGIC = b"\xfftOc"
_ELSEWHERE = ("GIT_DIR", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY")  # set: ask git
_HEAD = 4096  # bytes of a delta's instructions read: copies of ~32 MB, at 8 bytes a copy


class Delta(Struct, frozen=True):
    """How a blob is stored: as a delta of ``base`` (None: an object not located here), of
    which its first ``common`` bytes are a copy; the sizes the delta states."""

    base: str | None
    common: int
    base_size: int
    size: int


class _Pack(Struct, frozen=True):
    index: mmap.mmap
    data: mmap.mmap
    count: int


class Packs:
    """The repository's packs, opened (memory-mapped) for the walk: ``with Packs(...)``."""

    def __init__(self, root: Path, id_length: int) -> None:
        self._id_bytes = id_length // 2
        self._packs: list[_Pack] = []
        self._at: dict[tuple[int, int], str] = {}  # (pack, offset) -> the blob located there
        self._where: dict[str, tuple[int, int] | None] = {}
        # blob -> (its base: (pack, offset) or the base's id; the delta, its base not named)
        self._deltas: dict[str, tuple[tuple[int, int] | str, Delta] | None] = {}
        folder = _pack_folder(root)
        for index in sorted(folder.glob("pack-*.idx")) if folder.is_dir() else []:
            self._open(index)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        for pack in self._packs:
            pack.index.close()
            pack.data.close()
        self._packs = []

    def _open(self, index: Path) -> None:
        try:
            with open(index, "rb") as f_index, open(index.with_suffix(".pack"), "rb") as f_data:
                idx = mmap.mmap(f_index.fileno(), 0, access=mmap.ACCESS_READ)
                data = mmap.mmap(f_data.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return  # unreadable, or empty: its objects are hashed
        if idx[:8] != _IDX_MAGIC + b"\0\0\0\2" or len(idx) < 8 + 1024:
            idx.close()
            data.close()
            return
        self._packs.append(_Pack(idx, data, _u32(idx, 8 + 4 * 255)))

    def delta(self, blob: str) -> Delta | None:
        """How ``blob`` is stored, when it is a delta in a pack; else None."""
        if blob not in self._deltas:
            self._deltas[blob] = self._read(blob)
        found = self._deltas[blob]
        if found is None:
            return None
        base, stored = found  # a base located since is named now
        return replace(stored, base=base if isinstance(base, str) else self._at.get(base))

    def locate(self, blob: str) -> tuple[int, int] | None:
        """Where ``blob`` is, noted so that a delta against it names it as its base."""
        if blob in self._where:
            return self._where[blob]
        self._where[blob] = found = self._find(blob)
        if found is not None:
            self._at[found] = blob
        return found

    def _find(self, blob: str) -> tuple[int, int] | None:
        try:
            raw = bytes.fromhex(blob)
        except ValueError:
            return None
        width = self._id_bytes
        if len(raw) != width:
            return None
        for number, pack in enumerate(self._packs):
            idx = pack.index
            lo = _u32(idx, 8 + 4 * (raw[0] - 1)) if raw[0] else 0
            hi = _u32(idx, 8 + 4 * raw[0])
            names = 8 + 1024
            while lo < hi:
                mid = (lo + hi) // 2
                name = idx[names + mid * width:names + (mid + 1) * width]
                if name < raw:
                    lo = mid + 1
                elif name > raw:
                    hi = mid
                else:
                    return number, _offset(idx, pack.count, width, mid)
        return None

    def _read(self, blob: str) -> tuple[tuple[int, int] | str, Delta] | None:
        found = self.locate(blob)
        if found is None:
            return None
        number, offset = found
        data = self._packs[number].data
        try:
            byte = data[offset]
            kind, pos = (byte >> 4) & 7, offset + 1
            while byte & 0x80:
                byte, pos = data[pos], pos + 1
            if kind == _OFS_DELTA:
                byte, pos = data[pos], pos + 1
                back = byte & 0x7F
                while byte & 0x80:
                    byte, pos = data[pos], pos + 1
                    back = ((back + 1) << 7) | (byte & 0x7F)
                base: tuple[int, int] | str = (number, offset - back)
            elif kind == _REF_DELTA:
                base = data[pos:pos + self._id_bytes].hex()
                pos += self._id_bytes
            else:
                return None  # stored whole
            head = zlib.decompressobj().decompress(data[pos:pos + 2 * _HEAD], _HEAD)
        except (IndexError, zlib.error):
            return None
        stored = _leading_copy(head)
        return None if stored is None else (base, stored)


def _pack_folder(root: Path) -> Path:
    """Where the repository keeps its packs: ``.git/objects/pack`` unless the environment or
    a ``.git`` file (a linked worktree, a submodule) says otherwise, when git is asked."""
    folder = Path(root, ".git", "objects", "pack")
    if folder.is_dir() and not any(os.environ.get(name) for name in _ELSEWHERE):
        return folder
    return Path(root, git(root, "rev-parse", "--git-path", "objects/pack")
                .decode("utf-8", "surrogateescape").strip())


def _leading_copy(delta: bytes) -> Delta | None:
    """The bytes the delta's leading instructions copy from the base's start, in order."""
    try:
        base_size, i = _varint(delta, 0)
        size, i = _varint(delta, i)
    except IndexError:
        return None
    common = 0
    while i < len(delta) and common < size:
        cmd = delta[i]
        if not cmd & 0x80:
            break  # an insertion (or the reserved 0): the copy from the start ends
        at = length = 0
        j = i + 1
        try:
            for bit in range(4):
                if cmd & (1 << bit):
                    at |= delta[j] << (8 * bit)
                    j += 1
            for bit in range(3):
                if cmd & (0x10 << bit):
                    length |= delta[j] << (8 * bit)
                    j += 1
        except IndexError:
            break  # the head read ends inside this instruction
        if at != common:
            break
        common += length or 0x10000
        i = j
    return Delta(None, min(common, base_size, size), base_size, size)


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, i


def _u32(buf: mmap.mmap, at: int) -> int:
    return int.from_bytes(buf[at:at + 4], "big")


def _offset(idx: mmap.mmap, count: int, width: int, k: int) -> int:
    """The pack offset of the k-th object of a version 2 index."""
    table = 8 + 1024 + count * (width + 4)  # after the names and their CRCs
    value = _u32(idx, table + 4 * k)
    if value & 0x80000000:  # in the table of 8-byte offsets that follows
        large = table + 4 * count + 8 * (value & 0x7FFFFFFF)
        value = int.from_bytes(idx[large:large + 8], "big")
    return value
