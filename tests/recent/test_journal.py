"""The recent-writes journal: what one process wrote moments ago, the others of its host read back whole;
a clearing reaches them; rows leave with the window; the service's workers get one."""

from __future__ import annotations

import multiprocessing
import shutil
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from neardup.config import Settings
from neardup.mappings.schema import Stored
from neardup.recent.journal import Journal, JournalError
from neardup.recent.writes import RecentWrites
from neardup.service.server import shared_journal


def _doc(doc_id: str, fingerprint: int = 0x1234_5678_9ABC_DEF0, cluster: str | None = "c") -> Stored:
    return Stored(
        doc_id,
        (fingerprint, 2**64 - 1, 0),
        np.array([7, 2**32 - 1, 0], dtype=np.uint32),
        "exact-" + doc_id,
        "ok",
        "v1",
        cluster,
        "2026-11-24T00:00:00.000000001Z",
    )


def _same(a: Stored, b: Stored) -> bool:
    def arrays(x: Stored) -> tuple[object, ...]:
        meta = None if x.meta is None else x.meta.tolist()
        return (x.sketch.tolist(), meta, x.sketch.dtype)

    plain = ("id", "fingerprints", "exact", "status", "version", "cluster", "indexed_at", "all_seeds")
    return all(getattr(a, f) == getattr(b, f) for f in plain) and arrays(a) == arrays(b)


def test_a_document_comes_back_whole(tmp_path: Path) -> None:
    path = str(tmp_path / "j.sqlite3")
    with_meta = _doc("m", cluster=None)
    with_meta = replace(with_meta, meta=np.array([1, 2**31], dtype=np.uint32))
    too_short = Stored("s", (), np.zeros(0, np.uint32), "abc", "too_short", "v1", "s", "2026-11-24T00:00:00Z")
    Journal(path).append("news", 3.5, [_doc("a"), with_meta, too_short])
    rows = Journal(path).read()
    assert [(r.index, r.at) for r in rows] == [("news", 3.5)] * 3
    assert all(_same(r.document, d) for r, d in zip(rows, [_doc("a"), with_meta, too_short], strict=True) if r.document)
    assert all(r.document is not None for r in rows)


def test_recent_writes_sharing_a_journal_see_each_other_and_the_window_still_applies(tmp_path: Path) -> None:
    path = str(tmp_path / "j.sqlite3")
    now = [100.0]
    one = RecentWrites(5.0, clock=lambda: now[0], journal=Journal(path))
    other = RecentWrites(5.0, clock=lambda: now[0], journal=Journal(path))
    alone = RecentWrites(5.0, clock=lambda: now[0])
    one.remember("news", [_doc("a")])
    alone.remember("news", [_doc("z")])
    now[0] += 2
    other.remember("news", [_doc("b")])
    assert [d.id for d in other.documents("news")] == ["b", "a"]
    assert [d.id for d in one.documents("news")] == ["a", "b"]
    assert other.documents("sport") == []
    now[0] += 4  # a is 6 s old, b 4 s
    assert [d.id for d in other.documents("news")] == ["b"]
    assert [d.id for d in one.documents("news")] == ["b"]
    one.clear("news")  # the index was deleted and created again
    assert other.documents("news") == [] and one.documents("news") == []
    one.remember("news", [_doc("c")])
    other.remember("news", [_doc("d")])
    one.clear("sport")
    assert sorted(d.id for d in other.documents("news")) == ["c", "d"]
    now[0] += 1
    one.clear("news")
    now[0] += 1
    other.remember("news", [_doc("e")])  # to the new index, before this process has read of the clearing
    assert [d.id for d in other.documents("news")] == ["e"]


def test_indices_no_longer_written_leave_with_the_window_and_a_newer_copy_stays(tmp_path: Path) -> None:
    now = [100.0]
    shared = str(tmp_path / "j.sqlite3")
    one = RecentWrites(5.0, clock=lambda: now[0], journal=Journal(shared))
    other = RecentWrites(5.0, clock=lambda: now[0], journal=Journal(shared))
    for day in range(3):  # daily indices: each written once, never read again
        one.remember(f"news-{day}", [_doc(f"d{day}-{k}") for k in range(100)])
        now[0] += 1
    assert other.documents("news-2") and other.size() == 300  # the journal told it of all three
    now[0] += 10
    one.remember("news-3", [_doc("today")])
    assert one.size() == 1  # the other indices left with the window, though nothing read them
    assert other.documents("news-3") and other.size() == 1
    # x rewritten by other before it reads one's older row of x (writes do not read the journal): the newer stays
    one.remember("news-3", [_doc("x", cluster="old")])
    now[0] += 1
    other.remember("news-3", [_doc("x", cluster="new")])
    assert [d.cluster for d in other.documents("news-3") if d.id == "x"] == ["new"]


