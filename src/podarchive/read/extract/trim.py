"""Tidying the chosen notes block: furniture lines dropped, post furniture cut, split notes joined.

* :func:`drop_furniture_lines` — elements whose whole text is a label that is never notes
  ("Advertisement", "Podcast: Play in new window | Download"), and lines that only hold media
  links (a bare ``….mp3`` URL, "Download: mp3").
* :func:`cut_post_furniture` — the block's children from the first one that opens the post's
  furniture ("Download:", "Tags:", "Published on", "Related episodes", "Cite this episode", …),
  once prose came before it.
* :func:`split_siblings` — the block's siblings that continue it: same element and first class,
  with only empty siblings (an embed, an image) between (notes split by a player).
* :func:`repeated_cards` — other pages' cards by their shape, whatever their class.

The lead paragraph under the headline is :mod:`.lead`'s.
"""

from __future__ import annotations

import re

from bs4.element import Tag

from podarchive.read.extract.lines import (
    ACTION_RE,
    MEDIA_EXTENSIONS,
    PHOTO_CREDIT_RE,
    TAIL_HEADING_RE,
)
from podarchive.read.extract.soup import (
    HEADING_TAGS,
    attr,
    child_tags,
    collapse,
    first_child_with_text,
    tags,
)

#: Whole texts of elements that are never notes.
FURNITURE_TEXT_RE = re.compile(
    r"((skip )?advertisement|anzeige|werbung|publicidad|publicité|sponsored|supported by"
    r"|bild vergrößern|enlarge( this image)?|(hide|toggle) caption|weiterlesen|read more"
    r"|podcast:\s*play in new window(\s*\|\s*download)?(\s*\(.*\))?(\s*\|\s*embed)?"
    r"|play in new window(\s*\|\s*download)?|download( episode)?|share|embed"
    r"|leer más|ver más|mostrar más|mehr lesen|mehr anzeigen|lire la suite|lire plus"
    r"|show more|see more|continua a leggere|leia mais"
    r"|(mostrar|show|afficher|anzeigen)\s*/?\s*(ocultar|hide|masquer|verbergen)"
    r"|show less|see less|ver menos|mostrar menos|weniger anzeigen|afficher moins|leggi meno"
    r"|((click|tap|press)( on)?( the)? (image|picture|cover|artwork|button|play button|here|below"
    r"|above)( above| below)? to (listen|play|hear)( to)?( this| the)?( episode| show)?"
    r"|listen to (this|the) (episode|show)( here| now| below)?"
    r"|(escucha|escuchar) (este|el) episodio|(diese |die )?folge (anhören|hören)"
    r"|écouter (cet|l')\s*épisode|(ouça|ouvir) (este|o) episódio"
    r"|(sorry, )?this (episode|programme|program|show|clip|content) is (currently )?(not|no"
    r" longer) (currently )?available( to (play|listen))?( in your (country|region|location))?"
    r"|diese (folge|sendung|episode) ist (leider )?nicht mehr verfügbar"
    r"|cet épisode n'est plus disponible|este episodio ya no está disponible)[.:!…]*)",
    re.I,
)
#: How an element that opens the post's furniture (after the notes) starts.
POST_FURNITURE_RE = re.compile(
    r"(downloads?|herunterladen|descargar|tags|schlagwörter|schlagworte|etiquetas|filed under"
    r"|categories|kategorien?|categorías|share this|teilen mit|compartir)\s*:"
    r"|(published on|posted on|veröffentlicht am|publicado el|mehr zum thema|related episodes"
    r"|related posts|more episodes|weitere folgen|diese folge zitieren|cite this episode)\b",
    re.I,
)
#: An embed panel's code shown as text ("<iframe src=… ></iframe>").
EMBED_CODE_RE = re.compile(r"<(iframe|script|embed|object|blockquote)\b.*>", re.S | re.I)
#: A share panel's notice that a link or code was copied.
CLIPBOARD_RE = re.compile(
    r"cop(ied|y) to (the |your )?clipboard|copiado en el portapapeles|copiado para a área"
    r"|in die zwischenablage kopiert|copié dans le presse-papiers|copiato negli appunti",
    re.I,
)
MAX_NOTICE_CHARS = 100
MEDIA_URL_RE = re.compile(rf"https?://\S+\.({MEDIA_EXTENSIONS})(\?\S*)?$", re.I)
#: Headings of a box of other episodes or articles.
RELATED_HEADING_RE = re.compile(
    r"(related( episodes| posts| articles| stor(y|ies))?|more episodes|more stories"
    r"|more from this (show|podcast)"
    r"|you (may|might) also like|also in this podcast|mehr zum thema|weitere folgen"
    r"|das könnte sie auch interessieren|más episodios|te puede interesar|à écouter aussi"
    r"|more news|mehr nachrichten)\s*:?",
    re.I,
)
#: Classes of teaser cards (other episodes, other articles).
CARD_CLASS_RE = re.compile(r"(^|[\s_-])(teasers?|cards?|tiles?)($|[\s_-])", re.I)
CARD_HEADINGS = ("h2", "h3", "h4", "h5")
#: Elements in a furniture line, and in a card or a contents list, at most.
_MAX_LINE_TAGS = 24
_MAX_CARD_TAGS = 400
#: A box left with no more text than this once its cards are gone is their heading alone.
_BOX_HEADING_CHARS = 60
_LINE_TAGS = ("p", "div", "li", "span", "strong", "b", "em", "center", "small", "figcaption")
_MIN_PROSE_BEFORE = 40
#: How many single-child wrappers up :func:`split_siblings` looks for a split block's siblings.
WRAPPER_LEVELS = 3


