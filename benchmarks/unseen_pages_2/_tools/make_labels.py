"""Writes labels/<id>.json and feeds/<id>.html from the hand-written SPEC below.
notes_text is cut mechanically from the notes region between the hand-chosen start and end."""
import json, pathlib, re, sys
from bs4 import BeautifulSoup
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from common import region, tokens, find_seq, DROP

ROOT = pathlib.Path(__file__).resolve().parent.parent

SPEC = [
dict(id="libsyn_ferrousfolk_e88", title="Ep 88: Forge Welding, Flux and Failure with Marisol Okafor",
  page_url="https://ferrousfolk.libsyn.com/ep-88-forge-welding-flux-and-failure-with-marisol-okafor", platform="libsyn",
  label_source="css: div.libsyn-item-body",
  notes_start="This week Marisol Okafor joins us from her shop outside Dayton to talk forge welding: why it fails",
  notes_end="Email anvil@ferrousfolk.example or leave a voicemail at (937) 555-0188. Keep it hot, keep it safe.",
  notes_links=["https://www.copperkettleforge.example/classes","https://www.instagram.com/okafor.steel.example/","https://anvilwise.example/folk",
    "https://www.abana.example/resources/forge-welding-primer","https://ferrousfolk.libsyn.com/ep-61-coal-vs-gas-with-dale-brenner",
    "https://forum.anvilfire.example/threads/anhydrous-borax"],
  optional_links=["mailto:anvil@ferrousfolk.example","https://traffic.libsyn.com/secure/ferrousfolk/FF088_ForgeWelding_Okafor.mp3?dest-id=991122"],
  feed="same",
  doubt="Classic libsyn template; notes are the whole libsyn-item-body. The sponsor read (Anvilwise) sits inside the notes and is counted. The long host bio in the right column and the 'Direct download' / category footer are not notes; the direct-download link is optional. mailto link optional."),
dict(id="podbean_harborlights_e31", title="Ep. 31 - The Wreck of the Margaret H. Olney",
  page_url="https://harborlights.podbean.com/e/ep-31-the-wreck-of-the-margaret-h-olney/", platform="podbean",
  label_source="css: div.e-description",
  notes_start="In November 1893 the schooner Margaret H. Olney left Ashtabula with a load of coal and a crew of seven",
  notes_end="Photos of the wreck site and Ellen's letters are on our website at harborlightspodcast.example/olney.",
  notes_links=["https://www.lakeeriemaritime.example/","https://harborlightspodcast.example/olney"],
  optional_links=["https://harborlights.podbean.com/mf/web/7xq2mh/HL031_Olney.mp3"],
  feed="same",
  doubt="Chapter list (plain text with <br>) is inside the description and counted. The JSON-LD and og:description carry a truncated copy (cut mid-sentence at 'This episode follows'). Tags, copyright line, comments (one with a link) and the aria-hidden share modal with embed code are not notes."),
dict(id="buzzsprout_quietcompiler_e142", title="142: Your Build Is Slow Because You Let It Be",
  page_url="https://www.buzzsprout.com/1839204/episodes/13994021-142-your-build-is-slow-because-you-let-it-be", platform="buzzsprout",
  label_source="css: section#ep-notes",
  notes_start="Send us a text Build times creep. Nobody decides to have a twelve-minute CI pipeline; it happens",
  alt_start="Build times creep. Nobody decides to have a twelve-minute CI pipeline; it happens one dependency, one code generator",
  notes_end="Got a build horror story? Tell us at quietcompiler.example/contact. Support the show",
  alt_end="Episode 98, our earlier episode on flaky tests Got a build horror story? Tell us at quietcompiler.example/contact.",
  notes_links=["https://buildtrace.example/docs/reading-traces","https://blog.hannekeweb.example/2025/hermetic-builds-are-a-social-problem",
    "https://quietcompiler.example/episodes/98","https://quietcompiler.example/contact"],
  optional_links=["https://www.buzzsprout.com/twilio/text_messages/1839204/open_sms","https://www.buzzsprout.com/1839204/support"],
  feed="same",
  doubt="Buzzsprout injects 'Send us a text' at the top and 'Support the show' at the bottom of the description (both also in the feed); counted in notes_start/notes_end, with alt_start/alt_end without them, and their links optional. The Chapters and Transcript tab panels carry the hidden attribute and are not notes. 'More episodes' cards have their own summaries."),
dict(id="transistor_soilnotes_57", title="57: Cover Crops That Failed (and What They Taught Us)",
  page_url="https://soilnotes.transistor.fm/episodes/57-cover-crops-that-failed", platform="transistor",
  label_source="css: section.episode-content div.prose",
  notes_start="Everybody posts their cover crop successes. This episode is about the other ones. Hosts Dana Whitcombe and Luis Ferreira",
  alt_start="Three growers, three cover crop failures, and the soil tests that explain them. Everybody posts their cover crop successes.",
  notes_end="the best thing you can do is tell one other grower about it, or chip in a few dollars to cover lab fees.",
  notes_links=["https://longfurrowfarm.example/","https://www.stcloudgrowers.example/members/warsame",
    "https://www.northeastcovercrops.example/selector-tool","https://extension.umn.example/cover-crops/winter-survival",
    "https://soilhealthlab.example/tests/haney","https://www.sare.example/resources/managing-cover-crops-profitably",
    "https://soilnotes.transistor.fm/episodes/41-rolling-and-crimping","https://soilnotes.transistor.fm/episodes/49-what-your-weeds-are-telling-you",
    "https://www.instagram.com/marchetti.gardens.example/","https://kofimensah-soils.example/","https://soilnotes.transistor.fm/support"],
  optional_links=["mailto:dirt@soilnotes.example","https://media.transistor.fm/8f3c1a27/4d2e6b90.mp3",
    "https://soilnotes.transistor.fm/episodes/57-cover-crops-that-failed/transcript"],
  feed="same",
  doubt="The one-line episode summary above the player (also meta/og description) is the Transistor 'summary' field, not the description; allowed as alt_start. 'Creators & Guests' cards (with one-line bios), 'What is Field Notes on Soil?' show blurb and recent-episode summaries follow the notes and are not notes."),
dict(id="captivate_smallbatch_e12", title="Pricing Your First Wholesale Order (with Tamsin Oduya)",
  page_url="https://smallbatch.captivate.fm/episode/pricing-your-first-wholesale-order-with-tamsin-oduya", platform="captivate",
  label_source="css: div#show-notes",
  notes_start="When a shop asks to stock your product, the first question is always the same: what's your wholesale price?",
  notes_end="Ruth runs a monthly pricing clinic for makers. Join the waitlist at ruthaldermakers.example/clinic.",
  extended_end="It was a gift shop in Hebden Bridge, and I was so excited I replied within about four minutes with a price that I had basically made up.",
  notes_links=["https://tallybook.example/smallbatch","https://wickandwren.example/","https://wickandwren.example/linesheet",
    "https://smallbatch.captivate.fm/episode/costing-your-time","https://ruthaldermakers.example/clinic"],
  feed="same",
  doubt="Sponsor read (Tallybook) inside the notes, counted. The Transcript tab follows the notes in the DOM and is hidden only by a CSS class (.tab-pane without .active), so extended_end covers it. Newsletter box and 'More episodes' mini summaries in the sidebar are not notes."),
dict(id="podigee_trailhead_19", title="#19 Sleeping Warm Below Freezing",
  page_url="https://trailhead-radio.podigee.io/19-sleeping-warm-below-freezing", platform="podigee",
  label_source="css: div.episode-description-content",
  notes_start="Pads, not bags: why your sleeping pad's R-value matters more than the temperature rating on your bag.",
  notes_end="Nadia tests four pads on a frozen lake and reads the numbers from her overnight thermometer log.",
  notes_links=["https://trailheadradio.example/cold-test-2026"],
  optional_links=["https://audio.podigee-cdn.net/1820391-m-9a8b7c6d5e4f3a2b1c0d.mp3?source=website","https://audio.podigee-cdn.net/1820391-m-7e6f5d4c3b2a1f0e9d8c.m4a?source=website",
    "https://audio.podigee-cdn.net/1820391-m-1c2d3e4f5a6b7c8d9e0f.opus?source=website"],
  feed="none",
  doubt="Short notes (two sentences, one link). The subtitle 'Gear talk for the cold months' is above the player and not counted. The Chapters list is a separate section after the notes (chapter links are in-page anchors) and not counted; Downloads list links optional. About-this-podcast sidebar is not notes. Feed not provided."),
dict(id="podlove_nachtschicht_nk073", title="NK073 Gezeitenkräfte",
  page_url="https://nachtschicht-kosmos.example/nk073-gezeitenkraefte/", platform="wordpress-podlove",
  label_source="css: article div.entry-content; minus: div.podlove-web-player, div.podlove-contributors, div.episode_downloads",
  notes_start="Warum es zweimal am Tag Flut gibt, wie der Mond die Erde bremst und was Io mit Vulkanen zu tun hat.",
  notes_end="Shoemaker-Levy 9 NK058 Der Mond entsteht Ankes Mondfotos aus dem Oktober",
  alt_end="Mitwirkende Anke Dreesen Moderation Jonas Pietsch Moderation",
  notes_links=["https://de.wikipedia.org/wiki/Gezeiten","https://www.bsh.example/gezeitenvorhersage/cuxhaven","https://de.wikipedia.org/wiki/Gezeitenreibung",
    "https://lunarlaser.example/apollo-retroreflektoren","https://de.wikipedia.org/wiki/Io_(Mond)","https://de.wikipedia.org/wiki/Roche-Grenze",
    "https://de.wikipedia.org/wiki/Shoemaker-Levy_9","https://nachtschicht-kosmos.example/nk058-der-mond-entsteht/",
    "https://astrofotografie-anke.example/galerie/mond-2026"],
  optional_links=["https://astrofotografie-anke.example/","https://astrodon.example/@anke","https://liberapay.com/ankedreesen","https://astrodon.example/@jonaspietsch"],
  feed="same",
  doubt="German Podlove page. Notes = bold summary line, paragraph, chapters table ('Kapitel') and the Shownotes link list. The contributors table (Mitwirkende) right after the shownotes is a judgement call: alt_end includes it; its social/donation icon links are optional. Download form, entry meta (tags), comments (one with a link, one author link) and the sidebar 'Über uns' are not notes."),
dict(id="powerpress_shedtalk_204", title="ST204: Dahlias After Frost – Lifting, Dividing and Storing Tubers",
  page_url="https://shedtalkgardening.example/st204-dahlias-after-frost/", platform="wordpress-powerpress",
  label_source="css: article div.entry-content; minus: div.powerpress_player, p.powerpress_links, p.powerpress_embed_box, div.sharedaddy, div#jp-relatedposts",
  notes_start="The first proper frost has blackened the dahlias, which means it's lifting time. Colleen and Bram dig up forty dahlia clumps",
  notes_end="Send us your questions for Ask the Shed by emailing shed@shedtalkgardening.example, and we'll see you next Monday. Happy digging!",
  notes_links=["https://greenbarrowtools.example/?ref=shedtalk","https://nationaldahliasociety.example/storage-trials-2025",
    "https://shedtalkgardening.example/dividing-dahlias-photo-guide/","https://shedtalkgardening.example/st188-overwintering-everything/"],
  optional_links=["mailto:shed@shedtalkgardening.example",
    "https://media.blubrry.com/shedtalk/shedtalkgardening.example/podcast/ST204_dahlias_after_frost.mp3",
    "https://podcasts.apple.com/gb/podcast/shed-talk-gardening-podcast/id1203398870?mt=2&ls=1","https://open.spotify.com/show/3kL9mN0pQ1rS2tU3vW4xY5",
    "https://subscribebyemail.com/shedtalkgardening.example/feed/podcast/","https://shedtalkgardening.example/feed/podcast/",
    "https://shedtalkgardening.example/subscribe-to-podcast/"],
  feed="same",
  doubt="PowerPress player and the 'Podcast: Play in new window | Download (Duration: 48:12 — 44.2MB) | Embed' and 'Subscribe: Apple Podcasts | Spotify | Email | RSS | More' lines sit at the top of entry-content, before the notes; not notes, their links optional. The hidden embed box (display:none input) is not notes. Sponsor read with emoji inside the notes, counted. Jetpack 'Share this', 'Like this' and 'Related' (with excerpts) inside entry-content after the notes are not notes."),
dict(id="ssp_civicmatters_45", title="45 – Who Fixes the Potholes? Inside a Public Works Budget",
  page_url="https://civicmatterspod.example/podcast/45-who-fixes-the-potholes/", platform="wordpress-ssp",
  label_source="css: article div.entry-content; minus: div.podcast_player, div.podcast_meta",
  notes_start="Every spring the potholes come back, and every spring somebody at a council meeting asks why the city can't just fix them.",
  notes_end="Civic Matters is an independent, listener-supported show. Production by Ana Lucía Pérez. Music by Kettle Drum Collective.",
  alt_end="our explainer on the Pavement Condition Index walks you through finding the numbers.",
  notes_links=["https://www.marlowfalls.example/departments/public-works/budget-fy2027.pdf","https://civicmatterspod.example/explainers/pavement-condition-index/"],
  optional_links=["https://civicmatterspod.example/podcast-download/2210/45-who-fixes-the-potholes.mp3?ref=download",
    "https://civicmatterspod.example/podcast-download/2210/45-who-fixes-the-potholes.mp3?ref=new_window"],
  feed="short",
  doubt="Seriously Simple Podcasting: the Castos player block carries Subscribe and Share panels full of links (Apple, Spotify, Pocket Casts, RSS input, Facebook, Twitter, download, embed input), then the podcast_meta line 'Download file | Play in new window | Duration | Recorded on'; none are notes (meta links optional). Guest bio paragraph counted. The italic credits line at the end is counted; alt_end stops before it. Feed carries only a one-line summary."),
dict(id="squarespace_loomandlore_9", title="Episode 9: The Indigo Ledger",
  page_url="https://www.loomandlorepodcast.example/episodes/episode-9-the-indigo-ledger", platform="squarespace",
  label_source="css: div.blog-item-content; minus: div.sqs-block-image, div.sqs-block-embed, div.sqs-block-newsletter",
  notes_start="In 1781 a dye merchant in Bristol started keeping a ledger of every bale of indigo that passed through his warehouse.",
  alt_start="Page from the Harford ledger, 1783. Courtesy of the Bristol Record Office. In 1781 a dye merchant in Bristol started keeping a ledger",
  notes_end="Loom & Lore is produced by Isla Carrick with sound design by Tomasz Wrona. Our theme music is \u201cShuttle\u201d by The Warp Threads.",
  alt_end="Jenny Balfour-Paul, Indigo: Egyptian Mummies to Blue Jeans Episode 4: Madder and the Red Coat",
  notes_links=["https://www.harbourlinepress.example/blue-accounts","https://femiadeyemo-dyes.example/",
    "https://archives.bristolrecords.example/harford-ledger","https://www.loomandlorepodcast.example/episodes/episode-4-madder-and-the-red-coat"],
  feed="same",
  doubt="Notes are split over three sibling Squarespace html blocks with a Simplecast player iframe (embed block) between the first and second; the image block with its caption sits above (caption allowed via alt_start). The production credits block is counted (alt_end stops before it). The newsletter block inside the post body (with reCAPTCHA policy links), tags, share buttons and pagination are not notes."),
dict(id="substack_marginalia_translators", title="The Translator Is in the Room: a conversation with Ilse Varga",
  page_url="https://marginalia.substack.com/p/the-translator-is-in-the-room", platform="substack",
  label_source="css: div.available-content div.body.markup; minus: div.subscription-widget-wrap-editor",
  notes_start="Ilse Varga has translated eleven novels from Hungarian, including two that were longlisted for the International Booker",
  alt_start="Episode 22 of the Marginalia podcast: on translating Hungarian novels, footnotes, and the word that took four months.",
  notes_end="Ilse's essay \"Against Footnotes\" Our earlier episode with the poet-editor Ruth Akande",
  extended_end="Thank you, Theo. This was a pleasure, and I promise to send you the notebook one day.",
  notes_links=["https://www.carrowaybooks.example/salt-orchard","https://www.translatorsassoc.example/rates-survey-2026",
    "https://thelongsentence.example/essays/against-footnotes","https://marginalia.substack.com/p/episode-14-the-poet-who-edits"],
  feed="short",
  doubt="The subtitle (h3) is also the feed description and og/meta description; allowed as alt_start. A Substack subscribe widget sits between the notes and the 'Transcript' heading; the transcript (speaker-labelled, no timestamps) runs to the end of the body and is covered by extended_end. window._preloads repeats a truncated body text. Comments (one with a link) and 'Top' posts are not notes."),
dict(id="ghost_slowcities_7", title="Episode 7: The Bench Census",
  page_url="https://slowcities.example/episode-7-the-bench-census/", platform="ghost",
  label_source="css: section.gh-content; minus: div.kg-audio-card",
  notes_start="Noor and Marcus walked every street in Eastfield, Hollins Park and the old docks with a clipboard",
  alt_start="We counted every public bench in three neighbourhoods.",
  notes_end="The answer was 212 benches, 41 of them broken, and you can see them all on our bench map.",
  notes_links=["https://slowcities.example/bench-map/"],
  feed="none",
  doubt="Very short notes (two sentences, one link) after a Ghost audio card whose UI text ('0:00', '/24:37', '1×') is not notes. The custom excerpt under the title is a teaser (also meta description), allowed as alt_start. Members CTA, 'Read more' cards with excerpts and the aria-hidden PhotoSwipe markup are not notes. Feed not provided."),
dict(id="apple_nightshiftnotes_56", title="56. The 12-Hour Handoff",
  page_url="https://podcasts.apple.com/us/podcast/56-the-12-hour-handoff/id1543320981?i=1000672201934", platform="apple-podcasts",
  label_source="css: div#paragraph span.multiline-clamp__text",
  notes_start="What actually gets said at shift change, and what should? Veteran ICU charge nurse Bettina Royce joins Deshawn",
  notes_end="The content of this podcast is for education and entertainment and is not medical advice.",
  alt_end="Bettina's handoff checklist: nightshiftnotes.example/handoff-checklist Join our nurses-only community: nightshiftnotes.example/community",
  notes_links=[],
  text_urls=["scrubline.example/nightshift","nightshiftnotes.example/handoff-checklist","nightshiftnotes.example/community"],
  optional_links=["https://nightshiftnotes.example/episodes/56"],
  feed="same",
  doubt="Apple renders the description as plain text (no anchors) inside a CSS line clamp with a MORE button; the full text is in the DOM and also in the schema:podcast-episode JSON-LD, and serialized-server-data carries only the first paragraph. URLs are plain text (text_urls). The closing disclaimer is counted (alt_end without it). 'Episode Website' in the Information list is optional; More Episodes summaries are not notes. The feed has the same notes with real links."),
dict(id="spotify_deepfreeze_23", title="Ep. 23: Listening to Ice",
  page_url="https://open.spotify.com/episode/4fKq9ZrT2mWx8LbN3vYc1D", platform="spotify",
  label_source="jsonld: description",
  notes_start="Glaciologist Dr. Anneke Solheim spends her summers on the Greenland ice sheet with a set of microphones frozen into the ice.",
  notes_end="Deep Freeze is an independent production by Halvard Lunde and Mia Ostrowski.",
  alt_end="Her lab: icesound-lab.example Support Deep Freeze on Patreon: patreon.com/deepfreezepod",
  visible_end="a meltwater lake draining in…",
  notes_links=[],
  text_urls=["deepfreezepod.example/ep23","icesound-lab.example","patreon.com/deepfreezepod"],
  feed="same",
  doubt="The visible body shows only a teaser cut mid-sentence ('...a meltwater lake draining in…' + Show more). The full notes are only in the JSON-LD description (plain text with newlines) and in meta name=description (prefixed 'Listen to this episode from ... on Spotify.'). og:description is just 'show · Episode'. The base64 initial-state blob has no description. URLs are plain text. Credits line counted (alt_end without it)."),
dict(id="nextjs_rootsandroutes_61", title="The Ship Manifest That Lied",
  page_url="https://tidewateraudio.example/shows/roots-and-routes/episodes/61-the-ship-manifest-that-lied", platform="nextjs-custom",
  label_source="nextdata: props.pageProps.episode.showNotesHtml",
  notes_start="Leah Abramowitz grew up hearing that her great-grandfather Hersh arrived in Baltimore in 1907 with a violin and nothing else.",
  alt_start="A family legend, a misspelled surname, and the 1907 manifest that sent Leah Abramowitz down the wrong path for six years. Leah Abramowitz grew up hearing",
  notes_end="Roots & Routes is a member-supported show; become a member to hear episodes a week early.",
  notes_links=["https://www.stevemorse.example/ellis/passengers","https://www.archives.example/research/immigration/manifest-annotations",
    "https://www.jewishgen.example/databases/town-finder","https://tidewateraudio.example/shows/roots-and-routes/episodes/44-draft-cards-as-a-source",
    "https://tidewateraudio.example/membership"],
  optional_links=["mailto:roots@tidewateraudio.example"],
  feed="none",
  doubt="The server HTML shows only the dek (also meta/og description) and an empty 'Show notes' skeleton; the full notes exist only as HTML inside __NEXT_DATA__ (props.pageProps.episode.showNotesHtml, with < > & escaped as \\u003c etc.). Related episode cards (visible, with summaries), Listen-on links and the newsletter box are not notes. The dek is allowed as alt_start. Feed not provided."),
dict(id="pubradio_thecommons_wellwater", title="When the well runs dry: rural homeowners and the drought nobody measured",
  page_url="https://www.lakeshorepublic.example/programs/the-commons/2026/11/17/well-water-drought-rural-homeowners", platform="public-radio",
  label_source="css: div#storytext; minus: div.bucketwrap, div.ad-wrap",
  notes_start="When Gail Henriksen turned on her kitchen tap in August and got a cough of air and then nothing",
  alt_start="A drilling crew deepens a residential well near Pine Hollow in October. Drillers in the region say they are booked into next spring.",
  notes_end="This episode was produced by Caleb Thornquist and edited by Rosa Mendel. Our engineer is Peter Nakashima.",
  alt_end="You can also share your story with the newsroom using this form.",
  notes_links=["https://www.greatlakesgeo.example/people/ahmed-salloum","https://www.egle.example/private-wells/emergency-assistance",
    "https://www.lakeshorepublic.example/share-your-story/wells"],
  optional_links=["https://media.lakeshorepublic.example/audio/the-commons/2026/11/20261117_commons_wells.mp3?dl=1",
    "https://www.lakeshorepublic.example/transcripts/nx-s1-5589214"],
  feed="short",
  doubt="Public-radio story page: notes are the story text. The audio module (Listen · 24:11, Download, Embed with a display:none/aria-hidden embed box, Transcript link) comes before; Download and Transcript links optional. Image block with 'Enlarge this image', caption and credit at the top of storytext (caption allowed via alt_start); a 'Sponsor Message' ad slot sits between paragraphs (junk inside the span). Production credits counted (alt_end without). The feed carries only a short summary."),
dict(id="abclisten_saltwatercountry_mangroves", title="The mangroves are moving south",
  page_url="https://www.abc.net.au/listen/programs/saltwater-country/mangroves-moving-south/104661872", platform="abc-listen",
  label_source="css: div.RichText_richText__q7WeR",
  notes_start="Mangroves are turning up in estuaries where nobody alive has seen them before. Grey mangroves have been recorded",
  notes_end="Oyster farmer, Batemans Bay Further information Mangrove range shift report, NSW fisheries (2026)",
  notes_links=["https://www.southcoastmarine.example/people/hamish-teale","https://www.dpi.example/fishing/habitat/mangroves-range-shift-report-2026"],
  optional_links=["https://mediacore-live-production.akamaized.net/audio/01/RN/saltwatercountry_20261122_mangroves.mp3"],
  feed="none",
  doubt="ABC-listen-like page (server-rendered Next.js; __NEXT_DATA__ has only the short teaser). Notes = rich-text description with Guests and Further information. The separate Credits list (Presenter/Producer/Sound Engineer), Topics, hidden share dialog, More episodes cards and the Acknowledgement of Country are not notes. Feed not provided."),
dict(id="rmkkultur_wissen_streuobst", title="Streuobstwiesen: Artenvielfalt zwischen alten Apfelbäumen",
  page_url="https://www.rmk-kultur.example/wissen/streuobstwiesen-artenvielfalt-100.html", platform="broadcaster-de",
  label_source="css: p.article-header-description | div.article-details-text",
  notes_start="Streuobstwiesen gehören zu den artenreichsten Lebensräumen Mitteleuropas. Doch sie verschwinden, weil sich die Pflege kaum lohnt.",
  alt_start="Im Herbst riecht es auf der Wiese von Gerlinde Aschauer nach gärendem Obst. Zwischen 84 Hochstämmen",
  notes_end="Karte der Streuobst-Initiativen in Mitteldeutschland Bundesamt für Naturschutz: Streuobstwiesen auf der Roten Liste",
  notes_links=["https://www.streuobst-netzwerk.example/karte","https://www.bfn.example/streuobst/rote-liste-lebensraeume"],
  optional_links=["https://avdlswr-a.akamaihd.example/rmk/wissen/2026/11/streuobstwiesen-100.m.mp3",
    "https://www.rmk-kultur.example/wissen/manuskripte/streuobstwiesen-100~_download-pdf.pdf","https://www.rmk-kultur.example/podcasts/wissen/"],
  feed="none",
  doubt="German broadcaster page. The teaser (article-header-description, also meta/JSON-LD description) and the article text are separated by the image with caption and the audio block ('Hören 28:50 Min.', 'Audio herunterladen', 'Manuskript zur Sendung (PDF)'); notes start at the teaser, alt_start at the article text. Production credits (Autorin/Sprecherin/Redaktion/Regie), share bar, 'Mehr zum Thema' teasers and the newsletter box are not notes. Feed not provided."),
dict(id="ondespubliques_cheminsdusel_guerande", title="Guérande, l'or blanc des paludiers",
  page_url="https://www.ondes-publiques.example/culture/podcasts/les-chemins-du-sel/guerande-l-or-blanc-des-paludiers-4218837", platform="broadcaster-fr",
  label_source="css: p.CoverEpisode-standFirst | section.Guests | div.Expression-content",
  notes_start="Dans les marais salants de Guérande, la récolte du sel n'a presque pas changé depuis le Moyen Âge.",
  alt_start="Sur la presqu'île guérandaise, près de 300 paludiers exploitent encore quelque 12 000 œillets",
  notes_end="Éditions Ouest-Marée, 2024 Collectif, Marais salants de l'Atlantique, Presses universitaires de Rennes, 2019",
  alt_end="Titre : Vent d'est — Interprète : Nolwenn Kerhoas Quartet — Année : 2025",
  notes_links=["https://www.editions-ouest-maree.example/catalogue/le-sel-et-la-terre"],
  optional_links=["https://www.ondes-publiques.example/personnes/yann-le-goff","https://www.ondes-publiques.example/personnes/solenn-kerdraon",
    "https://media.ondes-publiques.example/transistor/podcast/a22819/culture_les_chemins_du_sel-20261119-guerande.mp3"],
  feed="none",
  doubt="French Radio-France-like page. Notes are in three siblings: the chapô (standFirst, in the cover block before the player/Télécharger), the 'Avec' guest list, and the body with Bibliographie. 'Références musicales' after the bibliography is a judgement call (alt_end includes it). Guest person-page links optional. 'L'équipe', tags, the other episodes of the series (with summaries) and the subscribe block are not notes. Feed not provided."),
dict(id="ledger_morningledger_ferry", title="The ferry that never came: inside the Port Alder contract scandal – podcast",
  page_url="https://www.harbourcityledger.example/news/audio/2026/nov/30/the-ferry-that-never-came-port-alder-contract-scandal-podcast", platform="newspaper",
  label_source="css: div.article__standfirst | div.article-body-commercial-selector; minus: aside.ad-slot-container",
  notes_start="Six years, $212m and one ferry that still hasn't carried a passenger. Reporter Imogen Sayle explains how the Port Alder ferry contract went so wrong",
  alt_start="When the city signed a contract in 2020 for two electric ferries to link Port Alder with the mainland",
  notes_end="Read Imogen's full investigation: The $212m ferry: how a council lost control of its biggest contract",
  alt_end="Photograph: Kwabena Osei/The Ledger How to listen to podcasts: everything you need to know",
  notes_links=["https://www.harbourcityledger.example/news/2026/nov/28/port-alder-ferry-contract-investigation"],
  optional_links=["https://www.harbourcityledger.example/news/2024/mar/04/how-to-listen-to-podcasts-everything-you-need-to-know",
    "https://podcasts.apple.com/au/podcast/the-morning-ledger/id1582290110","https://open.spotify.com/show/6qR7sT8uV9wX0yZ1aB2cD3",
    "https://www.harbourcityledger.example/news/series/the-morning-ledger/podcast.xml"],
  feed="none",
  doubt="Newspaper audio article: standfirst, then byline ('Presented by ... produced by ...'), date and the audio player with subscribe links, then the body. An 'Advertisement' slot sits inside the body. After the investigation link come an image with caption and the boilerplate 'How to listen to podcasts' link (alt_end includes them; that link optional). The contributions epic, topic tags, share links, 'More from', 'Most viewed' (repeats the investigation link) and the newsletter footer are not notes. Feed not provided."),
dict(id="acast_orbitalmechanics_s3e08", title="S3 E8: Who Cleans Up Orbit?",
  page_url="https://shows.acast.com/orbital-mechanics/episodes/s3-e8-who-cleans-up-orbit", platform="acast",
  label_source="css: main section div.qRsTuV",
  notes_start="Satellites are getting cheaper to launch and harder to get rid of. This week Priyanka and Gus are joined by debris tracker",
  notes_end="Our new merch (the \"Kessler Syndrome Survivor\" mug) is at orbitalmechanicspod.example/shop. Hosted on Acast. See acast.com/privacy for more information.",
  alt_end="Our new merch (the \"Kessler Syndrome Survivor\" mug) is at orbitalmechanicspod.example/shop.",
  notes_links=["https://orbitwatch.example/catalogue","https://orbitalmechanicspod.example/shop","https://acast.com/privacy"],
  feed="same",
  doubt="Acast appends 'Hosted on Acast. See acast.com/privacy for more information.' (after an <hr>, small grey text) to every description, also in the feed; counted as notes with its link, as in the earlier real Acast label; alt_end stops before it. The same HTML is in __NEXT_DATA__ (episode.summary). Cookie banner, Listen-on badges and More episodes cards are not notes."),
dict(id="hugo_bytesofhistory_15", title="15 · The Punched Card Census of 1911",
  page_url="https://bytesofhistory.example/episodes/15-punched-card-census/", platform="hugo-static",
  label_source="css: main > article; minus: article > header",
  notes_start="In April 1911, Britain counted itself for the first time with machines. In a basement off Millbank",
  notes_end="Later part of ICT and then ICL. See the Centre for Computing History's entry on BTM.",
  alt_end="everyone who sent in family census stories after my call-out on Mastodon. If you have a 1911 census story, email me.",
  notes_links=["https://www.kcl.example/people/dr-anjali-mistry","https://tnmoc.example/volunteers/bernard",
    "https://discovery.nationalarchives.example/details/r/C4410923","https://www.bloomsbury.example/uk/making-sense-of-the-census-revisited",
    "https://www.census1911.example/about/how-it-was-counted","https://ed-thelen.example/comp-hist/CBC.html",
    "https://commons.wikimedia.example/wiki/File:Hollerith_punched_card.jpg","https://bytesofhistory.example/episodes/09-the-jacquard-connection/",
    "https://social.historians.example/@bytesofhistory/113402118861","https://www.computinghistory.example/org/british-tabulating-machine-company"],
  optional_links=["https://media.bytesofhistory.example/boh-015.mp3","mailto:hello@bytesofhistory.example"],
  feed="none",
  doubt="Plain Hugo <article>; the <audio> element's fallback download link is optional. Notes include the timestamp list, sources list and the footnote (doc-endnotes) at the end; alt_end stops before the footnote. Footnote ref/backref are in-page anchors. Pagination, webmentions (with author links), the all-episodes list and the footer (licence, 'Edit this page') are not notes. Feed not provided."),
dict(id="commoncents_e77_transcript", title="Episode 77: The Emergency Fund Nobody Talks About",
  page_url="https://commoncentsshow.example/episodes/77-the-emergency-fund-nobody-talks-about", platform="custom-rails",
  label_source="css: section.episode__notes",
  notes_start="Everyone says you need three to six months of expenses saved. Almost nobody tells you how to get there",
  notes_end="Nothing in this episode is individual financial advice. Talk to a qualified professional about your own situation.",
  extended_end="If this episode helped, send it to the friend who raided their emergency fund for a flight sale. We'll see you next week.",
  notes_links=["https://commoncentsshow.example/tools/floor-income-calculator","https://tobiasrenner.example/coaching",
    "https://www.fdic.example/resources/deposit-insurance"],
  optional_links=["https://cdn.commoncentsshow.example/audio/cc077.mp3"],
  feed="none",
  doubt="A full time-coded transcript (speaker name + mm:ss seek link per segment) follows the notes in the same column; extended_end covers it (seek links are in-page anchors). The long host bio, newsletter box and related episodes in the sidebar are not notes. The disclaimer line is counted. Feed not provided."),
dict(id="wpcom_fiberchats_40", title="Fiber Chats 40: Spinning Nettles with Orla Breathnach",
  page_url="https://fiberchats.wordpress.com/2026/11/21/fiber-chats-40-spinning-nettles/", platform="wordpress-com",
  label_source="css: div.entry-content; minus: figure.wp-block-audio, div#jp-post-flair",
  notes_start="This month I talk with Orla Breathnach, who has spent the last six years turning stinging nettles into yarn",
  notes_end="As always, thank you to my patrons for keeping the show ad-free. Happy spinning!",
  notes_links=["https://www.clareweavers.example/orla-breathnach","https://www.clareweavers.example/workshops/nettle-2027",
    "https://fiberchats.wordpress.com/patterns/nettle-yarn-cowl/","https://www.textilehistoryjournal.example/articles/nettle-fibre-ww1",
    "https://fiberchats.wordpress.com/2026/06/14/fiber-chats-35-flax-from-seed-to-thread/"],
  feed="none",
  doubt="WordPress.com block-theme post: audio block with caption first (not notes), an image with caption between paragraphs (inside the span), guest bio. Jetpack Share/Like and the 'Related' posts (with excerpts, one repeating a notes link) sit inside entry-content after the notes; tags, comments (with links) and the hidden subscribe modal/action bar are not notes. Feed not provided."),
]

