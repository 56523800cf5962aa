"""Compare feeds/<id>.html token counts with the label's notes_text (same ~ equal, short < half)."""
import json, glob, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_labels import toks
from bs4 import BeautifulSoup
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for f in sorted(glob.glob(os.path.join(ROOT, "labels", "*.json"))):
    L = json.load(open(f, encoding="utf-8"))
    p = os.path.join(ROOT, "feeds", L["id"] + ".html")
    if not os.path.exists(p): continue
    ft = toks(BeautifulSoup(open(p, encoding="utf-8").read(), "html.parser").get_text(" "))
    nt = toks(L["notes_text"])
    print(f'{L["id"]}: feed={L["feed"]} feed_tokens={len(ft)} notes_tokens={len(nt)} common_prefix_ok={ft[:8]==nt[:8]}')
