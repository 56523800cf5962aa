import json, re, sys, unicodedata, html, os, glob
from bs4 import BeautifulSoup
from urllib.parse import urljoin
D = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
def toks(s):
    s = unicodedata.normalize('NFKC', s).lower()
    return re.findall(r'\w+', s)
def contains(hay, needle):
    h = ' '.join(toks(hay)); n = ' '.join(toks(needle))
    return n in h
bad = 0
for lf in sorted(glob.glob(f'{D}/labels/*.json')):
    L = json.load(open(lf)); i = L['id']
    raw = open(f'{D}/{i}.html', encoding='utf-8').read()
    soup = BeautifulSoup(raw, 'html.parser')
    for t in soup(['script','style','noscript','template']): t.extract()
    vis = soup.get_text(' ')
    full = html.unescape(re.sub(r'<[^>]+>', ' ', raw.replace('\\u003c','<').replace('\\u003e','>').replace('\\"','"').replace('\\/','/').replace('\\n',' ')))
    errs = []
    for k in ['id','title','page_url','platform','has_notes','notes_start','notes_end','notes_links','notes_text','feed','doubt']:
        if k not in L: errs.append('missing '+k)
    for k in ['notes_start','notes_end','alt_start','alt_end','extended_end']:
        if k in L:
            if len(toks(L[k])) < 12: errs.append(f'{k} <12 tokens')
            where = 'vis' if contains(vis, L[k]) else ('raw' if contains(full, L[k]) else None)
            if not where: errs.append(f'{k} NOT FOUND')
            elif where == 'raw' and k in ('notes_start',): errs.append(f'{k} only in raw (ok if teaser)')
    if not contains(L['notes_text'], L['notes_start']): errs.append('notes_text lacks start')
    if not contains(L['notes_text'], L['notes_end']): errs.append('notes_text lacks end')
    hrefs = set()
    s2 = BeautifulSoup(raw, 'html.parser')
    for a in s2.find_all('a', href=True): hrefs.add(urljoin(L['page_url'], a['href']))
    for u in L['notes_links']:
        if u not in hrefs and u not in raw.replace('\\/','/'): errs.append('link not in page: '+u)
    for u in L.get('optional_links', []):
        if u not in hrefs and u not in raw: errs.append('optional link not in page: '+u)
    if L['feed'] in ('same','short') and not os.path.exists(f'{D}/feeds/{i}.html'): errs.append('feed file missing')
    if L['feed'] == 'none' and os.path.exists(f'{D}/feeds/{i}.html'): errs.append('feed file exists for none')
    size = len(raw.encode())
    if not 8000 <= size <= 40000: errs.append(f'size {size}')
    print(('OK  ' if not errs else 'ERR ') + i, size, len(L['notes_links']), L['feed'], '; '.join(errs))
    bad += bool([e for e in errs if 'ok if teaser' not in e])
print('bad', bad)