FEEDS_EXPLICIT = {
 "ssp_civicmatters_45": "<p>A city public works director explains how a road repair budget is actually built.</p>",
 "substack_marginalia_translators": "Episode 22 of the Marginalia podcast: on translating Hungarian novels, footnotes, and the word that took four months.",
 "pubradio_thecommons_wellwater": "Thousands of private wells in the northern counties aren't tracked by anyone. After a dry summer, some families found out the hard way. Host Dana Ruiz talks with a hydrogeologist, a well driller and a county health officer.",
 "apple_nightshiftnotes_56": (
   "<p>What actually gets said at shift change, and what should? Veteran ICU charge nurse Bettina Royce joins Deshawn to pick apart the bedside handoff, from the SBAR template everyone learned in school to the sticky notes everyone actually uses.</p>"
   "<p>We talk about the three things Bettina never lets a handoff skip, how to hand off a family that is angry, and what to do when the oncoming nurse is clearly not listening.</p>"
   "<p>Chapters:<br>00:00 Intro<br>03:40 Why handoffs fail<br>15:20 Bettina's three non-negotiables<br>27:05 Handing off an angry family<br>36:50 Listener question: the 7 a.m. rush</p>"
   "<p>This episode is sponsored by ScrubLine. Compression socks that survive a 12-hour shift and the laundry. Get 20% off with code NIGHTSHIFT at <a href=\"https://scrubline.example/nightshift\">scrubline.example/nightshift</a>.</p>"
   "<p>Bettina's handoff checklist: <a href=\"https://nightshiftnotes.example/handoff-checklist\">nightshiftnotes.example/handoff-checklist</a><br>"
   "Join our nurses-only community: <a href=\"https://nightshiftnotes.example/community\">nightshiftnotes.example/community</a></p>"
   "<p>The content of this podcast is for education and entertainment and is not medical advice.</p>"),
 "spotify_deepfreeze_23": (
   "<p>Glaciologist Dr. Anneke Solheim spends her summers on the Greenland ice sheet with a set of microphones frozen into the ice. In this episode she plays us the sounds of a glacier cracking, a meltwater lake draining in under two hours, and the low hum that turned out to be a research plane three hundred kilometres away.</p>"
   "<p>We talk about what acoustic monitoring can tell scientists that satellites can't, how you keep a hydrophone alive at minus forty, and why she now listens to the ice before she looks at it.</p>"
   "<p>Hear Anneke's recordings: <a href=\"https://deepfreezepod.example/ep23\">deepfreezepod.example/ep23</a><br>"
   "Her lab: <a href=\"https://icesound-lab.example\">icesound-lab.example</a><br>"
   "Support Deep Freeze on Patreon: <a href=\"https://patreon.com/deepfreezepod\">patreon.com/deepfreezepod</a></p>"
   "<p>Deep Freeze is an independent production by Halvard Lunde and Mia Ostrowski.</p>"),
}
# feed "same" from the region, minus these extra selectors
FEED_MINUS = {
 "transistor_soilnotes_57": [],
}
KEEP_ATTRS = {"a": ["href"], "img": ["src", "alt"]}
UNWRAP = ["div", "span", "section", "figure"]

