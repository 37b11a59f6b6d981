"""Record files (``trinity_env.core.records``): headers checked on resume, a cut last line dropped with one
warning, any other bad line refused naming file and line, strict field types, one writer at a time, a
failed append that leaves the file on a whole line, a rebuild that never destroys the old file first."""

from __future__ import annotations

import errno
import json
import os

import pytest

from trinity_env.core import records
from trinity_env.core.errors import PositionError, WriteError

HEADER = {"format": "test-records", "agent": "greedy", "seed": 0}
FIELDS = {"game": records.whole(0), "value": records.one_of(-1, 0, 1)}


def check(record: object) -> str | None:
    return records.problem(record, FIELDS)


def appending(path, header=HEADER):
    return records.appending(path, header, check, PositionError, what="test record", kind="test file")


def lines(*items: object) -> str:
    return "".join(json.dumps(item) + "\n" for item in items)


def test_a_new_file_gets_its_header_and_each_record_is_a_line(tmp_path):
    path = tmp_path / "set.jsonl"
    with appending(path) as (out, contents):
        assert contents.records == [] and contents.header == HEADER
        out.append({"game": 0, "value": 1})
        out.append({"game": 1, "value": -1})
    assert path.read_text() == lines(HEADER, {"game": 0, "value": 1}, {"game": 1, "value": -1})
    with appending(path) as (out, contents):
        assert contents.records == [(2, {"game": 0, "value": 1}), (3, {"game": 1, "value": -1})]


@pytest.mark.parametrize("cut", ['{"game": 2, "val', '{"game": 2, "value": 1', "{"])
def test_a_cut_last_line_is_dropped_with_one_warning_and_cut_off_before_the_next_record(tmp_path, capsys, cut):
    path = tmp_path / "set.jsonl"
    path.write_text(lines(HEADER, {"game": 0, "value": 1}) + cut)
    with appending(path) as (out, contents):
        assert [record for _, record in contents.records] == [{"game": 0, "value": 1}]
        out.append({"game": 2, "value": 0})
    assert path.read_text() == lines(HEADER, {"game": 0, "value": 1}, {"game": 2, "value": 0})
    err = capsys.readouterr().err
    assert err == f"warning: {path}: its last line was cut short (written in part when a job stopped): dropped\n"


def test_a_whole_last_record_without_its_newline_is_kept(tmp_path, capsys):
    path = tmp_path / "set.jsonl"
    path.write_text(lines(HEADER) + json.dumps({"game": 0, "value": 1}))
    with appending(path) as (out, contents):
        assert len(contents.records) == 1
        out.append({"game": 1, "value": 1})
    assert path.read_text() == lines(HEADER, {"game": 0, "value": 1}, {"game": 1, "value": 1})
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "body, message",
    [
        ('{"game": 0, "val\n{"game": 1, "value": 1}\n', r"line 2: not a test record \(the line is not valid JSON"),
        ('{"game": 0, "value": "1"}\n', r"line 2: not a test record \(value must be one of -1, 0, 1, got '1'\)$"),
        ('{"game": "0", "value": 1}\n', r"line 2: not a test record \(game must be a whole number >= 0, got '0'\)"),
        ('{"game": true, "value": 1}\n', r"line 2: not a test record \(game must be a whole number >= 0, got True"),
        ('{"game": 1.0, "value": 1}\n', r"line 2: not a test record \(game must be a whole number >= 0, got 1.0"),
        ('{"game": 0}\n', r"line 2: not a test record \(no value\)"),
        ("[1, 2]\n", r"line 2: not a test record \(not a JSON object\)"),
        ('{"game": 0, "value": 1}\n{"format": "test-records"}\n', r"line 3: a header \(format 'test-records'\)"),
        ('{"game": 0, "value": "1"}', r"line 2: not a test record \(value must be"),  # valid JSON: not a cut line
    ],
)
def test_any_other_bad_line_is_one_line_naming_the_file_and_the_line(tmp_path, body, message):
    path = tmp_path / "set.jsonl"
    path.write_text(lines(HEADER) + body)
    before = path.read_bytes()
    with pytest.raises(PositionError, match=rf"^{path}, {message}") as refused, appending(path):
        pass
    assert "\n" not in str(refused.value)
    assert path.read_bytes() == before
    with pytest.raises(PositionError, match=message):
        records.read(path, check, PositionError, what="test record", header="test-records")


def test_a_file_without_the_header_or_with_another_build_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "set.jsonl"
    path.write_text(lines({"game": 0, "value": 1}))
    with (
        pytest.raises(PositionError, match=r"line 1: not a test file \(its first line must be a header"),
        appending(path),
    ):
        pass
    path.write_text(lines(HEADER, {"game": 0, "value": 1}) + '{"game": 1, "v')  # a cut line too: not cut off
    before = path.read_bytes()
    message = r"was built with agent greedy, seed 0, not agent greedy, seed 1: give another file"
    with pytest.raises(PositionError, match=message), appending(path, HEADER | {"seed": 1}):
        pass
    assert path.read_bytes() == before


