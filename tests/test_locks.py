"""``trinity_env.core.locks.locked``: the one file lock (record files, solved openings, the dataset's manifest, a
run folder)."""

from __future__ import annotations

import os
import threading

import pytest

from trinity_env.core import ArgumentError
from trinity_env.core.locks import locked

pytest.importorskip("fcntl")


def test_a_second_holder_is_refused_at_once_in_one_line(tmp_path):
    path = tmp_path / "file"
    path.write_text("the holder\n")
    with locked(path, ArgumentError) as descriptor:
        assert os.pread(descriptor, 100, 0) == b"the holder\n"
        with (
            pytest.raises(ArgumentError, match=rf"^{path} is locked by another job: wait for it$"),
            locked(path, ArgumentError),
        ):
            pass

        def who(held: int) -> str:  # the refusal reads who holds it from the file
            return f"{path} is held by {os.pread(held, 100, 0).decode().strip()}"

        with pytest.raises(ArgumentError, match=r"is held by the holder$"), locked(path, ArgumentError, held=who):
            pass
        with pytest.raises(ArgumentError, match=r"^busy$"), locked(path, ArgumentError, held="busy"):
            pass
    with locked(path, ArgumentError):  # released with the block
        pass


def test_a_blocking_lock_waits_for_the_holder_and_a_folder_can_be_locked(tmp_path):
    order = []
    entered, leave = threading.Event(), threading.Event()

    def holder() -> None:
        with locked(tmp_path, ArgumentError, blocking=True):
            entered.set()
            leave.wait(30)
            order.append("first out")

    thread = threading.Thread(target=holder)
    thread.start()
    assert entered.wait(30)
    threading.Timer(0.2, leave.set).start()
    with locked(tmp_path, ArgumentError, blocking=True):
        order.append("second in")
    thread.join()
    assert order == ["first out", "second in"]


def test_a_file_replaced_between_its_open_and_its_lock_is_opened_again(tmp_path):
    path = tmp_path / "file"
    path.write_text("old")
    opened = []

    def opener(p):
        descriptor = os.open(p, os.O_RDONLY)
        if not opened:  # its holder replaced it before this open could lock it
            (tmp_path / "new").write_text("new")
            os.replace(tmp_path / "new", p)
        opened.append(descriptor)
        return descriptor

    with locked(path, ArgumentError, opener=opener) as descriptor:
        assert len(opened) == 2 and os.pread(descriptor, 10, 0) == b"new"


def test_a_lock_is_released_when_the_block_raises(tmp_path):
    path = tmp_path / "file"
    path.touch()
    with pytest.raises(KeyboardInterrupt), locked(path, ArgumentError):
        raise KeyboardInterrupt
    with locked(path, ArgumentError):  # taken again, not refused
        pass
