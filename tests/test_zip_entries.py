"""Every zip a user may share is opened through one door (``trinity_env.core.zips.open_zip``) that reads its entry
count and central directory's size from the end record and refuses an absurd one before ``zipfile`` parses it:
``zipfile`` builds an object of some 480 bytes for every entry when it opens a zip, so a file listing 2 million
empty members once took ~926 MiB to refuse (``.pt``, ``state_dict:``, ``az:``, SB3 zips and dataset shards alike)."""

from __future__ import annotations

import ast
import hashlib
import io
import struct
import zipfile
from pathlib import Path

import pytest

from trinity_env.core.zips import MAX_ZIP_DIRECTORY_BYTES, MAX_ZIP_ENTRIES, open_zip, zip_problem

ROOT = Path(__file__).resolve().parents[1]
OVER = MAX_ZIP_ENTRIES + 1


def crowded_zip(entries: int, zip64: bool = False, claimed: int | None = None) -> bytes:
    """A zip whose central directory lists ``entries`` empty stored members (all the same one-letter name, all
    pointing at one local header), its end record claiming ``claimed`` entries (default: the truth); ``zip64``
    adds the zip64 end records (the count then lives there only)."""
    name = b"a"
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0) + name
    central = struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0, 0, 0, 0, 0, 0) + name
    count = entries if claimed is None else claimed
    directory = central * entries
    tail = b""
    if zip64:
        offset = len(local) + len(directory)
        tail = struct.pack(
            "<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, len(directory), len(local)
        ) + struct.pack("<4sLQL", b"PK\x06\x07", 0, offset, 1)
        count = 0xFFFF
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, len(directory), len(local), 0)
    return local + directory + tail + end


def test_the_door_reads_the_count_and_the_directory_size_from_the_end_record():
    assert zip_problem(io.BytesIO(crowded_zip(10))) is None
    with open_zip(crowded_zip(10), "ten.zip") as archive:
        assert len(archive.infolist()) == 10  # what zipfile sees: the same zip
    assert "lists 16,385 entries, over 16,384" in zip_problem(io.BytesIO(crowded_zip(OVER)))
    assert "lists 100,000 entries" in zip_problem(io.BytesIO(crowded_zip(10, zip64=True, claimed=100_000)))
    # zipfile reads the directory by its size, whatever the count: a record that lies about its count is
    # still refused by the directory's size
    lying = crowded_zip(MAX_ZIP_DIRECTORY_BYTES // 47 + 1, claimed=1)
    assert "central directory takes" in zip_problem(io.BytesIO(lying))
    handle = io.BytesIO(b"not a zip at all")
    handle.seek(3)
    assert zip_problem(handle) is None and handle.tell() == 3  # zipfile words its own refusal; position kept
    with pytest.raises(ValueError, match=r"^crowded\.zip: its central directory lists 16,385 entries"):
        open_zip(crowded_zip(OVER), "crowded.zip", ValueError)


def _readers(tmp_path: Path) -> dict[str, object]:
    """Every reader of a zip a user may hand over, each a call on a crowded file; a new reader belongs here."""
    from trinity_env.agents import make
    from trinity_env.agents.az import load_network
    from trinity_env.agents.loaders.checkpoint import read_torch
    from trinity_env.agents.loaders.sb3 import load_policy
    from trinity_env.agents.networks.ppo_network import load_checkpoint
    from trinity_env.evaluation.solved_positions import read_shard

    data = crowded_zip(OVER)
    for name in ("crowded.pt", "crowded.zip", "shard-00000.npz"):
        (tmp_path / name).write_bytes(data)
    pt, sb3, shard = (str(tmp_path / n) for n in ("crowded.pt", "crowded.zip", "shard-00000.npz"))
    entry = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "positions": 1, "arrays_sha256": ""}
    clean = tmp_path / "clean.zip"  # an SB3 zip whose policy.pth is the crowded zip: the inner reader
    with zipfile.ZipFile(clean, "w") as archive:
        archive.writestr("data", "{}")
        archive.writestr("policy.pth", data)
    return {
        "read_torch": lambda: read_torch(pt),
        "a PPO .pt": lambda: load_checkpoint(pt),
        "az:": lambda: make(f"az:{pt}"),
        "load_network (az)": lambda: load_network(pt),
        "a .pt by path": lambda: make(pt),
        "state_dict:": lambda: make(f"state_dict:{pt}"),
        "an SB3 zip": lambda: load_policy(sb3),
        "an SB3 zip by path": lambda: make(sb3),
        "the policy.pth inside an SB3 zip": lambda: read_torch(data, "policy.pth"),
        "a dataset shard": lambda: read_shard(shard, entry),
    }


def test_every_zip_reader_refuses_an_absurd_entry_count_before_parsing(tmp_path):
    pytest.importorskip("torch")
    for what, read in _readers(tmp_path).items():
        with pytest.raises(ValueError) as refused:
            read()
        message = str(refused.value)
        assert "lists 16,385 entries, over 16,384: refused before reading it" in message, (what, message)
        assert "\n" not in message and ("crowded" in message or "shard-00000" in message or "policy.pth" in message)


def _calls(tree: ast.AST) -> list[str]:
    return [
        ast.unparse(node.func)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name)
    ]


def test_no_code_opens_a_zip_to_read_but_through_the_door():
    """``zipfile.ZipFile`` for reading only in the door; ``np.load`` and ``torch.load`` (which open zips
    themselves) only in modules that open the same bytes through the door first."""
    readers: dict[str, list[str]] = {}
    for path in [*(ROOT / "trinity_env").rglob("*.py"), *(ROOT / "training").rglob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            called = ast.unparse(node.func)
            writes = any(isinstance(a, ast.Constant) and a.value in ("w", "a", "x") for a in node.args[1:2])
            if called.endswith("ZipFile") and not writes and where != "trinity_env/core/zips.py":
                readers.setdefault(where, []).append(f"{called} on line {node.lineno}")
            if called in ("np.load", "numpy.load", "torch.load") and "open_zip" not in _calls(tree):
                readers.setdefault(where, []).append(f"{called} on line {node.lineno} without open_zip")
    assert readers == {}, "open these zips with trinity_env.core.zips.open_zip"


@pytest.mark.e2e  # a 94 MB file and a fresh interpreter each: make test-e2e
@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's clear_refs to reset peak RSS")
def test_two_million_empty_members_are_refused_in_bounded_memory(tmp_path):
    from test_checkpoint_allocation import MEMORY_LIMIT_MB, peak_growth

    data = crowded_zip(2_000_000, zip64=True)
    (tmp_path / "crowded.pt").write_bytes(data)
    (tmp_path / "crowded.zip").write_bytes(data)
    cases = {
        "crowded.pt": "from trinity_env.agents.networks.ppo_network import load_checkpoint as load",
        "crowded.zip": "from trinity_env.agents.loaders.sb3 import load_policy as load",
    }
    for name, setup in cases.items():
        growth, output = peak_growth(tmp_path, f"import torch\n{setup}", f"load({str(tmp_path / name)!r})")
        assert "REFUSED CheckpointError" in output and "lists 2,000,000 entries" in output, output
        assert growth < MEMORY_LIMIT_MB, (name, growth, output)
