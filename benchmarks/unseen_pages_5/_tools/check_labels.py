#!/usr/bin/env python3
"""Mechanical checks of the hand labels in ../labels against the pages in ..

Usage:  python _tools/check_labels.py [--fill] [ids...]

--fill  where a label has no "notes_text", cut it out of the page's visible text
        (block-aware text, from notes_start to notes_end) and write it back.

Checks: notes_start / notes_end / alt_* / extended_end occur in the page's visible
text (or, for labels with "hidden_ok": true or notes kept outside the visible text,
in the unescaped raw page); every notes link / optional link occurs in the page as a
(resolved) href or as literal text; the feed file exists when feed is same/short;
page size 10-50 KB.
"""
import html
import json
import re
import sys
import unicodedata
from pathlib import Path
from urllib.parse import urljoin

from bs4 import BeautifulSoup, NavigableString, Comment

HERE = Path(__file__).resolve().parent.parent
BLOCK = {"p", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "br", "tr",
         "td", "th", "table", "section", "article", "blockquote", "header", "footer",
         "nav", "aside", "main", "figure", "figcaption", "dd", "dt", "dl", "pre", "hr",
         "form", "details", "summary", "noscript"}
SKIP = {"script", "style", "template", "svg", "head", "title", "iframe", "audio", "video"}


def visible_text(soup):
    out = []

    def walk(node):
        for ch in node.children:
            if isinstance(ch, Comment):
                continue
            if isinstance(ch, NavigableString):
                out.append(str(ch))
                continue
            name = ch.name.lower()
            if name in SKIP:
                continue
            if name in BLOCK:
                out.append("\n")
            walk(ch)
            if name in BLOCK:
                out.append("\n")

    walk(soup)
    text = "".join(out)
    lines = [re.sub(r"[ \t\r\f\v\u00a0]+", " ", ln).strip() for ln in text.split("\n")]
    return "\n".join(ln for ln in lines if ln)


def norm(s):
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", s)).strip()


def toks(s):
    return re.findall(r"\w+", unicodedata.normalize("NFKC", s).lower())


def main():
    args = sys.argv[1:]
    fill = "--fill" in args
    ids = [a for a in args if not a.startswith("--")]
    bad = 0
    rows = []
    for lp in sorted((HERE / "labels").glob("*.json")):
        lab = json.loads(lp.read_text(encoding="utf-8"))
        pid = lab["id"]
        if ids and pid not in ids:
            continue
        errs = []
        if lp.stem != pid:
            errs.append("id != file name")
        page = HERE / f"{pid}.html"
        raw = page.read_text(encoding="utf-8")
        size = len(raw.encode("utf-8"))
        if not 10_000 <= size <= 50_000:
            errs.append(f"size {size}")
        soup = BeautifulSoup(raw, "html.parser")
        vis = visible_text(soup)
        visn = norm(vis)
        rawu = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), raw)
        rawn = norm(html.unescape(rawu
                                  .replace("\\u0026", "&").replace("\\/", "/").replace('\\"', '"').replace("\\n", " ")))
        rawn_notags = norm(re.sub(r"<[^>]+>", " ", re.sub(r"</?(a|strong|em|b|i|span|code)\b[^>]*>", "", rawn)))
        for key in ("notes_start", "notes_end", "alt_start", "alt_end", "extended_end"):
            if key not in lab:
                continue
            probe = norm(lab[key])
            if len(toks(probe)) < 12 and key in ("notes_start", "notes_end"):
                errs.append(f"{key} has only {len(toks(probe))} tokens")
            if probe in visn:
                continue
            if lab.get("hidden_ok") and (probe in rawn or probe in rawn_notags):
                continue
            errs.append(f"{key} not in visible text: {probe[:60]!r}")
        base = lab["page_url"]
        hrefs = set()
        for a in soup.find_all(href=True):
            hrefs.add(urljoin(base, a["href"].strip()))
        # links inside JSON/app state: take anything URL-like from the unescaped raw page
        raw_urls = set(re.findall(r"https?://[^\s\"'<>\\)]+", rawn))
        for key in ("notes_links", "optional_links", "text_urls"):
            for u in lab.get(key, []):
                if not u.startswith(("http", "mailto:")):
                    errs.append(f"{key} not absolute: {u}")
                if key == "text_urls":
                    if u.split("//", 1)[-1] not in rawn:
                        errs.append(f"text url not in page: {u}")
                    continue
                if u in hrefs or (lab.get("hidden_ok") and u in raw_urls):
                    continue
                errs.append(f"{key} not an href in page: {u}")
        if len(set(lab.get("notes_links", []))) != len(lab.get("notes_links", [])):
            errs.append("duplicate notes_links")
        if lab.get("feed") in ("same", "short"):
            if not (HERE / "feeds" / f"{pid}.html").exists():
                errs.append("feed file missing")
        elif (HERE / "feeds" / f"{pid}.html").exists():
            errs.append("feed file present but feed != same/short")
        for key in ("id", "title", "page_url", "platform", "has_notes", "notes_start",
                    "notes_end", "notes_links", "feed", "doubt"):
            if key not in lab:
                errs.append(f"missing {key}")
        if "notes_text" not in lab and fill and not errs:
            def rx(t):
                return r"\s+".join(re.escape(w) for w in t.split())
            ms = re.search(rx(norm(lab["notes_start"])), vis)
            me = None
            if ms:
                for m in re.finditer(rx(norm(lab["notes_end"])), vis):
                    if m.start() >= ms.start():
                        me = m
                        break
            if not ms or not me:
                errs.append("cannot fill notes_text (probe not found verbatim in block text)")
            else:
                lab["notes_text"] = vis[ms.start():me.end()]
                lp.write_text(json.dumps(lab, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        if "notes_text" not in lab:
            errs.append("no notes_text")
        else:
            nt = norm(lab["notes_text"])
            if not nt.startswith(norm(lab["notes_start"])[:30]):
                errs.append("notes_text does not begin with notes_start")
            if not nt.endswith(norm(lab["notes_end"])[-30:]):
                errs.append("notes_text does not end with notes_end")
        rows.append((pid, lab.get("feed"), len(lab.get("notes_links", [])), size,
                     len(lab.get("notes_text", ""))))
        if errs:
            bad += 1
            print(f"[FAIL] {pid}")
            for e in errs:
                print("    ", e)
    for r in rows:
        print("%-40s feed=%-5s links=%3d bytes=%6d notes_chars=%5d" % r)
    print(f"{len(rows)} labels, {bad} with problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