def drop_furniture_lines(block: Tag, own_domain: str = "") -> None:
    """Remove the furniture lines under ``block`` (see the module docstring), teaser cards of
    other pages and tables of contents of in-page anchors. ``own_domain``: the page's site,
    whose other pages' cards come in sets (:func:`repeated_cards`).
    """
    for card in repeated_cards(block, own_domain):
        card.extract()
    sizes = _subtree_sizes(block)
    doomed = [
        tag
        for tag in tags(block, *_LINE_TAGS, "section", "article", "ul", "ol", "figure", "a")
        if sizes[id(tag)] <= _MAX_CARD_TAGS
        and (
            is_card(tag)
            or _is_contents(tag)
            or (sizes[id(tag)] <= _MAX_LINE_TAGS and _is_furniture_line(tag))
            or (sizes[id(tag)] <= _MAX_LINE_TAGS and _is_credited_caption(tag))
        )
    ]
    doomed += _contents_paragraphs(block)
    for tag in doomed:
        parent = tag.parent
        if parent is None:
            continue
        tag.extract()
        if is_card(tag):
            _drop_emptied(parent, block)


#: A card holds at most this much text, and one heading, within this many levels of it.
MAX_CARD_CHARS = 600
CARD_LEVELS = 4
_CARD_TAGS = frozenset({"div", "li", "section", "article"})


def repeated_cards(block: Tag, own_domain: str) -> list[Tag]:
    """Other pages' cards whose class need not say so: elements whose one heading is a link
    to another page of the site (relative, or on ``own_domain``), with a short text, that
    come in a set of two or more of the same element and first class. The outermost only."""
    groups: dict[tuple[str, str], list[Tag]] = {}
    for heading in tags(block, *CARD_HEADINGS):
        chain = _card_chain(heading, block) if _links_within_site(heading, own_domain) else []
        for element in chain:  # "li > div.c-epi" and a lone "div.c-epi" are the same card
            key = (element.name, next(iter(attr(element, "class").split()), ""))
            groups.setdefault(key, []).append(chain[-1])
    found = [card for group in groups.values() if len(group) > 1 for card in group]
    chosen = {id(card) for card in found}
    return [card for card in found if not any(id(p) in chosen for p in card.parents)]


def _links_within_site(heading: Tag, own_domain: str) -> bool:
    link = heading.find("a") or heading.find_parent("a")
    if not isinstance(link, Tag):
        return False
    href = attr(link, "href").strip()
    if not href or href.startswith(("#", "mailto:", "javascript:")):
        return False
    if href.startswith("/") and not href.startswith("//"):
        return True
    host = href.split("//", 1)[-1].split("/", 1)[0].lower().removeprefix("www.")
    return bool(own_domain) and host == own_domain


def _card_chain(heading: Tag, block: Tag) -> list[Tag]:
    """The elements around ``heading``, a few levels up, that hold no other heading and
    little text, inner first: the last is the card it heads."""
    chain: list[Tag] = []
    node = heading
    for _ in range(CARD_LEVELS):
        parent = node.parent
        if parent is None or parent is block:
            break
        if len(collapse(parent.get_text())) > MAX_CARD_CHARS:
            break
        if len(parent.find_all(CARD_HEADINGS, limit=2)) > 1:
            break
        node = parent
        if node.name in _CARD_TAGS:
            chain.append(node)
    return chain


def _subtree_sizes(block: Tag) -> dict[int, int]:
    """The number of elements in each element's subtree under ``block``, in one pass: the
    per-element looks below are then only made on small subtrees (never quadratic)."""
    order = list(tags(block))
    sizes = dict.fromkeys((id(tag) for tag in order), 1)
    sizes[id(block)] = 1
    for tag in reversed(order):
        parent = tag.parent
        if parent is not None and id(parent) in sizes:
            sizes[id(parent)] += sizes[id(tag)]
    return sizes


