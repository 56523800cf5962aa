"""Shared helpers for make_labels.py and ../check_labels.py (stdlib + BeautifulSoup only)."""
import copy, json, re, unicodedata
from urllib.parse import urljoin
from bs4 import BeautifulSoup, Comment, NavigableString, Tag

DROP = ["script", "style", "noscript", "template", "iframe", "audio", "video", "form",
        "input", "textarea", "button", "select", "svg", "head"]
BLOCK = set("p div section article aside header footer main nav ul ol li h1 h2 h3 h4 h5 h6 table tr "
            "thead tbody dl dt dd figure figcaption blockquote pre hr address details summary".split())

def tokens(text):
    text = unicodedata.normalize("NFKC", text).lower()
    out = []
    for m in re.finditer(r"\w+", text):
        w = m.group(0)
        # CJK characters count one token each
        parts = re.findall(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]|[^\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]+", w)
        out.extend(parts)
    return out

def is_hidden(el):
    if not isinstance(el, Tag):
        return False
    if el.has_attr("hidden"):
        return True
    if el.get("aria-hidden") == "true":
        return True
    st = (el.get("style") or "").replace(" ", "").lower()
    return "display:none" in st or "visibility:hidden" in st

def render(el, drop_hidden=True):
    """Plain text of an element, one line per block."""
    parts = []
    def walk(node):
        if isinstance(node, Comment):
            return
        if isinstance(node, NavigableString):
            parts.append(str(node))
            return
        if not isinstance(node, Tag):
            return
        if node.name in DROP:
            return
        if drop_hidden and is_hidden(node):
            return
        if node.name == "br":
            parts.append("\n")
            return
        if node.name in ("td", "th"):
            parts.append(" ")
        blk = node.name in BLOCK
        if blk:
            parts.append("\n")
        for c in node.children:
            walk(c)
        if blk:
            parts.append("\n")
    walk(el)
    text = "".join(parts)
    lines = [re.sub(r"[ \t\r\f\v\u00a0]+", " ", l).strip() for l in text.split("\n")]
    return "\n".join(l for l in lines if l)

def html_to_text(html):
    return render(BeautifulSoup(html, "html.parser"))

def parse_source(label_source):
    """'css: A | B; minus: X, Y'  or  'jsonld: description'  or  'nextdata: a.b.c'"""
    kind, _, rest = label_source.partition(":")
    kind = kind.strip()
    if kind == "css":
        main, _, minus = rest.partition("; minus:")
        sels = [s.strip() for s in main.split("|") if s.strip()]
        minus = [s.strip() for s in minus.split(",") if s.strip()]
        return kind, sels, minus
    return kind, rest.strip(), []

def region(soup, label_source, base_url):
    """Returns (text, links, html) of the notes region."""
    kind, sel, minus = parse_source(label_source)
    if kind == "css":
        texts, links, htmls = [], [], []
        for s in sel:
            els = soup.select(s)
            assert els, f"selector {s!r} matched nothing"
            for el in els:
                el = copy.copy(el)
                for m in minus:
                    for d in el.select(m):
                        d.decompose()
                texts.append(render(el))
                htmls.append(el.decode_contents())
                for a in el.find_all("a", href=True):
                    if any(is_hidden(p) for p in [a] + list(a.parents)):
                        continue
                    links.append(urljoin(base_url, a["href"].strip()))
        return "\n".join(texts), links, "\n".join(htmls)
    if kind == "jsonld":
        for sc in soup.find_all("script", type="application/ld+json"):
            data = json.loads(sc.string)
            items = data if isinstance(data, list) else data.get("@graph", [data])
            for it in items:
                if isinstance(it, dict) and sel in it and "Episode" in str(it.get("@type")):
                    val = it[sel]
                    if "<" in val:
                        soup2 = BeautifulSoup(val, "html.parser")
                        return render(soup2), [urljoin(base_url, a["href"]) for a in soup2.find_all("a", href=True)], val
                    return "\n".join(l.strip() for l in val.split("\n") if l.strip()), [], val
        raise AssertionError("no JSON-LD episode description")
    if kind == "nextdata":
        sc = soup.find("script", id="__NEXT_DATA__")
        data = json.loads(sc.string)
        for k in sel.split("."):
            data = data[k]
        soup2 = BeautifulSoup(data, "html.parser")
        return render(soup2), [urljoin(base_url, a["href"]) for a in soup2.find_all("a", href=True)], data
    raise ValueError(kind)

def find_seq(hay, needle, start=0):
    n = len(needle)
    for i in range(start, len(hay) - n + 1):
        if hay[i:i + n] == needle:
            return i
    return -1

def page_text(soup, drop_hidden=True):
    body = soup.body or soup
    return render(body, drop_hidden=drop_hidden)
