"""A full disk loses nothing already stored and leaves nothing half-written, on real small filesystems."""

from __future__ import annotations

import errno

import pytest

from sprintflow.errors import DiskFull
from sprintflow.io.files import append_ndjson, atomic_write_text, read_ndjson
from tests.conftest import fill


def test_an_append_that_does_not_fit_is_taken_back(small_disk):
    disk = small_disk("log", kib=64, free_kib=64)
    log = disk / "events.ndjson"
    append_ndjson(log, {"n": 1})
    before = log.read_bytes()
    fill(disk)
    with pytest.raises(OSError) as raised:
        append_ndjson(log, {"n": 2, "padding": "x" * 200_000})
    assert raised.value.errno == errno.ENOSPC and isinstance(raised.value, DiskFull)  # exit 3, one line
    assert log.read_bytes() == before  # not a torn line that later readers would trip on
    assert [line.record for line in read_ndjson(log)] == [{"n": 1}]


def test_a_replacement_that_does_not_fit_keeps_the_old_file_and_no_temp(small_disk):
    disk = small_disk("evals", kib=64, free_kib=64)
    target = disk / "eval-x-1.json"
    atomic_write_text(target, '{"old": true}')
    fill(disk)
    with pytest.raises(OSError):
        atomic_write_text(target, "x" * 200_000)
    assert target.read_text() == '{"old": true}'
    assert sorted(p.name for p in disk.iterdir()) == [".filler", "eval-x-1.json"]