def test_processes_follow_a_journal_deleted_under_them_to_the_new_file(tmp_path: Path) -> None:
    """Someone cleans /dev/shm while the workers run, and a worker starts afresh: it makes a new file, and the
    workers that opened the old one move to it instead of going on apart from it in the deleted one."""
    path = tmp_path / "j.sqlite3"
    now = [100.0]
    one = RecentWrites(5.0, clock=lambda: now[0], journal=Journal(str(path)))
    one.remember("news", [_doc("before")])
    for leftover in tmp_path.glob("j.sqlite3*"):  # the file and its -wal and -shm
        leftover.unlink()
    restarted = RecentWrites(5.0, clock=lambda: now[0], journal=Journal(str(path)))
    restarted.remember("news", [_doc("b")])  # makes a new file
    one.remember("news", [_doc("c")])
    assert sorted(d.id for d in restarted.documents("news")) == ["b", "c"]
    assert sorted(d.id for d in one.documents("news")) == ["b", "before", "c"]


def test_workers_keep_sharing_a_journal_whose_directory_was_removed(tmp_path: Path) -> None:
    """With no file at the path at all (the service's journal directory removed), the open file is all that is
    shared: the workers go on with it, without an error."""
    folder = tmp_path / "neardup-journal"
    folder.mkdir()
    now = [100.0]
    one = RecentWrites(5.0, clock=lambda: now[0], journal=Journal(str(folder / "j.sqlite3")))
    other = RecentWrites(5.0, clock=lambda: now[0], journal=Journal(str(folder / "j.sqlite3")))
    one.remember("news", [_doc("a")])
    assert [d.id for d in other.documents("news")] == ["a"]
    shutil.rmtree(folder)
    one.remember("news", [_doc("b")])
    assert sorted(d.id for d in other.documents("news")) == ["a", "b"]


def _child(path: str, journal: Journal) -> None:
    RecentWrites(5.0, journal=Journal(path)).remember("news", [_doc("from-child")])
    journal.append("news", time.monotonic(), [_doc("inherited")])  # a handle made before the fork


def test_another_process_sees_what_this_one_wrote(tmp_path: Path) -> None:
    path = str(tmp_path / "j.sqlite3")
    mine = Journal(path)
    recent = RecentWrites(5.0, journal=mine)
    recent.remember("news", [_doc("from-parent")])  # the connection exists before the fork
    child = multiprocessing.get_context("fork").Process(target=_child, args=(path, mine))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    assert sorted(d.id for d in recent.documents("news")) == ["from-child", "from-parent", "inherited"]


def test_rows_older_than_the_window_are_pruned_when_writing(tmp_path: Path) -> None:
    path = str(tmp_path / "j.sqlite3")
    now = [0.0]
    writer = RecentWrites(5.0, clock=lambda: now[0], journal=Journal(path))
    for k in range(20):
        writer.remember("news", [_doc(f"d{k}")])
        now[0] += 1
    assert len(Journal(path).read()) == 6  # written at 14..19 s (the prune at 19 s keeps what is 5 s old)


def test_a_journal_that_cannot_be_opened_is_a_clear_error_and_costs_a_worker_only_the_others_writes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    missing = str(tmp_path / "no-such-dir" / "j.sqlite3")
    with pytest.raises(JournalError, match="no-such-dir"):
        Journal(missing).read()
    recent = RecentWrites(5.0, journal=Journal(missing))
    recent.remember("news", [_doc("a")])
    recent.clear("sport")
    assert [d.id for d in recent.documents("news")] == ["a"]
    assert "recent-writes journal" in caplog.text and "going on with this process's own" in caplog.text


def test_serve_gives_several_workers_a_journal_in_memory_and_removes_it() -> None:
    with shared_journal(Settings(), 1) as one:
        assert one.recent_journal == ""
    with shared_journal(Settings(recent_journal="/srv/x.sqlite3"), 4) as given:
        assert given.recent_journal == "/srv/x.sqlite3"
    with shared_journal(Settings(), 2) as two:
        where = Path(two.recent_journal).parent
        assert where.is_dir() and (str(where).startswith("/dev/shm/") or not Path("/dev/shm").is_dir())
        Journal(two.recent_journal).append("news", 1.0, [_doc("a")])
    assert not where.exists()
