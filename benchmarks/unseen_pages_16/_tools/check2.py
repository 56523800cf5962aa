import json, re, glob, os, unicodedata, html
from bs4 import BeautifulSoup
from urllib.parse import urljoin
D = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
def toks(s): return re.findall(r'\w+', unicodedata.normalize('NFKC', s).lower())
for lf in sorted(glob.glob(f'{D}/labels/*.json')):
    L = json.load(open(lf)); i = L['id']
    raw = open(f'{D}/{i}.html', encoding='utf-8').read()
    full = html.unescape(re.sub(r'<[^>]+>', ' ', raw.replace('\\u003c','<').replace('\\u003e','>').replace('\\"','"').replace('\\/','/').replace('\\n',' ')))
    ft = ' '.join(toks(full)); nt = toks(L['notes_text'])
    sh = [' '.join(nt[k:k+6]) for k in range(max(1,len(nt)-5))]
    miss = [s for s in sh if s not in ft]
    # links whose anchor text is in notes_text
    soup = BeautifulSoup(raw, 'html.parser')
    ntj = ' '.join(nt); extra=[]
    known = set(L['notes_links'])|set(L.get('optional_links',[]))
    for a in soup.find_all('a', href=True):
        t = ' '.join(toks(a.get_text()))
        u = urljoin(L['page_url'], a['href'])
        if len(t.split())>=2 and t in ntj and u not in known and not a['href'].startswith('#'): extra.append((t[:40],u))
    print(i, 'shingles missing', len(miss), '/', len(sh), miss[:3], 'unlisted-links', extra)