def clean_feed_html(html, base_url, minus=()):
    from urllib.parse import urljoin
    s = BeautifulSoup(html, "html.parser")
    for m in minus:
        for d in s.select(m):
            d.decompose()
    for t in s.find_all(DROP + ["img", "figcaption", "hr"]):
        t.decompose()
    for t in s.find_all(True):
        keep = KEEP_ATTRS.get(t.name, [])
        t.attrs = {k: v for k, v in t.attrs.items() if k in keep}
        if t.name == "a" and t.get("href"):
            t["href"] = urljoin(base_url, t["href"])
    for t in s.find_all(UNWRAP):
        t.unwrap()
    for t in s.find_all(["p", "strong", "em", "li", "ul"]):
        if not t.get_text(strip=True):
            t.decompose()
    out = re.sub(r"\n\s*\n+", "\n", str(s)).strip()
    return out + "\n"

def cut(text, start, end):
    """Slice text from the start phrase to the end phrase, by tokens."""
    spans = [(m.start(), m.end()) for m in re.finditer(r"\w+", text)]
    toks = [text[a:b].lower() for a, b in spans]
    st = tokens(start)[:12]
    en = tokens(end)[-12:]
    i = find_seq(toks, st)
    assert i >= 0, f"start not in region: {start!r}"
    j = find_seq(toks, en, i)
    assert j >= 0, f"end not in region after start: {end!r}"
    a = spans[i][0]
    b = spans[j + len(en) - 1][1]
    m = re.match(r"[^\s\w]*", text[b:])
    b += m.end()
    return text[a:b].strip()

