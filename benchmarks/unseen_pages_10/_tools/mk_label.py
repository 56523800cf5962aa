"""Labelling aid: fill notes_text (and notes_chars_approx) of a label from the page's visible
text between the hand-chosen notes_start and notes_end. Usage: mk_label.py label_specs/<id>.json [...]
spec: the label without notes_text; optional "_text_from": "vis" (default) or "raw:<literal text>";
"_drop": lines to leave out (player/ad/contributor lines inside the span); "_replace": [old, new] fixes.
Needs bs4. Used only as a typing aid: the boundaries, links and judgements are hand-chosen."""
import json, re, sys, os, unicodedata, html
from bs4 import BeautifulSoup
D = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
def vis_text(raw):
    soup = BeautifulSoup(raw, 'html.parser')
    for t in soup(['script', 'style', 'noscript', 'template', 'textarea']): t.extract()
    for br in soup.find_all('br'): br.replace_with('\n')
    blocks = ['p','li','h1','h2','h3','h4','h5','h6','div','section','article','ul','ol','dt','dd','tr','blockquote','figcaption','header','footer','aside','summary','details','pre']
    for b in soup.find_all(blocks):
        b.insert_before('\n'); b.insert_after('\n')
    t = soup.get_text('')
    lines = [re.sub(r'[ \t\u00a0]+', ' ', l).strip() for l in t.split('\n')]
    return '\n'.join(l for l in lines if l)
def rx(s):
    w = re.findall(r'\w+', unicodedata.normalize('NFKC', s))
    return r'\W+'.join(map(re.escape, w))
def cut(text, start, end):
    ms = re.search(rx(start), text, re.I)
    if not ms: raise SystemExit('start not found: ' + start)
    me = re.search(rx(end), text[ms.start():], re.I)
    if not me: raise SystemExit('end not found: ' + end)
    s = text[ms.start(): ms.start() + me.end()]
    # keep trailing punctuation of the end
    tail = text[ms.start() + me.end():]
    m = re.match(r'[^\w\s]*', tail); s += m.group(0) if m else ''
    return s
for spec in sys.argv[1:]:
    L = json.load(open(spec))
    src = L.pop('_text_from', 'vis')
    if src == 'vis':
        raw = open(f"{D}/{L['id']}.html", encoding='utf-8').read()
        text = vis_text(raw)
    else:
        text = src[4:]
    drop = L.pop('_drop', [])
    nt = cut(text, L['notes_start'], L['notes_end'])
    L['notes_text'] = '\n'.join(l for l in nt.split('\n') if l not in drop)
    for a, b in L.pop('_replace', []):
        L['notes_text'] = L['notes_text'].replace(a, b)
    L['notes_chars_approx'] = len(L['notes_text'])
    order = ['id','title','page_url','platform','feed','has_notes','notes_start','notes_end','alt_start','alt_end','extended_end','notes_links','optional_links','extended_links','text_urls','notes_text','notes_chars_approx','label_source','visible_end','doubt']
    out = {k: L[k] for k in order if k in L}
    out.update({k: v for k, v in L.items() if k not in out})
    json.dump(out, open(f"{D}/labels/{L['id']}.json", 'w', encoding='utf-8'), ensure_ascii=False, indent=1)
    print(L['id'], out['notes_chars_approx'], 'chars;', len(out['notes_links']), 'links')
