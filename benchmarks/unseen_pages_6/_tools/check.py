"""Mechanical label check: python _tools/check.py [--fill] [ids...]
- notes_start / notes_end / alt_* / extended_end must occur (as token runs) in the page's visible text
  or, failing that, in the raw page text (for notes carried only in JSON-LD/meta/hidden blocks).
- every notes_link must occur as an href (resolved against page_url) in the page.
- --fill: write notes_text from the visible span start..end when notes_text is missing."""
import json, os, re, sys, html, unicodedata
from urllib.parse import urljoin
from bs4 import BeautifulSoup
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
def toks(s):
    return re.findall(r"\w+", unicodedata.normalize("NFKC", s).lower())
def find(seq, sub):
    n = len(sub)
    for i in range(len(seq) - n + 1):
        if seq[i:i+n] == sub: return i
    return -1
def visible(soup):
    s = BeautifulSoup(str(soup), "html.parser")
    for t in s(["script", "style", "noscript", "template", "head"]): t.decompose()
    return s.get_text("\n")
fill = "--fill" in sys.argv
ids = [a for a in sys.argv[1:] if not a.startswith("--")]
if not ids:
    ids = sorted(f[:-5] for f in os.listdir(os.path.join(HERE, "labels")) if f.endswith(".json"))
bad = 0
for pid in ids:
    lp = os.path.join(HERE, "labels", pid + ".json")
    lab = json.load(open(lp, encoding="utf-8"))
    raw = open(os.path.join(HERE, pid + ".html"), encoding="utf-8").read()
    soup = BeautifulSoup(raw, "html.parser")
    vis = visible(soup); vt = toks(vis)
    rawt = toks(html.unescape(re.sub(r"<[^>]+>", " ", raw.replace("\\u003c", "<").replace("\\u003e", ">").replace("\\n"," ").replace("\\/","/"))))
    probs = []
    for k in ("notes_start", "notes_end", "alt_start", "alt_end", "extended_end"):
        if k not in lab: continue
        t = toks(lab[k])
        if k in ("notes_start", "notes_end") and len(t) < 12: probs.append(f"{k} <12 tokens")
        where = "vis" if find(vt, t) >= 0 else ("raw" if find(rawt, t) >= 0 else None)
        if not where: probs.append(f"{k} NOT FOUND")
        lab.setdefault("_where", {})[k] = where
    hrefs = set()
    for a in soup.find_all("a", href=True):
        hrefs.add(urljoin(lab["page_url"], a["href"].strip()))
    rawun = html.unescape(raw).replace("\\/", "/")
    for u in lab.get("notes_links", []):
        if u not in hrefs and u not in rawun: probs.append(f"link missing: {u}")
    if len(set(lab.get("notes_links", []))) != len(lab.get("notes_links", [])): probs.append("dup links")
    for k in ("id","title","page_url","platform","has_notes","notes_start","notes_end","notes_links","feed","doubt"):
        if k not in lab: probs.append(f"missing key {k}")
    if lab.get("feed") in ("same","short") and not os.path.exists(os.path.join(HERE,"feeds",pid+".html")): probs.append("feed file missing")
    if lab.get("feed") == "none" and os.path.exists(os.path.join(HERE,"feeds",pid+".html")): probs.append("feed file but feed=none")
    size = len(raw.encode()); 
    if not 8000 <= size <= 41000: probs.append(f"size {size}")
    w = lab.pop("_where", {})
    if fill and "notes_text" not in lab and w.get("notes_start") == "vis" and w.get("notes_end") == "vis":
        lines = [l.strip() for l in vis.split("\n")]
        text = "\n".join(l for l in lines if l)
        # locate by char regex on tokens
        def pat(s): return r"\W+".join(map(re.escape, toks(s)))
        m1 = re.search(pat(lab["notes_start"]), text, re.I); 
        m2 = None
        for m in re.finditer(pat(lab["notes_end"]), text, re.I):
            if m1 and m.start() >= m1.start(): m2 = m; break
        if m1 and m2:
            lab["notes_text"] = re.sub(r"[ \t]+", " ", text[m1.start():m2.end()])
            keys = list(lab.keys())
            json.dump(lab, open(lp, "w", encoding="utf-8"), ensure_ascii=False, indent=1)
    if "notes_text" not in lab: probs.append("no notes_text")
    print(f"{pid:40s} {size:6d}B links={len(lab.get('notes_links',[]))} feed={lab.get('feed')} where={w} {'OK' if not probs else probs}")
    bad += bool(probs)
print("bad:", bad)
