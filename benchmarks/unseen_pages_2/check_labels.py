#!/usr/bin/env python3
"""Mechanical check of the hand labels in labels/ against the pages (BeautifulSoup only).

    python check_labels.py              # check every label
    python check_labels.py --print ID   # also print the page's visible text

For each page: the start/end probes (first/last 12 tokens) must occur in the page's visible
text (hidden / aria-hidden / display:none subtrees dropped) -- or, for JSON-sourced notes, in that
JSON field -- and inside the notes region named by label_source; every notes link must be a link of
the region; region links not labelled must be optional or in-page anchors; text_urls must be in
notes_text; alt/extended probes must occur in the page; feeds/<id>.html must match the feed kind."""
import json, pathlib, sys
from collections import Counter
from bs4 import BeautifulSoup
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "_tools"))
from common import region, tokens, find_seq, page_text, html_to_text, parse_source

ROOT = pathlib.Path(__file__).resolve().parent

def norm_url(u):
    u = u.strip()
    for p in ("https://", "http://"):
        if u.startswith(p):
            u = u[len(p):]
    return u.rstrip("/").lower()

def has(hay, phrase, first=True):
    t = tokens(phrase)
    probe = t[:12] if first else t[-12:]
    return find_seq(hay, probe) >= 0

def main():
    show = sys.argv[sys.argv.index("--print") + 1] if "--print" in sys.argv else None
    problems = 0
    labels = sorted((ROOT / "labels").glob("*.json"))
    for lp in labels:
        lab = json.loads(lp.read_text(encoding="utf-8"))
        pid = lab["id"]
        errs, warns = [], []
        page = (ROOT / f"{pid}.html")
        raw = page.read_bytes()
        size = len(raw)
        if not (8000 <= size <= 60000):
            warns.append(f"size {size} bytes outside 8-60 KB")
        soup = BeautifulSoup(raw.decode("utf-8"), "html.parser")
        vis = page_text(soup)
        vis_t = tokens(vis)
        if show == pid:
            print(vis)
        kind, _, _ = parse_source(lab["label_source"])
        rtext, rlinks, _ = region(soup, lab["label_source"], lab["page_url"])
        rt = tokens(rtext)
        # canonical URL
        can = soup.find("link", rel="canonical")
        if can is None or can.get("href") != lab["page_url"]:
            warns.append("canonical link differs from page_url")
        # probes in region
        s = find_seq(rt, tokens(lab["notes_start"])[:12])
        e = find_seq(rt, tokens(lab["notes_end"])[-12:], max(s, 0))
        if s < 0: errs.append("notes_start not in region")
        if e < 0: errs.append("notes_end not in region after start")
        if len(tokens(lab["notes_start"])) < 12 or len(tokens(lab["notes_end"])) < 12:
            errs.append("start/end shorter than 12 tokens")
        # probes in visible page text
        where = vis_t
        if kind in ("jsonld", "nextdata"):
            where = rt
            if has(vis_t, lab["notes_end"], first=False):
                warns.append("JSON-sourced notes end is visible too (expected teaser only)")
        if not has(where, lab["notes_start"]): errs.append("notes_start not in visible text")
        if not has(where, lab["notes_end"], first=False): errs.append("notes_end not in visible text")
        for k, first in (("alt_start", True), ("alt_end", False), ("extended_end", False), ("visible_end", False)):
            if k in lab:
                hay = vis_t if k != "alt_end" or kind == "css" else rt
                probe_ok = has(hay, lab[k], first) or (k in ("alt_start", "alt_end") and has(rt, lab[k], first))
                if not probe_ok:
                    errs.append(f"{k} not found")
        # notes_text consistency
        nt = tokens(lab["notes_text"])
        if nt[:12] != tokens(lab["notes_start"])[:12]: errs.append("notes_text does not begin with notes_start")
        if nt[-12:] != tokens(lab["notes_end"])[-12:]: errs.append("notes_text does not end with notes_end")
        if s >= 0 and e >= 0:
            span = rt[s:e + len(tokens(lab["notes_end"])[-12:])]
            if Counter(span) != Counter(nt):
                errs.append("notes_text differs from region span")
        # links
        rl = {norm_url(u) for u in rlinks}
        nl = {norm_url(u) for u in lab["notes_links"]}
        ol = {norm_url(u) for u in lab.get("optional_links", [])}
        for u in lab["notes_links"]:
            if norm_url(u) not in rl:
                errs.append(f"notes link not in region: {u}")
        for u in sorted(set(rlinks)):
            n = norm_url(u)
            if n in nl or n in ol or "#" in u and norm_url(u.split("#")[0]) == norm_url(lab["page_url"]):
                continue
            errs.append(f"region link not labelled: {u}")
        for u in lab.get("text_urls", []):
            if u not in lab["notes_text"]:
                errs.append(f"text_url not in notes_text: {u}")
        # feed
        fp = ROOT / "feeds" / f"{pid}.html"
        if lab["feed"] == "none":
            if fp.exists(): errs.append("feed file present for feed=none")
        else:
            if not fp.exists():
                errs.append("feed file missing")
            else:
                fsoup = BeautifulSoup(fp.read_text(encoding="utf-8"), "html.parser")
                ft = tokens(html_to_text(str(fsoup)))
                cover = sum((Counter(nt) & Counter(ft)).values()) / max(1, len(nt))
                flinks = {norm_url(a["href"]) for a in fsoup.find_all("a", href=True)}
                if lab["feed"] == "same":
                    if cover < 0.9: errs.append(f"feed=same but covers only {cover:.0%} of notes tokens")
                    missing = [u for u in lab["notes_links"] if norm_url(u) not in flinks]
                    if missing and not lab.get("text_urls"):
                        errs.append(f"feed=same lacks notes links {missing}")
                elif lab["feed"] == "short":
                    if cover > 0.6: errs.append(f"feed=short but covers {cover:.0%} of notes tokens")
        status = "OK  " if not errs else "FAIL"
        problems += bool(errs)
        print(f"{status} {pid:40s} {size/1024:5.1f} KB  feed={lab['feed']:5s} links={len(lab['notes_links']):2d}  notes_tokens={len(nt)}")
        for m in errs: print("      ERROR", m)
        for m in warns: print("      warn ", m)
    print(f"\n{len(labels)} labels, {problems} with errors")
    return 1 if problems else 0

if __name__ == "__main__":
    sys.exit(main())
