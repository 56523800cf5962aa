#!/usr/bin/env python3
"""Check the hand labels of unseen_pages_3 against the built pages and write labels/<id>.json.

Hand label sources live in _tools/labels/<id>.json. For each page this script
  * builds a text stream of the page (block elements on their own lines; hidden parts
    — display:none, [hidden], aria-hidden, <noscript>, <template> — are marked),
  * locates notes_start / notes_end / alt_start / alt_end / extended_end as exact token runs,
    reporting where each was found: V (visible), H (hidden DOM text), R (raw source only:
    JSON-LD, meta, app state),
  * lists the <a href> inside the located notes span and compares them with notes_links
    (+ optional_links),
  * fills notes_text from the span when the hand label has none, and writes labels/<id>.json.
Usage: check.py [--show ID] [ids...]
"""
import html
import json
import os
import re
import sys
import unicodedata
from urllib.parse import urljoin

from bs4 import BeautifulSoup, Comment, NavigableString, Tag

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.dirname(HERE)
BLOCK = set('p div li ul ol h1 h2 h3 h4 h5 h6 section article header footer nav aside br tr td th '
            'table dl dt dd figure figcaption blockquote main form button label hr pre time'.split())
SKIP = {'script', 'style', 'head', 'svg', 'iframe', 'audio', 'video', 'source', 'link', 'meta'}
TOK = re.compile(r'[\u3400-\u9fff\uf900-\ufaff]|[^\W_]+(?:_[^\W_]+)*|_+', re.U)


def toks(s):
    s = unicodedata.normalize('NFKC', s).lower()
    out = []
    for m in TOK.finditer(s):
        t = m.group(0)
        if re.fullmatch(r'_+', t):
            continue
        out.append((t, m.start(), m.end()))
    return out


def is_hidden(tag):
    if tag.name in ('noscript', 'template'):
        return True
    if tag.has_attr('hidden'):
        return True
    if tag.get('aria-hidden') == 'true':
        return True
    st = (tag.get('style') or '').replace(' ', '').lower()
    return 'display:none' in st or 'visibility:hidden' in st


class Stream:
    def __init__(self, soup):
        self.parts = []  # (text, hidden)
        self.anchors = []  # (href, start, hidden)
        self.pos = 0
        self.walk(soup, False)
        self.text = ''.join(p for p, _ in self.parts)
        # char-level hidden mask
        self.hidden = []
        for p, h in self.parts:
            self.hidden.extend([h] * len(p))

    def add(self, s, hidden):
        self.parts.append((s, hidden))
        self.pos += len(s)

    def walk(self, node, hidden):
        for ch in node.children:
            if isinstance(ch, Comment):
                continue
            if isinstance(ch, NavigableString):
                if type(ch) is not NavigableString:
                    continue
                s = re.sub(r'\s+', ' ', str(ch))
                self.add(s if s.strip() else ' ', hidden)
                continue
            if not isinstance(ch, Tag) or ch.name in SKIP:
                continue
            h = hidden or is_hidden(ch)
            block = ch.name in BLOCK
            if block:
                self.add('\n', h)
            if ch.name == 'a' and ch.get('href'):
                self.anchors.append((ch['href'], self.pos, h))
            if ch.name == 'img' and ch.get('alt'):
                pass
            self.walk(ch, h)
            if block:
                self.add('\n', h)


def find_seq(tokens, probe, start_from=0):
    n = len(probe)
    for i in range(start_from, len(tokens) - n + 1):
        if all(tokens[i + k][0] == probe[k] for k in range(n)):
            return i
    return -1


def raw_text(src):
    t = src
    t = re.sub(r'\\u([0-9a-fA-F]{4})', lambda m: chr(int(m.group(1), 16)), t)
    t = t.replace('\\n', ' ').replace('\\"', '"').replace('\\/', '/')
    t = re.sub(r'<[^>]+>', ' ', t)
    t = re.sub(r'&lt;[^&]*?&gt;', ' ', t)
    return html.unescape(html.unescape(t))


