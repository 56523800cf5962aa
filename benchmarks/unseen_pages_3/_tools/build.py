#!/usr/bin/env python3
"""Build the pages of unseen_pages_3 from _tools/src/*.html.

Placeholders expanded in a source page:
  {{blob:js:SEED:SIZE}}   pseudo-minified JS filler (bundle/analytics code), ~SIZE bytes
  {{blob:css:SEED:SIZE}}  pseudo-minified CSS filler
  {{raw:NAME}}            contents of _tools/snips/NAME.html as is
  {{json:NAME}}           the snippet as a JSON string literal (with quotes), '</' escaped
  {{jsonu:NAME}}          the same with non-ASCII escaped as \\uXXXX
  {{text:NAME}}           the snippet's plain text (tags stripped), html-escaped for attributes
  {{jtext:NAME}}          the snippet's plain text as a JSON string literal
  {{trunc:NAME:N}}        plain text cut to about N chars at a word boundary + '…', html-escaped
Only the filler is generated; the visible markup of every page is written by hand in src/.
"""
import html
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.dirname(HERE)

WORDS = ("init render state props module exports default require push call apply bind "
         "event target value length prototype handler config options data node child "
         "parent style width height offset track consent vendor ready load error queue "
         "timer player media source buffer frame loader chunk cache token session").split()


def js_blob(seed, size):
    r = random.Random(seed)
    out = []
    n = 0
    while n < size:
        kind = r.random()
        a, b, c = (r.choice(WORDS) for _ in range(3))
        v = ''.join(r.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(r.randint(1, 2)))
        num = r.randint(100, 99999)
        if kind < 0.3:
            s = (f'{num}:function(e,t,n){{"use strict";var {v}=n({r.randint(10,9999)}),'
                 f'{v}{v}=n.n({v});t.{a}=function(e){{return e&&e.{b}?e.{c}:{v}{v}()(e)}}}},')
        elif kind < 0.55:
            s = (f'function {v}{num}(e){{if(!e||"object"!=typeof e)return!1;for(var t in e)'
                 f'if(Object.prototype.hasOwnProperty.call(e,t)&&e[t].{a}!==void 0)return e[t].{b};'
                 f'return null}}')
        elif kind < 0.75:
            s = (f'var {v}{b}={{{a}:"{c}-{num}",{b}:{r.randint(0,1)}===1,{c}:[{num},{num%97},{num%13}],'
                 f'endpoint:"/api/v{r.randint(1,4)}/{a}/{c}"}};')
        else:
            s = (f'window.__{a}Q=window.__{a}Q||[];window.__{a}Q.push(["{b}",{{id:"{num:x}",'
                 f'ts:Date.now(),{c}:document.readyState}}]);')
        out.append(s)
        n += len(s)
    return ''.join(out)


def css_blob(seed, size):
    r = random.Random(seed)
    props = ["margin:0", "padding:0 16px", "display:flex", "align-items:center", "font-size:14px",
             "line-height:1.5", "color:#121212", "background:#fff", "border-radius:4px",
             "justify-content:space-between", "font-weight:700", "text-decoration:none",
             "max-width:1200px", "position:relative", "overflow:hidden", "gap:8px",
             "border-bottom:1px solid #e2e2e2", "letter-spacing:.02em", "opacity:.8"]
    out = []
    n = 0
    while n < size:
        cls = ''.join(r.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(r.randint(4, 7)))
        s = f'.{cls}-{r.randint(0,99)}{{{";".join(r.sample(props, r.randint(2,5)))}}}'
        if r.random() < 0.1:
            s = f'@media (min-width:{r.choice([600,740,980,1140])}px){{{s}}}'
        out.append(s)
        n += len(s)
    return ''.join(out)


def strip_tags(s):
    s = re.sub(r'<br\s*/?>', '\n', s)
    s = re.sub(r'</(p|li|h\d|div)>', '\n', s)
    s = re.sub(r'<[^>]+>', '', s)
    s = html.unescape(s)
    lines = [re.sub(r'[ \t]+', ' ', ln).strip() for ln in s.split('\n')]
    return '\n'.join(ln for ln in lines if ln)


def snip(name):
    with open(os.path.join(HERE, 'snips', name + '.html'), encoding='utf-8') as f:
        return f.read().strip('\n')


def jlit(s, ascii_=False):
    return json.dumps(s, ensure_ascii=ascii_).replace('</', '<\\/')


def expand(m):
    parts = m.group(1).split(':')
    kind = parts[0]
    if kind == 'blob':
        return (js_blob if parts[1] == 'js' else css_blob)(parts[2], int(parts[3]))
    name = parts[1]
    if kind == 'raw':
        return snip(name)
    if kind == 'json':
        return jlit(snip(name))
    if kind == 'jsonu':
        return jlit(snip(name), True)
    if kind == 'text':
        return html.escape(strip_tags(snip(name)).replace('\n', ' '))
    if kind == 'jtext':
        return jlit(strip_tags(snip(name)))
    if kind == 'trunc':
        t = strip_tags(snip(name)).replace('\n', ' ')
        n = int(parts[2])
        if len(t) > n:
            t = t[:n].rsplit(' ', 1)[0] + '…'
        return html.escape(t)
    raise ValueError(m.group(0))


def main():
    ids = sys.argv[1:]
    for fn in sorted(os.listdir(os.path.join(HERE, 'src'))):
        pid = fn[:-5]
        if ids and pid not in ids:
            continue
        with open(os.path.join(HERE, 'src', fn), encoding='utf-8') as f:
            src = f.read()
        out = re.sub(r'\{\{([a-z]+:[^{}]+)\}\}', expand, src)
        with open(os.path.join(OUT, fn), 'w', encoding='utf-8') as f:
            f.write(out)
        print(f'{pid}: {len(out.encode()) // 1024} KB')


if __name__ == '__main__':
    main()
