"""podarchive.read.deferred: a stand-in module that imports the real one on first use (#30)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()[-1]


def test_a_deferred_module_loads_on_first_attribute_and_works() -> None:
    out = _run(
        "import sys\n"
        "from podarchive.read.deferred import Deferred, defer\n"
        "assert defer('no_such_module_here') == []\n"
        "assert defer('sys') == []\n"
        "assert defer('colorsys') == ['colorsys']\n"
        "import colorsys\n"
        "assert isinstance(colorsys, Deferred) and 'rgb_to_hsv' not in vars(colorsys)\n"
        "assert colorsys.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)\n"
        "assert type(sys.modules['colorsys']) is not Deferred\n"
        "assert colorsys.hsv_to_rgb is sys.modules['colorsys'].hsv_to_rgb\n"
        "print('ok')\n"
    )
    assert out == "ok"


def test_parsing_a_feed_and_a_page_loads_neither_chardet_nor_soupsieve() -> None:
    out = _run(
        "import sys\n"
        "from podarchive.read.jobs import read_feed, read_page\n"
        'body = b\'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>\''
        " b'<item><title>E</title><guid>g1</guid><description>&lt;p&gt;Hi &lt;a href=\"https://x.example/\"&gt;x&lt;/a&gt;&lt;/p&gt;</description>'"
        ' b\'<enclosure url="https://x.example/a.mp3" type="audio/mpeg" length="1"/></item></channel></rss>\'\n'
        "read = read_feed(body, {'content-type': 'application/rss+xml'}, 'https://x.example/f')\n"
        "assert read.keys\n"
        "page = b'<html><body><article><p>' + b'Notes of the episode. ' * 40 + b'</p></article></body></html>'\n"
        "try:\n"
        "    read_page(page, 'https://x.example/e', 'text/html')\n"
        "except Exception:\n"
        "    pass\n"
        "from podarchive.read.deferred import Deferred\n"
        "assert 'feedparser' in sys.modules and 'bs4' in sys.modules\n"
        "print(','.join(n for n in ('chardet', 'soupsieve') if not isinstance(sys.modules.get(n), (Deferred, type(None)))) or 'none')\n"
    )
    assert out == "none"


def test_parsing_a_feed_loads_no_url_opener_and_urllib_request_still_works() -> None:
    out = _run(
        "import sys\n"
        "from podarchive.read.jobs import read_feed\n"
        "from podarchive.read.deferred import Deferred\n"
        "body = b'<rss version=\"2.0\"><channel><title>T</title><item><guid>g</guid>'"
        ' b\'<enclosure url="https://x.example/a.mp3" type="audio/mpeg"/></item></channel></rss>\'\n'
        "assert read_feed(body, None, 'https://x.example/f').keys\n"
        "assert 'feedparser' in sys.modules and 'xml.sax.saxutils' in sys.modules\n"
        "loaded = [n for n in ('ssl', 'http.client', 'urllib.request', 'feedparser.http')\n"
        "          if not isinstance(sys.modules.get(n), (Deferred, type(None)))]\n"
        "assert not loaded, loaded\n"
        "import urllib.request\n"
        "from urllib.request import build_opener\n"
        "assert urllib.request.Request('https://x.example/').full_url and build_opener\n"
        "import feedparser.http\n"
        "assert callable(feedparser.http.get) and 'ssl' in sys.modules\n"
        "print('ok')\n"
    )
    assert out == "ok"


def test_parsing_a_feed_loads_neither_openssl_nor_sockets() -> None:
    """A parse worker's imports: hashlib (OpenSSL's ``_hashlib``) and ``email.utils`` (with
    ``socket``) come with the rules and types modules' functions that need them, not with the
    modules; a parse of a feed with guids never calls them (#30)."""
    out = _run(
        "import sys\n"
        "from podarchive.read.jobs import read_feed\n"
        'body = b\'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>\''
        " b'<item><title>E</title><guid>g1</guid><pubDate>Mon, 02 Nov 2026 10:00:00 GMT</pubDate>'"
        ' b\'<enclosure url="https://x.example/a.mp3" type="audio/mpeg" length="1"/></item></channel></rss>\'\n'
        "read = read_feed(body, {'content-type': 'application/rss+xml'}, 'https://x.example/f')\n"
        "assert read.keys == ('guid:g1',)\n"
        "loaded = [n for n in ('_hashlib', 'email.utils', 'socket') if n in sys.modules]\n"
        "from datetime import UTC, datetime, timedelta\n"
        "from podarchive.core.identity import episode_key\n"
        "from podarchive.core.types import Episode\n"
        "from podarchive.rules.policy import jitter, parse_retry_after\n"
        "assert episode_key(Episode(notes_html='x')) == 'notes:' + '11f6ad8ec52a2984abaafd7c3b516503785c2072'\n"
        "assert timedelta(0) <= jitter('k', timedelta(hours=1)) < timedelta(minutes=5)\n"
        "now = datetime(2026, 11, 1, tzinfo=UTC)\n"
        "assert parse_retry_after('Mon, 02 Nov 2026 10:00:00 GMT', now) == datetime(2026, 11, 2, 10, tzinfo=UTC)\n"
        "assert '_hashlib' in sys.modules and 'email.utils' in sys.modules\n"
        "print(','.join(loaded) or 'none')\n"
    )
    assert out == "none"