def main():
    for sp in SPEC:
        pid = sp["id"]
        html = (ROOT / f"{pid}.html").read_text(encoding="utf-8")
        soup = BeautifulSoup(html, "html.parser")
        text, links, rhtml = region(soup, sp["label_source"], sp["page_url"])
        notes_text = cut(text, sp["notes_start"], sp["notes_end"])
        lab = {"id": pid, "title": sp["title"], "page_url": sp["page_url"], "platform": sp["platform"], "has_notes": True,
               "notes_start": sp["notes_start"], "notes_end": sp["notes_end"]}
        for k in ("alt_start", "alt_end", "extended_end", "visible_end"):
            if k in sp:
                lab[k] = sp[k]
        lab["notes_links"] = sp["notes_links"]
        for k in ("optional_links", "text_urls"):
            if sp.get(k):
                lab[k] = sp[k]
        lab["notes_text"] = notes_text
        lab["notes_chars_approx"] = len(notes_text)
        lab["label_source"] = sp["label_source"]
        lab["feed"] = sp["feed"]
        lab["doubt"] = sp["doubt"]
        (ROOT / "labels" / f"{pid}.json").write_text(json.dumps(lab, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        fp = ROOT / "feeds" / f"{pid}.html"
        if sp["feed"] == "none":
            if fp.exists():
                fp.unlink()
            continue
        if pid in FEEDS_EXPLICIT:
            fh = FEEDS_EXPLICIT[pid].strip() + "\n"
        else:
            assert sp["feed"] == "same", pid
            fh = clean_feed_html(rhtml, sp["page_url"], FEED_MINUS.get(pid, []))
        fp.write_text(fh, encoding="utf-8")
    print("wrote", len(SPEC), "labels")

if __name__ == "__main__":
    main()
