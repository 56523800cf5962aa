"""Follow-up to check2.py: for every anchor that check2 lists as 'unlisted' (anchor text found in
notes_text but URL not labelled), tell whether the anchor lies INSIDE the labelled notes span of the
page's visible text (a real labelling miss) or outside it (a name that merely recurs in furniture)."""
import json, re, glob, os, unicodedata
from bs4 import BeautifulSoup
from urllib.parse import urljoin
D = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCK = {'p','div','li','h1','h2','h3','h4','h5','h6','br','tr','dt','dd','ul','ol','section','article',
         'footer','header','table','details','summary','figure','figcaption','blockquote','aside','main','nav','hr','th'}
def toks(s): return re.findall(r'\w+', unicodedata.normalize('NFKC', s).lower())
def find(w, p, after=0):
    for i in range(after, len(w) - len(p) + 1):
        if w[i:i+len(p)] == p: return i
    return None
bad = 0
for lf in sorted(glob.glob(f'{D}/labels/*.json')):
    L = json.load(open(lf, encoding='utf-8')); i = L['id']
    soup = BeautifulSoup(open(f'{D}/{i}.html', encoding='utf-8').read(), 'html.parser')
    for t in soup(['script','style','noscript','template','head']): t.decompose()
    ntj = ' '.join(toks(L['notes_text'])); known = set(L['notes_links']) | set(L.get('optional_links', []))
    flagged = {}
    for k, a in enumerate(soup.find_all('a', href=True)):
        t = ' '.join(toks(a.get_text())); u = urljoin(L['page_url'], a['href'])
        if len(t.split()) >= 2 and t in ntj and u not in known and not a['href'].startswith('#'):
            flagged[f'zzmark{k}zz'] = (t, u); a.insert_before(f' zzmark{k}zz ')
    for t in soup.find_all(True):
        if t.name in BLOCK: t.insert_before('\n'); t.insert_after('\n')
    w = toks(soup.get_text(''))
    starts = [s for s in (L['notes_start'], L.get('alt_start')) if s]
    ends = [s for s in (L['notes_end'], L.get('alt_end'), L.get('extended_end')) if s]
    sp = [x for x in (find(w, toks(s)) for s in starts) if x is not None]
    b = min(sp) if sp else None
    ep = [x + len(toks(e)) for e in ends for x in [find(w, toks(e), b or 0)] if x is not None]
    e = max(ep) if ep else None
    inside = []
    for m, (t, u) in flagged.items():
        pos = w.index(m)
        where = 'n/a (notes not in visible text)' if b is None or e is None else ('INSIDE' if b <= pos < e else 'outside')
        inside.append((where, t, u))
    miss = [x for x in inside if x[0] == 'INSIDE']
    bad += bool(miss)
    print(('ERR ' if miss else 'OK  ') + i, 'flagged', len(inside), ', '.join(f'{wh}:{t}' for wh, t, u in inside))
print('inside-notes unlisted links:', bad)