def _drop_emptied(parent: Tag, block: Tag) -> None:
    """Remove the boxes a card leaves with only their heading ("More news") in them."""
    for _ in range(3):
        if parent is block or len(collapse(parent.get_text())) > _BOX_HEADING_CHARS:
            return
        above = parent.parent
        parent.extract()
        if above is None:
            return
        parent = above


def _contents_paragraphs(block: Tag) -> list[Tag]:
    """Runs of two or more sibling paragraphs that are each one in-page anchor, with the heading
    before each run: a question overview, a table of contents."""
    found: list[Tag] = []
    for parent in [block, *tags(block)]:
        run: list[Tag] = []
        for child in [*child_tags(parent), None]:
            if child is not None and child.name == "p" and _only_in_page_anchor(child):
                run.append(child)
                continue
            if len(run) >= 2:
                heading = run[0].find_previous_sibling()
                if isinstance(heading, Tag) and heading.name in CARD_HEADINGS:
                    found.append(heading)
                found += run
            run = []
    return found


def _only_in_page_anchor(paragraph: Tag) -> bool:
    anchors = list(tags(paragraph, "a"))
    if len(anchors) != 1 or not attr(anchors[0], "href").startswith("#"):
        return False
    return collapse(anchors[0].get_text()) == collapse(paragraph.get_text())


def is_card(tag: Tag) -> bool:
    """A teaser card (its class says so, or an ``<article>`` inside the notes) whose heading
    is a link to elsewhere; or a box of links under a "Related episodes" heading."""
    if tag.name == "section" or tag.name == "div":
        first = next(iter(child_tags(tag)), None)  # the box's own heading opens it
        if (
            first is not None
            and first.name in CARD_HEADINGS
            and RELATED_HEADING_RE.fullmatch(collapse(first.get_text()))
        ):
            return True
    if tag.name == "a":  # <a class="ep-card"><img><div>title</div><p>…</p></a>: the link is
        return bool(CARD_CLASS_RE.search(attr(tag, "class"))) and _has_block(tag)  # the card
    if tag.name == "article":
        pass  # an <article> inside the notes block: another page's card if its heading links
    elif tag.name not in ("div", "section", "li") or not CARD_CLASS_RE.search(attr(tag, "class")):
        return False
    return has_linked_heading(tag, CARD_HEADINGS)


#: A card that is one link says at least this much (an icon link says nothing).
MIN_CARD_LINK_CHARS = 15


def _has_block(tag: Tag) -> bool:
    """Whether the link holds a card's blocks of text: a title, a teaser."""
    if len(collapse(tag.get_text())) < MIN_CARD_LINK_CHARS:
        return False
    return tag.find(("div", "p", "img", "h2", "h3", "h4", "h5", "h6")) is not None


def has_linked_heading(tag: Tag, headings: tuple[str, ...]) -> bool:
    """Whether the first heading (of ``headings``) under ``tag`` is, or holds, a link: a card's
    heading, linking to the page it stands for."""
    heading = tag.find(headings)
    if not isinstance(heading, Tag):
        return False
    wrapper = heading.find_parent("a")  # <a><h3>…</h3></a>: the card's link wraps its heading
    linked = wrapper is not None and any(parent is tag for parent in wrapper.parents)
    return linked or heading.find("a") is not None


def _is_contents(tag: Tag) -> bool:
    """A list of in-page anchors only (a table of contents), with the heading it has."""
    if tag.name not in ("ul", "ol"):
        return False
    anchors = list(tags(tag, "a"))
    if not anchors or not all(attr(a, "href").startswith("#") for a in anchors):
        return False
    inside = sum(len(collapse(a.get_text())) for a in anchors)
    if inside < 0.9 * len(collapse(tag.get_text())):
        return False
    heading = tag.find_previous_sibling()
    if isinstance(heading, Tag) and heading.name in CARD_HEADINGS:
        heading.extract()
    return True


#: A caption with a credit holds at most this many characters.
MAX_CAPTION_CHARS = 400


def _is_credited_caption(tag: Tag) -> bool:
    """A picture's caption that credits it ("… Photograph: A. Name/Agency"): a ``<figure>``, a
    ``<figcaption>`` or an element whose class says caption. Never the notes, wherever it sits."""
    if tag.name not in ("figure", "figcaption") and "caption" not in attr(tag, "class").lower():
        return False
    text = collapse(tag.get_text())
    if len(text) > MAX_CAPTION_CHARS:
        return False
    return PHOTO_CREDIT_RE.search(text) is not None or tag.find(class_=_CREDIT_CLASS_RE) is not None


_CREDIT_CLASS_RE = re.compile(r"credit", re.I)


