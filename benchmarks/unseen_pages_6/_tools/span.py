"""Cross-check: walk each page's visible DOM in order, find the notes span (notes_start..notes_end),
list the <a href> inside it, compare with notes_links + optional_links + text_urls;
--fill-text rewrites notes_text from the span (block-aware) for labels not in MANUAL."""
import json, os, re, sys, unicodedata
from urllib.parse import urljoin
from bs4 import BeautifulSoup, NavigableString, Comment
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANUAL = {"spotify_backroadsofhistory_ep204", "substack_marginalrent_ep58", "bbc_like_fieldnotes_eels"}
BLOCK = set("p div li ul ol h1 h2 h3 h4 h5 h6 br tr table section article aside header footer figure figcaption nav blockquote dd dt dl hr main form button".split())
def toks(s): return re.findall(r"\w+", unicodedata.normalize("NFKC", s).lower())
def walk(node, out, href=None):
    for c in node.children:
        if isinstance(c, Comment): continue
        if isinstance(c, NavigableString):
            out.append(("t", str(c), href)); continue
        if c.name in ("script", "style", "noscript", "template", "head", "audio", "input", "textarea", "select", "iframe"): continue
        blk = c.name in BLOCK
        if blk: out.append(("b", "\n", None))
        h = urljoin(PAGE, c["href"].strip()) if c.name == "a" and c.get("href") else href
        if c.name == "a" and c.get("href"): out.append(("a", h, None))
        walk(c, out, h)
        if blk: out.append(("b", "\n", None))
fill = "--fill-text" in sys.argv
ids = [a for a in sys.argv[1:] if not a.startswith("--")] or sorted(f[:-5] for f in os.listdir(os.path.join(HERE, "labels")))
for pid in ids:
    lp = os.path.join(HERE, "labels", pid + ".json"); lab = json.load(open(lp, encoding="utf-8"))
    PAGE = lab["page_url"]
    soup = BeautifulSoup(open(os.path.join(HERE, pid + ".html"), encoding="utf-8").read(), "html.parser")
    ev = []; walk(soup, ev)
    # build char text and token positions
    text = ""; anchors = []
    for kind, val, h in ev:
        if kind == "a": anchors.append((len(text), val))
        else: text += val
    def pat(s): return r"\W+".join(map(re.escape, toks(s)))
    m1 = re.search(pat(lab["notes_start"]), text, re.I)
    m2 = None
    if m1:
        for m in re.finditer(pat(lab["notes_end"]), text, re.I):
            if m.start() >= m1.start(): m2 = m; break
    if not (m1 and m2):
        print(f"{pid:44s} span not visible (hidden/JSON notes) -> skipped"); continue
    inside = []
    for pos, h in anchors:
        if m1.start() <= pos < m2.end() and h not in inside and not h.startswith(PAGE + "#"): inside.append(h)
    known = set(lab.get("notes_links", [])) | set(lab.get("optional_links", []))
    extra = [h for h in inside if h not in known]
    missing = [h for h in lab.get("notes_links", []) if h not in inside]
    print(f"{pid:44s} inside={len(inside)} extra={extra} missing={missing}")
    if fill and pid not in MANUAL:
        end = m2.end()
        while end < len(text) and not text[end].isspace() and not text[end].isalnum(): end += 1
        seg = text[m1.start():end]
        seg = re.sub(r"[ \t\r\f\v]*\n[\s]*", "\n", seg)
        seg = re.sub(r"[ \t]+", " ", seg).strip()
        lab["notes_text"] = seg
        json.dump(lab, open(lp, "w", encoding="utf-8"), ensure_ascii=False, indent=1)