def test_a_reader_may_take_one_of_several_formats_and_every_file_starts_with_one():
    def read(text: str) -> records.Contents:
        return records.parse(text, "f.jsonl", check, PositionError, kind="test file", header=("test-records", "other"))

    assert read(lines(HEADER, {"game": 0, "value": 1})).header == HEADER
    assert read(lines({"format": "other"}, {"game": 0, "value": 1})).records == [(2, {"game": 0, "value": 1})]
    message = (
        r"^f\.jsonl, line 2: not a test file \(its first line must be a header with format 'test-records' or 'other'\)$"
    )
    with pytest.raises(PositionError, match=message):  # a file from before headers: refused, not read headless
        read("\n" + lines({"game": 0, "value": 1}))
    with pytest.raises(PositionError, match="its first line must be a header with format 'test-records' or 'other'"):
        read(lines({"format": "third"}, {"game": 0, "value": 1}))


def test_a_second_writer_is_refused_while_the_first_holds_the_lock(tmp_path):
    pytest.importorskip("fcntl")
    path = tmp_path / "set.jsonl"
    with appending(path):
        with pytest.raises(PositionError, match="is being written by another job"), appending(path):
            pass
        first, second = records.rebuilding(path, HEADER, PositionError), records.rebuilding(path, HEADER, PositionError)
        with pytest.raises(PositionError, match=r"set\.jsonl\.partial is being written by another job"), first, second:
            pass
    with appending(path):  # released
        pass


def full_disk_after(monkeypatch, writes: int) -> None:
    """``records.write`` fails with ENOSPC after ``writes`` calls, having written half its bytes (as a disk does)."""
    calls = {"n": 0}
    original = records.write

    def write(descriptor: int, data: memoryview) -> int:
        calls["n"] += 1
        if calls["n"] > writes:
            original(descriptor, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return original(descriptor, data)

    monkeypatch.setattr(records, "write", write)


def test_a_full_disk_is_one_line_naming_the_file_and_leaves_it_on_a_whole_line(tmp_path, monkeypatch):
    path = tmp_path / "set.jsonl"
    full_disk_after(monkeypatch, 2)  # the header and one record fit
    with pytest.raises(WriteError) as refused, appending(path) as (out, _):
        out.append({"game": 0, "value": 1})
        out.append({"game": 1, "value": 1})
    assert str(refused.value).startswith(f"cannot write {path}: No space left on device (the records before")
    assert "\n" not in str(refused.value)
    assert path.read_text() == lines(HEADER, {"game": 0, "value": 1})
    monkeypatch.undo()
    with appending(path) as (out, contents):  # room again: the job goes on
        assert len(contents.records) == 1
        out.append({"game": 1, "value": 1})
    assert path.read_text() == lines(HEADER, {"game": 0, "value": 1}, {"game": 1, "value": 1})


@pytest.mark.parametrize("stop", [KeyboardInterrupt, WriteError])
def test_a_stopped_rebuild_leaves_the_old_file_whole_and_its_records_beside_it(tmp_path, stop):
    path = tmp_path / "puzzles.jsonl"
    path.write_text(lines({"game": 0, "value": 1}, {"game": 1, "value": 1}))
    before = path.read_bytes()
    with pytest.raises(stop), records.rebuilding(path, HEADER, PositionError) as out:
        assert out.existed and path.read_bytes() == before  # nothing truncated before the replacement exists
        out.append({"game": 5, "value": 0})
        raise stop("stopped")
    assert path.read_bytes() == before
    assert (tmp_path / "puzzles.jsonl.partial").read_text() == lines(HEADER, {"game": 5, "value": 0})
    with records.rebuilding(path, HEADER, PositionError) as out:  # a complete rebuild replaces it
        out.append({"game": 6, "value": 0})
    assert path.read_text() == lines(HEADER, {"game": 6, "value": 0})
    assert not (tmp_path / "puzzles.jsonl.partial").exists()


def test_a_stopped_build_with_no_old_file_keeps_what_it_wrote(tmp_path):
    path = tmp_path / "new.jsonl"
    with pytest.raises(KeyboardInterrupt), records.rebuilding(path, HEADER, PositionError) as out:
        assert not out.existed
        out.append({"game": 0, "value": 1})
        raise KeyboardInterrupt
    assert path.read_text() == lines(HEADER, {"game": 0, "value": 1})
    assert not (tmp_path / "new.jsonl.partial").exists()


def test_links_folders_and_pipes_are_refused_before_anything_is_written(tmp_path):
    target = tmp_path / "elsewhere.jsonl"
    target.write_text("mine\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    with pytest.raises(PositionError, match="is a symbolic link"), appending(link):
        pass
    with pytest.raises(PositionError, match="is a symbolic link"), records.rebuilding(link, HEADER, PositionError):
        pass
    (tmp_path / "planted.jsonl.partial").symlink_to(target)
    planted = records.rebuilding(tmp_path / "planted.jsonl", HEADER, PositionError)
    with pytest.raises(PositionError, match="is a symbolic link"), planted:
        pass
    assert target.read_text() == "mine\n"
    with pytest.raises(PositionError, match="is a folder"), appending(tmp_path):
        pass
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "pipe.jsonl")
        with pytest.raises(PositionError, match="is a named pipe"), appending(tmp_path / "pipe.jsonl"):
            pass