def check(pid, show=False):
    lab_src = os.path.join(HERE, 'labels', pid + '.json')
    page = os.path.join(OUT, pid + '.html')
    with open(lab_src, encoding='utf-8') as f:
        lab = json.load(f)
    with open(page, encoding='utf-8') as f:
        src = f.read()
    soup = BeautifulSoup(src, 'html.parser')
    st = Stream(soup.body or soup)
    stoks = toks(st.text)
    rtoks = toks(raw_text(src))
    problems = []
    if show:
        vis = ''.join(p for p, h in st.parts if not h)
        print(re.sub(r'\n\s*\n+', '\n', vis))

    def locate(key, from_end=False, after=0):
        val = lab.get(key)
        if not val:
            return None
        tk = [t for t, _, _ in toks(val)]
        if len(tk) < 12:
            problems.append(f'{key} has only {len(tk)} tokens')
        probe = tk[-12:] if from_end else tk[:12]
        i = find_seq(stoks, probe, after)
        if i >= 0:
            j = i + len(probe) - 1
            c0, c1 = stoks[i][1], stoks[j][2]
            where = 'H' if all(st.hidden[c0:c1]) else 'V'
            return (where, i, j, c0, c1)
        if find_seq(rtoks, probe) >= 0:
            return ('R', None, None, None, None)
        problems.append(f'{key} NOT FOUND')
        return ('-', None, None, None, None)

    s = locate('notes_start')
    e = locate('notes_end', True, s[1] if s and s[1] is not None else 0)
    locs = {'start': s[0], 'end': e[0]}
    for k, fe in (('alt_start', False), ('alt_end', True), ('extended_end', True)):
        if lab.get(k):
            locs[k] = locate(k, fe, s[1] if (k != 'alt_start' and s[1] is not None) else 0)[0]
    url = lab['page_url']
    links_in = []
    span_text = None
    if s[3] is not None and e[4] is not None:
        c0, c1 = s[3], e[4]
        c1 += len(re.match(r'[^\w\s\u3400-\u9fff]*', st.text[c1:]).group(0))
        span_text = st.text[c0:c1]
        if s[0] == 'V':  # drop hidden parts inside a visible span
            span_text = ''.join(ch for ch, h in zip(span_text, st.hidden[c0:c1]) if not h)
        for href, pos, h in st.anchors:
            if c0 <= pos < c1 and not href.startswith('#') and not href.startswith('javascript'):
                links_in.append(urljoin(url, href))
    elif lab.get('notes_links'):
        # notes only in app state / JSON: check the links occur in the source
        for l in lab['notes_links']:
            if l not in src and l.replace('/', '\\/') not in src and html.escape(l) not in src:
                problems.append(f'link not in source: {l}')
    nl = lab.get('notes_links', [])
    opt = set(lab.get('optional_links', [])) | set(lab.get('extended_links', []))
    if span_text is not None:
        got = list(dict.fromkeys(links_in))
        for l in got:
            if l not in nl and l not in opt and l not in lab.get('_ignore_links', []):
                problems.append(f'extra link in span: {l}')
        for l in nl:
            if l not in got:
                problems.append(f'labelled link not in span: {l}')
    if 'notes_text' not in lab:
        if span_text is None:
            problems.append('notes_text missing and span not located')
        else:
            lines = [re.sub(r'\s+', ' ', ln).strip() for ln in span_text.split('\n')]
            ex = set(lab.get('_exclude_lines', []))
            lab['notes_text'] = '\n'.join(ln for ln in lines if ln and ln not in ex)
    # the notes_text must contain start/end probes
    if lab.get('notes_text'):
        nt = [t for t, _, _ in toks(lab['notes_text'])]
        for k, fe in (('notes_start', False), ('notes_end', True)):
            tk = [t for t, _, _ in toks(lab[k])]
            pr = tk[-12:] if fe else tk[:12]
            if find_seq([(t, 0, 0) for t in nt], pr) < 0:
                problems.append(f'{k} not in notes_text')
    for k in ('id', 'title', 'page_url', 'platform', 'has_notes', 'notes_start', 'notes_end',
              'notes_links', 'notes_text', 'feed', 'doubt'):
        if k not in lab:
            problems.append(f'missing key {k}')
    if lab.get('feed') in ('same', 'short') and not os.path.exists(os.path.join(OUT, 'feeds', pid + '.html')):
        problems.append('feed file missing')
    if lab.get('feed') == 'none' and os.path.exists(os.path.join(OUT, 'feeds', pid + '.html')):
        problems.append('feed file present but feed=none')
    order = ['id', 'title', 'page_url', 'platform', 'has_notes', 'notes_start', 'notes_end',
             'alt_start', 'alt_end', 'extended_end', 'notes_links', 'optional_links',
             'extended_links', 'text_urls', 'notes_text', 'feed', 'doubt']
    outlab = {k: lab[k] for k in order if k in lab}
    outlab.update({k: v for k, v in lab.items() if k not in outlab and not k.startswith('_')})
    with open(os.path.join(OUT, 'labels', pid + '.json'), 'w', encoding='utf-8') as f:
        json.dump(outlab, f, ensure_ascii=False, indent=1)
        f.write('\n')
    size = len(src.encode()) // 1024
    print(f'{pid:38s} {size:3d}KB feed={lab.get("feed"):5s} links={len(nl):2d} '
          f'locs={locs} {"OK" if not problems else "PROBLEMS"}')
    for p in problems:
        print('    -', p)
    return not problems


def main():
    args = sys.argv[1:]
    show = False
    if args and args[0] == '--show':
        show = True
        args = args[1:]
    ids = args or sorted(fn[:-5] for fn in os.listdir(os.path.join(HERE, 'labels')))
    ok = all([check(i, show) for i in ids])
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
