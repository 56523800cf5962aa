"""A worker process forgets the parsers' memos after each job (#30): what it keeps between
jobs is its imports, not the notes and links of the feeds it read before."""

from __future__ import annotations

import pytest

import podarchive.runtime.cpu as cpu
from podarchive.core import urls
from podarchive.read.extract import text
from podarchive.runtime.cpu import CpuLane

NOTES = '<p>Show notes with <a href="https://x.example/ep/{}">a link</a>.</p>'


def derive(n: int) -> int:
    """Derive the notes of episode ``n``; the sizes of the memos after it, in all."""
    text.notes_text_and_links(NOTES.format(n), "https://x.example/feed")
    return memo_sizes()


def memo_sizes() -> int:
    return text._derived.cache_info().currsize + urls._absolute_http_link.cache_info().currsize


@pytest.fixture
def empty_memos() -> None:
    text.forget_derived()
    urls.forget_link_memo()


@pytest.mark.usefixtures("empty_memos")
def test_a_job_in_a_worker_leaves_the_memos_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    assert cpu._gc_paused(derive, 1) > 0  # the job itself uses them
    assert memo_sizes() > 0  # outside a worker (no hook): kept, as the run's own process does
    monkeypatch.setattr(cpu, "_after_job", cpu.resolve(cpu.AFTER_JOB))
    assert cpu._gc_paused(derive, 2) > 0
    assert memo_sizes() == 0


def test_worker_processes_keep_no_memo_between_jobs() -> None:
    with CpuLane(2, start_after=0) as lane:
        assert all(size > 0 for size in lane.map(derive, [(n,) for n in range(6)], weight=1))
        assert lane.map(memo_sizes, [() for _ in range(6)], weight=1) == [0] * 6
