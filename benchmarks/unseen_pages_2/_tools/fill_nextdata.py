# one-off helper (escapes like Next.js htmlEscapeJsonString): inserts the __NEXT_DATA__ JSON into nextjs_rootsandroutes_61.html
import json, pathlib
p = pathlib.Path(__file__).resolve().parent.parent / "nextjs_rootsandroutes_61.html"
notes = (
 "<p>Leah Abramowitz grew up hearing that her great-grandfather Hersh arrived in Baltimore in 1907 with a violin and nothing else. "
 "For six years she searched passenger lists for a Hersh Abramowitz and found a man who fit almost perfectly: right age, right town, right ship. "
 "He was the wrong man.</p>"
 "<p>In this episode, host Corinne Batiste and Leah retrace how a clerk's misspelling in Bremen, a second family with the same surname, "
 "and one very confident cousin built a story that held together until a 1942 draft card didn't fit. "
 "Archivist <strong>Marcus Oyelaran</strong> explains how to read a manifest's annotations, including the little marks in the margin that most researchers skip.</p>"
 "<p><strong>Resources from this episode</strong></p>"
 "<ul>"
 "<li><a href=\"https://www.stevemorse.example/ellis/passengers\">One-Step search tools for passenger lists</a></li>"
 "<li><a href=\"https://www.archives.example/research/immigration/manifest-annotations\">National Archives guide to manifest annotations</a></li>"
 "<li><a href=\"https://www.jewishgen.example/databases/town-finder\">JewishGen Town Finder</a></li>"
 "<li><a href=\"https://tidewateraudio.example/shows/roots-and-routes/episodes/44-draft-cards-as-a-source\">Episode 44: Draft Cards as a Source</a></li>"
 "</ul>"
 "<p>Have a family legend you want us to test? Write to us at <a href=\"mailto:roots@tidewateraudio.example\">roots@tidewateraudio.example</a>. "
 "Roots &amp; Routes is a member-supported show; <a href=\"https://tidewateraudio.example/membership\">become a member</a> to hear episodes a week early.</p>"
)
data = {
 "props": {"pageProps": {
   "show": {"slug": "roots-and-routes", "title": "Roots & Routes", "host": "Corinne Batiste",
            "artwork": "https://cdn.tidewateraudio.example/images/shows/roots-and-routes/cover.jpg",
            "description": "Roots & Routes tests family legends against the records. Hosted by genealogist Corinne Batiste."},
   "episode": {"id": "ep_01HZX4K9R2M7", "number": 61, "slug": "61-the-ship-manifest-that-lied",
               "title": "The Ship Manifest That Lied", "publishedAt": "2026-12-01T10:00:00.000Z", "durationSeconds": 2652,
               "dek": "A family legend, a misspelled surname, and the 1907 manifest that sent Leah Abramowitz down the wrong path for six years.",
               "audioUrl": "https://cdn.tidewateraudio.example/audio/roots-and-routes/rr061.mp3",
               "showNotesHtml": notes,
               "transcriptAvailable": False, "explicit": False,
               "guests": [{"name": "Leah Abramowitz"}, {"name": "Marcus Oyelaran", "role": "Archivist"}]},
   "related": [
     {"number": 60, "slug": "60-the-orphan-train-letters", "title": "The Orphan Train Letters"},
     {"number": 59, "slug": "59-dna-surprises-at-thanksgiving", "title": "DNA Surprises at Thanksgiving"},
     {"number": 58, "slug": "58-reading-old-handwriting", "title": "Reading Old Handwriting"}],
   "_sentryTraceData": "7f1e2d3c4b5a69788796a5b4c3d2e1f0-9a8b7c6d5e4f3a2b-1",
   "_sentryBaggage": "sentry-environment=production,sentry-release=tidewater-web%402026.11.28,sentry-public_key=3e4f5a6b7c8d9e0f,sentry-trace_id=7f1e2d3c4b5a69788796a5b4c3d2e1f0"},
  "__N_SSP": True},
 "page": "/shows/[show]/episodes/[slug]",
 "query": {"show": "roots-and-routes", "slug": "61-the-ship-manifest-that-lied"},
 "buildId": "Tq7wZkP3mN9xL2bV4cR8s", "isFallback": False, "gssp": True, "scriptLoader": []}
s = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
t = p.read_text(encoding="utf-8")
assert "__NEXT_DATA_JSON__" in t
p.write_text(t.replace("__NEXT_DATA_JSON__", s), encoding="utf-8")
