"""Mechanical check of labels against pages: probes, notes_text lines, links in span."""
import json, os, re, sys, unicodedata, glob
from urllib.parse import urljoin, unquote
from bs4 import BeautifulSoup, NavigableString, Comment
HERE = os.path.dirname(os.path.abspath(__file__)); ROOT = os.path.dirname(HERE)
CJK = re.compile(r'[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff66-\uff9f]')
def toks(s):
    s = unicodedata.normalize("NFKC", s).lower()
    out = []
    for w in re.findall(r'\w+', s):
        buf = ""
        for ch in w:
            if CJK.match(ch):
                if buf: out.append(buf); buf = ""
                out.append(ch)
            else: buf += ch
        if buf: out.append(buf)
    return out
def find(seq, sub, start=0):
    n = len(sub)
    for i in range(start, len(seq) - n + 1):
        if seq[i:i+n] == sub: return i
    return -1
SKIP = {"script","style","template","head","title","textarea"}
def stream(soup):
    """tokens of the DOM text (hidden blocks included), each with the href of its enclosing <a>."""
    T, H = [], []
    for s in soup.find_all(string=True):
        if isinstance(s, Comment): continue
        if any(p.name in SKIP for p in s.parents if p.name): continue
        a = s.find_parent("a"); href = a.get("href") if a else None
        for t in toks(str(s)): T.append(t); H.append(href)
    return T, H
# links that sit inside the start..end span but are deliberately not notes (promo boxes etc.)
KNOWN_NON_NOTES = {"pubradio_commonground_leafblowers": ["https://www.wqrn.org/donate?utm_source=inline-promo"]}
def norm(u):
    u = unquote(u.strip()); u = re.sub(r'^https?://', '', u); u = u.rstrip('/')
    return u.lower()
def main(ids):
    bad = 0
    for lf in sorted(glob.glob(os.path.join(ROOT, "labels", "*.json"))):
        L = json.load(open(lf, encoding="utf-8")); pid = L["id"]
        if ids and pid not in ids: continue
        html = open(os.path.join(ROOT, pid + ".html"), encoding="utf-8").read()
        soup = BeautifulSoup(html, "html.parser")
        T, H = stream(soup)
        raw = toks(BeautifulSoup(html, "html.parser").get_text(" ")) + toks(html)
        for sc in soup.find_all("script", type="application/ld+json"):
            try: raw += toks(json.dumps(json.loads(sc.string), ensure_ascii=False).replace("\\n", " "))
            except Exception: pass
            try: raw += toks(json.loads(sc.string).get("description", ""))
            except Exception: pass
        probs = []
        pos = {}
        for k in ["notes_start","alt_start","notes_end","alt_end","extended_end"]:
            if k not in L: continue
            p = toks(L[k])
            if len(p) < 12: probs.append(f"{k}: only {len(p)} tokens")
            i = find(T, p)
            if i < 0:
                if find(raw, p) < 0: probs.append(f"{k}: NOT FOUND"); continue
                pos[k] = None; continue
            pos[k] = (i, i + len(p))
        # notes_text lines present
        for line in L["notes_text"].split("\n"):
            lt = toks(line)
            if lt and find(T, lt) < 0 and find(raw, lt) < 0: probs.append(f"notes_text line not found: {line[:60]!r}")
        # links
        hrefs = {norm(urljoin(L["page_url"], a.get("href"))) for a in soup.find_all("a", href=True)}
        for u in L["notes_links"]:
            if norm(u) not in hrefs: probs.append(f"notes_link not in page: {u}")
        if pos.get("notes_start") and pos.get("notes_end"):
            s, e = pos["notes_start"][0], pos["notes_end"][1]
            if e <= s: probs.append("end before start")
            inspan = {norm(urljoin(L["page_url"], h)) for h in H[s:e] if h and not h.startswith("#")}
            lab = {norm(u) for u in L["notes_links"]}
            opt = {norm(u) for u in L.get("optional_links", [])}
            extra = inspan - lab - opt - {norm(u) for u in KNOWN_NON_NOTES.get(pid, [])}; missing = lab - inspan
            if extra: probs.append(f"links in span not labelled: {sorted(extra)}")
            if missing: probs.append(f"labelled links not in span: {sorted(missing)}")
            # tokens in span vs notes_text
            span = T[s:e]; nt = toks(L["notes_text"])
            if abs(len(span) - len(nt)) > 0.15 * len(nt) + 5:
                probs.append(f"span tokens {len(span)} vs notes_text tokens {len(nt)}")
        for p in probs: print(f"{pid}: {p}")
        if probs: bad += 1
        else: print(f"{pid}: ok ({len(L['notes_links'])} links, feed={L['feed']})")
    print("pages with problems:", bad); return bad
if __name__ == "__main__":
    sys.exit(1 if main(set(sys.argv[1:])) else 0)