def _is_action_row(text: str, anchors: list[Tag]) -> bool:
    """A row of two or more links that are each a player's or a post's action ("Download MP3",
    "Share", "Transcript"), with nothing but separators between them."""
    if len(anchors) < 2:
        return False
    labels = [collapse(anchor.get_text()) for anchor in anchors]
    if not all(ACTION_RE.fullmatch(label) for label in labels):
        return False
    return len(text) - sum(len(label) for label in labels) <= 2 * len(labels)


def _is_furniture_line(tag: Tag) -> bool:
    text = collapse(tag.get_text())
    if not text:
        return False
    if FURNITURE_TEXT_RE.fullmatch(text):
        return True
    if MEDIA_URL_RE.match(text) or EMBED_CODE_RE.fullmatch(text):
        return True
    if len(text) <= MAX_NOTICE_CHARS and CLIPBOARD_RE.search(text):
        return True
    anchors = [a for a in tags(tag, "a") if attr(a, "href")]
    if _is_action_row(text, anchors):
        return True
    if not anchors or not all(MEDIA_URL_RE.match(attr(a, "href").strip()) for a in anchors):
        return False
    outside = len(text) - sum(len(collapse(a.get_text())) for a in anchors)
    return outside <= 16  # "Download: mp3 (30 MB)"


def cut_post_furniture(block: Tag) -> None:
    """Remove the block's children from the first that opens the post's furniture on."""
    prose = 0
    children = child_tags(block)
    for index, child in enumerate(children):
        text = collapse(child.get_text())
        if prose >= _MIN_PROSE_BEFORE and POST_FURNITURE_RE.match(text):
            for doomed in children[index:]:
                doomed.extract()
            return
        prose += len(text)


def split_siblings(block: Tag) -> list[Tag]:
    """``block`` and the siblings that continue it (see the module docstring), in order.

    The block may sit alone in wrappers: the siblings of each wrapper up to
    :data:`WRAPPER_LEVELS` levels are looked at too.
    """
    node = block
    for _ in range(WRAPPER_LEVELS):
        run = _continued(node)
        if len(run) > 1:
            return run
        parent = node.parent
        if parent is None or parent.name in ("body", "html", "main", "article"):
            break
        if len(child_tags(parent)) != 1:
            break
        node = parent
    return [block]


#: Prefixes of generated, atomic or hashed classes (React Native Web, styled-components,
#: emotion, styled-jsx, Svelte) that elements share whatever they hold.
ATOMIC_CLASS_PREFIXES = ("css-", "r-", "sc-", "jsx-", "svelte-", "emotion-")


def _opens_section_after(box: Tag) -> bool:
    """Whether ``box`` opens with a heading of a section after the notes (other episodes, the
    show, its hosts)."""
    first = first_child_with_text(box)
    if first is None or first.name not in HEADING_TAGS:
        return False
    text = collapse(first.get_text())
    return bool(TAIL_HEADING_RE.fullmatch(text) or RELATED_HEADING_RE.fullmatch(text))


def _continued(block: Tag) -> list[Tag]:
    """``block`` and its siblings of the same element and first class, empty ones skipped."""
    parent = block.parent
    signature = _box_signature(block)
    if parent is None or signature is None:
        return [block]
    siblings = child_tags(parent)
    index = next(i for i, sibling in enumerate(siblings) if sibling is block)
    before = _same_boxes(siblings, index, -1, signature)
    after = _same_boxes(siblings, index, 1, signature)
    return [*before[::-1], block, *after]


def _box_signature(block: Tag) -> tuple[str, str] | None:
    """A ``<div>``'s name and first class, which its continuations share; None for another
    element, a ``<div>`` without a class, or one whose class every element has."""
    if block.name != "div" or not attr(block, "class"):
        return None
    signature = (block.name, attr(block, "class").split()[0])
    if signature[1].lower().startswith(ATOMIC_CLASS_PREFIXES):
        return None  # every element of the page has that class: it says nothing
    return signature


def _same_boxes(
    siblings: list[Tag], index: int, step: int, signature: tuple[str, str]
) -> list[Tag]:
    """The siblings with text and ``signature`` from ``index`` outwards by ``step`` (-1 or 1),
    nearest first, up to one with text and another signature (or, after the block, one that
    opens a section after the notes); empty ones are skipped."""
    found: list[Tag] = []
    position = index + step
    while 0 <= position < len(siblings):
        sibling = siblings[position]
        if (sibling.name, (attr(sibling, "class").split() or [""])[0]) == signature:
            if step > 0 and _opens_section_after(sibling):
                break  # "Otros audios de …": the same box, holding what follows the notes
            if collapse(sibling.get_text()):
                found.append(sibling)
        elif collapse(sibling.get_text()):
            break
        position += step
    return found
