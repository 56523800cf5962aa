"""Podping's pure rules (#29): block JSON in, pings out (a golden file), what counts as a
ping from whom (hypothesis), the block ranges read, and which archived feeds a ping names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from podarchive.rules.podping import (
    DEFAULT_WRITERS,
    Ping,
    feeds_named,
    head_block,
    next_range,
    op_ping,
    read_span,
)

FIXTURES = Path(__file__).parent / "fixtures" / "podping"


def test_a_block_range_gives_the_trusted_writers_pings_golden() -> None:
    answer = json.loads((FIXTURES / "block_range.json").read_text())
    span = read_span(100_000_001, answer, DEFAULT_WRITERS)
    got = {
        "first": span.first,
        "last": span.last,
        "last_time": span.last_time,
        "pings": [
            {"block": p.block, "writer": p.writer, "reason": p.reason, "iris": list(p.iris)}
            for p in span.pings
        ],
    }
    assert got == json.loads((FIXTURES / "expected_pings.json").read_text())


def test_a_block_that_is_not_the_one_asked_for_is_refused() -> None:
    answer = json.loads((FIXTURES / "block_range.json").read_text())
    with pytest.raises(ValueError, match="asked for block 5"):
        read_span(5, answer, DEFAULT_WRITERS)
    for bad in ({}, {"blocks": []}, {"blocks": "x"}, [], None, {"blocks": [1]}):
        with pytest.raises(ValueError, match="block"):
            read_span(1, bad, DEFAULT_WRITERS)


def test_the_head_and_the_ranges_read() -> None:
    assert head_block({"head_block_number": 91_000_000, "time": "x"}) == 91_000_000
    for bad in ({}, {"head_block_number": "9"}, {"head_block_number": True}, [], None):
        with pytest.raises(ValueError, match="head_block_number"):
            head_block(bad)
    assert next_range(100, 100, 50) is None
    assert next_range(100, 99, 50) is None
    assert next_range(100, 103, 50) == (101, 3)
    assert next_range(100, 10_000, 200) == (101, 200)  # catch-up capped per pass


def test_feeds_are_matched_as_written_normalized_and_by_their_moves() -> None:
    names = [
        ("https://feeds.example.com/show.xml", "https://feeds.example.com/show.xml"),
        ("https://new.example.com/moved.rss", "https://old.example.com/rss"),
        ("https://old.example.com/rss", "https://old.example.com/rss"),
    ]
    pings = [
        Ping(1, "podping.aaa", ("HTTPS://Feeds.Example.com/show.xml#x", "https://unknown/x")),
        Ping(2, "podping.aaa", ("https://new.example.com/moved.rss",)),
        Ping(3, "podping.bbb", ("https://feeds.example.com/show.xml",)),
    ]
    assert feeds_named(pings, names) == [
        "https://feeds.example.com/show.xml",
        "https://old.example.com/rss",
    ]
    assert feeds_named(pings, []) == []


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
signers = st.lists(st.sampled_from(["podping.aaa", "podping.zzz", "mallory", ""]), max_size=3)


def custom_json(signed: list[str], op_id: str, body: Any) -> dict[str, Any]:
    payload = body if isinstance(body, str) else json.dumps(body)
    return {
        "type": "custom_json_operation",
        "value": {
            "required_auths": [],
            "required_posting_auths": signed,
            "id": op_id,
            "json": payload,
        },
    }


@settings(max_examples=300, deadline=None)
@given(
    signed=signers,
    op_id=st.sampled_from(["pp_podcast_update", "pp_video_live", "podping", "other", ""]),
    body=json_values | st.fixed_dictionaries({"iris": st.lists(st.text(max_size=30), max_size=3)}),
)
def test_only_one_trusted_signer_makes_a_ping_and_nothing_else_raises(
    signed: list[str], op_id: str, body: Any
) -> None:
    ping = op_ping(7, custom_json(signed, op_id, body), {"podping.aaa"})
    if ping is not None:
        assert signed == ["podping.aaa"]
        assert op_id.startswith("pp_") or op_id == "podping"
        assert ping.block == 7
        assert ping.iris
        assert all(i and i == i.strip() for i in ping.iris)


@settings(max_examples=200, deadline=None)
@given(answer=json_values)
def test_any_answer_is_pings_or_a_value_error(answer: Any) -> None:
    try:
        span = read_span(1, answer, DEFAULT_WRITERS)
    except ValueError:
        return
    assert span.first == 1
    assert span.last >= span.first
