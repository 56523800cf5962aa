"""What a line of a page says, by its text alone: the vocabulary of the notes' edges.

Pure functions on strings (no tree): a meta line of dates and durations, a line of fields, a
link to a podcast app, a heading that opens a show's section. :mod:`.edges` walks the tree
and asks these.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet

from podarchive.core.urls import domain_of

_WORD_RE = re.compile(r"\w+")

_MONTHS = (
    "jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june"
    "|july|august|september|october|november|december|januar|februar|märz|mai|juni|juli"
    "|oktober|dezember|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre"
    "|noviembre|diciembre|janvier|février|mars|avril|juin|juillet|août|septembre|octobre"
    "|novembre|décembre"
)
#: What a meta line is made of: dates, times, durations, episode and season numbers.
META_PART_RE = re.compile(
    r"\b\d+\s*(min|mins|minutes|minuten|minutos|hr|hrs|hours?|h|m|s|sec|secs|std)\b\.?"
    rf"|\b({_MONTHS})\b\.?|\b\d{{4}}-\d{{1,2}}-\d{{1,2}}\b|\b\d{{1,2}}[./]\d{{1,2}}[./]\d{{2,4}}\b"
    r"|\b\d{1,2}:\d{2}(:\d{2})?\s*(am|pm|a\.m\.|p\.m\.)?|\b\d{1,2}(st|nd|rd|th)?\b,?|\b\d{4}\b"
    r"|\b(episode|ep|folge|episodio|épisode|season|staffel|temporada|saison|part|teil)\b\.?\s*\d+"
    r"|\bs\d+\s*e\d+\b|#\d+|\b(et|est|cet|utc|gmt|pt|pst|edt)\b"
    r"|\b(published|updated|aired|posted|veröffentlicht|publicado|publié)( on| am| el| le)?\b"
    r"|\b(today|yesterday|heute|gestern|hoy|ayer)\b|[•·|—–/-]"
    r"|\d{4}\s*[年년]\s*\d{1,2}\s*[月월]\s*(\d{1,2}\s*[日일])?|\d{1,2}\s*[月월]\s*\d{1,2}\s*[日일]"
    r"|\d+\s*(分钟|分|秒|小时|時間|분|시간)",
    re.I,
)
#: How a line of platform badges opens ("Available on Spotify Apple Podcasts").
BADGES_RE = re.compile(
    r"(available|listen|also) (on|at|in)|listen (now|to)|subscribe|hören (auf|bei)|jetzt hören"
    r"|escúchalo en|escuchar en|écouter sur|abonnieren|follow (us|the show)",
    re.I,
)
#: What separates the fields of a meta line.
FIELD_SEPARATOR_RE = re.compile(r"\s[•·|]\s|\s[—–]\s")
#: Hosts of podcast apps and directories: a link to one by itself is a badge.
PODCAST_APPS = (
    "podcasts.apple.com",
    "itunes.apple.com",
    "open.spotify.com",
    "spotify.com",
    "spotify.link",
    "music.amazon.com",
    "music.amazon.de",
    "music.amazon.co.uk",
    "podcasts.google.com",
    "overcast.fm",
    "pca.st",
    "pocketcasts.com",
    "castro.fm",
    "castbox.fm",
    "podcastaddict.com",
    "player.fm",
    "stitcher.com",
    "iheart.com",
    "tunein.com",
    "deezer.com",
    "music.youtube.com",
    "radiopublic.com",
    "podchaser.com",
    "podcastindex.org",
    "podverse.fm",
    "fountain.fm",
    "goodpods.com",
    "audible.com",
    "ivoox.com",
    "podimo.com",
    "xiaoyuzhoufm.com",
    "listen.style",
)
#: A media file's path: a download badge.
MEDIA_EXTENSIONS = "mp3|m4a|aac|ogg|oga|opus|wav|flac|mp4|m4v"
MEDIA_PATH_RE = re.compile(rf"\.({MEDIA_EXTENSIONS})$", re.I)
#: Whole texts of a player's or a post's action buttons.
ACTION_RE = re.compile(
    r"(download|share|embed|subscribe|rss|feed|follow|play|listen|transcript|herunterladen"
    r"|teilen|abonnieren|descargar|compartir|suscribirse|télécharger|partager|s'abonner)"
    r"(\s*(mp3|episode|now|\(.{1,20}\)))?",
    re.I,
)
#: A list of badges has at most this many items, each at most this long.
MAX_BADGES = 8
MAX_BADGE_CHARS = 40
#: A category chip (a link within the site) has at most this many words.
CHIP_WORDS = 3
#: A meta line keeps at most this many words once its dates and numbers are gone.
META_SPARE_WORDS = 5
#: Headings of the notes' own sections: their links and sources (a chapter list is the
#: platform's, from the episode's chapters, and not taken by them).
NOTES_SECTION_RE = re.compile(
    r"(episode |the )?(show ?notes|notes|links|resources|references|sources|further reading"
    r"|mentioned in (this|the) episode|in this episode)"
    r"|shownotes|links (zur|zu dieser|zu der) (folge|sendung|episode)|weiterführende links"
    r"|quellen|literatur|enlaces|fuentes|liens|pour aller plus loin|collegamenti|fonti"
    r"|länkar|lenker|linki|źródła|links e referências|referências|リンク|参考(リンク)?|链接"
    r"|참고 링크",
    re.I,
)
#: Headings of the show's sections after the notes.
TAIL_HEADING_RE = re.compile(
    r"(about( the)? (show|podcast|series|programm?e?)|über (den|diesen) podcast"
    r"|creators?( (&|and) guests?)?|hosts?( (&|and) guests?)?|mitwirkende|contributors?"
    r"|recent episodes|latest episodes|other episodes|more episodes|all episodes|episodes"
    r"|(previous|past|older|earlier) episodes|episodios anteriores|últimos episodios"
    r"|(ältere|vorherige|frühere|letzte|weitere) (podcast-?)?(folgen|episoden)"
    r"|épisodes précédents|episodi precedenti"
    r"|tags?|etiquetas|schlagwörter|stichwörter|étiquettes|keywords"
    r"|パーソナリティ|出演者|主播|主持人|关于我们|関連する回|関連エピソード|相关节目|相关单集"
    r"|((full|read the|episode) )?(transcript|manuskript|transkript|transcripción|transcription"
    r"|trascrizione|transcrição)( (zur sendung|der folge|of this episode|del episodio"
    r"|de l'épisode|dell'episodio))?"
    r"|(이 채널의 )?다른 에피소드|이런 채널은 어때요\??|추천 (채널|에피소드)|댓글( \d+)?"
    r"|このチャンネルの(放送|エピソード)|おすすめ(のチャンネル|の番組|のエピソード)?"
    r"|(レター|コメント|评论|留言)\s*([（(]\d+[)）])?|相关推荐|推荐节目"
    r"|popular now( in .{1,40})?|most (read|popular|viewed)( .{1,40})?|trending( now)?"
    r"|(otros|más|other|more|autres|altri|weitere|andere) (audios?|episodios|programas|shows"
    r"|programmes?|programs|émissions|puntate|sendungen)( (de|del|of|from|von|du|des|di)"
    r"( the| la| el| der)? .{1,60})?"
    r"|(\d+ )?(comments?|commenti|comentarios|kommentare|commentaires|reacties|comentários)"
    r"( \(\d+\))?"
    r"|((attribution|atribuição|atribución|créditos?)( (e|and|und|y|et) )?)?"
    r"(licen[cs]es?|licenças?|licencias?|lizenzen|lizenz)"
    r"|more from .{1,60}|more (shows|podcasts)|listen (on|to)|subscribe|follow (the show|us)"
    r"|weitere (folgen|episoden)|alle folgen|más episodios|otros episodios|autres épisodes"
    r"|((diese sendung|den podcast|this (show|podcast)) )?(als podcast )?abonnieren"
    r"|(subscribe|abonnez-vous|suscríbete|iscriviti|abonneer( je)?|assine) (to|au|al|op|o)"
    r"( (this|the|ce|el|il|de|o))? (podcast|show|programme|émission|programa|programma)"
    r"|dans la même série|à découvrir( aussi)?|zum weiterhören|auch interessant"
    r"|da non perdere|ook interessant|read (this )?next|up next"
    r"|حلقات سابقة|الحلقات السابقة|حلقات أخرى|المزيد من الحلقات|جميع الحلقات|الأكثر (قراءة|استماعا)"
    r"|פרקים (קודמים|נוספים|אחרונים)|כל הפרקים|(önceki|diğer|son|tüm) bölümler"
    r"|(další|předchozí|starší|všechny) díly|(további|korábbi|legutóbbi) (epizódok|adások)"
    r"|(другие|предыдущие|все|последние) выпуски|(другие|предыдущие) эпизоды"
    r"|(fler|andra|senaste|tidigare|alla) avsnitt|(flere|andre|seneste|tidligere|nyeste|alle)"
    r" (episoder|afsnit)|(meer|andere|recente|vorige|alle) afleveringen|(lisää|muut|uusimmat"
    r"|kaikki) jaksot|lisää jaksoja|(więcej|inne|pozostałe|najnowsze|poprzednie|wszystkie)"
    r" odcinki|więcej odcinków|(altre|ultime) puntate|(outros|mais|últimos) episódios"
    r"|(les )?autres épisodes( de la série)?|(other|more) episodes (in|of) (this|the) series"
    r"|more in this series|in this series|topics|related topics|explore more( on these topics)?"
    r"|über (die|diese) (sendung|reihe)|zur sendung|à propos( de l'émission| du podcast)?"
    r"|sobre (el|este) (programa|podcast)|acerca del (programa|podcast)|l'émission"
    r"|themen|mehr zum thema|temas|thèmes|sujets|more in( .{1,40})?|information|informationen"
    r"|(more episodes|más episodios|weitere folgen|autres épisodes|other episodes|altri episodi)"
    r" (of|from|del|de|von|du|des|di)( the)? .{1,60})\s*:?",
    re.I,
)
#: A line that leads in to the badges after the notes ("Escucha La Ventana en:").
LISTEN_LEAD_RE = re.compile(
    r"(listen|subscribe|follow|escucha\w*|suscríbete|hör\w*|abonniere\w*|écoute\w*|abonnez"
    r"|ascolta\w*|ouça|luister)\b.{0,80}\b(on|at|en|auf|bei|sur|su|em|op|in)\s*:?",
    re.I,
)
#: A newspaper's credit line for its lead picture ("Photo Illustration by The New York Times").
PICTURE_CREDIT_RE = re.compile(r"(photo( illustration)?|photograph|illustration) by\b", re.I)
#: The title of a newspaper's box of podcast apps ("Listen and follow Morning Margin").
FOLLOW_BOX_RE = re.compile(
    r"(listen (and|&) (follow|subscribe)|follow (and|&) listen|subscribe (and|&) listen)"
    r"( to)?( .{1,60})?",
    re.I,
)
#: An episode's dateline ("Épisode du lundi 3 juin 2024 par Claire Vautrin").
EPISODE_DATELINE_RE = re.compile(
    r"(épisode|episode|folge|sendung|émission|episodio|puntata|programa)\b[^.!?]{0,40}\b\d{4}"
    r"(\s*,?\s*(par|by|von|por|di|con|door)\s+[^.!?]{2,60})?",
    re.I,
)
#: A line that names the programme that aired the segment ("Heard on All Things Considered").
AIRED_ON_RE = re.compile(
    r"((as )?(heard|aired|broadcast|featured) (on|in)|gesendet in|ausgestrahlt in"
    r"|diffusé (dans|sur)|emitido en)\s+[^.!?:]{2,60}",
    re.I,
)
#: A picture's credit in its caption ("Photograph: A. Name/Agency", "Bildquelle: …", "© …").
PHOTO_CREDIT_RE = re.compile(
    r"\b(photo(graph)?s?|pictures?|images?|illustration|foto(grafía|grafia)?s?|bild(quelle)?"
    r"|bildrechte|credits?|crédits?( photo)?|crédito)\s*:|©",
    re.I,
)
#: How a newspaper's print line opens ("A version of this article appears in print on …").
PRINT_LINE_RE = re.compile(r"a version of this (article|story|episode) appear(s|ed) in print", re.I)
#: Whole texts of trailing lines of the site's own links.
TAIL_LINK_RE = re.compile(
    r"(view|read|see|show|full) (the )?transcript|all episodes|back to (all )?episodes"
    r"|(previous|next|older|newer) episode.*|see all.*|view all.*|more episodes"
    r"|order reprints.*|(the )?(programme|program|show|podcast) (website|homepage|home page)"
    r"|(visit|go to) the (programme|program|show|podcast)('s)? (website|page)"
    r"|(open|listen) (in|on) \S.{0,30}|\S.{0,30}で(開く|聴く|聞く)|在\S.{0,20}(收听|打开|收聽)",
    re.I,
)


def is_app_link(href: str) -> bool:
    host = domain_of(href)
    if any(host == app or host.endswith("." + app) for app in PODCAST_APPS):
        return True
    path = href.split("?")[0].lower().rstrip("/")
    return path.endswith((".rss", ".xml", "/feed", "/rss"))


def is_fields_line(text: str) -> bool:
    """A line of short fields between separators, one a date or a duration: "The Show •
    Host & Host • Episode 142 • November 3, 2026 • 47:18"."""
    fields = [field for field in FIELD_SEPARATOR_RE.split(text) if field.strip()]
    if len(fields) < 3 or any(len(_WORD_RE.findall(field)) > 6 for field in fields):
        return False
    return any(any(char.isdigit() for char in field) for field in fields)


def is_meta_line(text: str) -> bool:
    """Whether ``text`` is made of dates, durations and numbers, with a few words at most."""
    if is_fields_line(text):
        return True
    if not any(char.isdigit() for char in text) or not META_PART_RE.search(text):
        return False  # "You may like": a date has a number
    rest = META_PART_RE.sub(" ", text)
    return len(_WORD_RE.findall(rest)) <= META_SPARE_WORDS


def opens_notes_section(text: str) -> bool:
    """Whether a heading's text opens a section of the notes ("Shownotes", "Kapitel")."""
    return NOTES_SECTION_RE.fullmatch(text.rstrip(" :：")) is not None


def opens_tail(text: str, names: AbstractSet[str]) -> bool:
    """Whether a heading's text opens one of the show's sections after the notes."""
    return TAIL_HEADING_RE.fullmatch(text) is not None or about_the_show(text, names)


def about_the_show(text: str, names: AbstractSet[str]) -> bool:
    """ "About Weather Desk": a heading that is "About" and the show's name."""
    found = _WORD_RE.findall(text.lower())
    return len(found) >= 2 and found[0] in ("about", "über") and set(found[1:]) <= names
