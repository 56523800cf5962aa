L = []
L.append(dict(
 id="acast_tidewatchers_e42", title="42. The Ferryman of Stenness Sound",
 page_url="https://shows.acast.com/tidewatchers/episodes/42-the-ferryman-of-stenness-sound",
 platform="acast",
 notes_start="In the winter of 1953 the Stenness ferry ran every day for eleven weeks without a single passenger",
 notes_end="Got a story from the islands? Write to us: hello@tidewatchers.scot Hosted on Acast. See acast.com/privacy for more information.",
 alt_end="Got a story from the islands? Write to us: hello@tidewatchers.scot",
 notes_links=["https://www.orkneylibrary.org.uk/archive","https://sulesk.bandcamp.com/album/weatherglass","https://acast.com/privacy"],
 optional_links=["mailto:hello@tidewatchers.scot","https://sphinx.acast.com/p/open/s/61c2a0f7e3d9b10013a4b2c1/e/656f1b4d8c21a90012f0e3aa/media.mp3"],
 notes_text="""In the winter of 1953 the Stenness ferry ran every day for eleven weeks without a single passenger on the manifest. Islay Brough goes looking for the man who kept it running, and finds his logbook in a biscuit tin in Kirkwall.
With thanks to Morag Isbister at the Orkney Library & Archive, and to Tam Linklater for the loan of his grandfather's tide tables.
Music this episode is by Sule Skerry Band — their album Weatherglass is out now on Bandcamp.
Got a story from the islands? Write to us: hello@tidewatchers.scot
Hosted on Acast. See acast.com/privacy for more information.""",
 feed="same",
 doubt="The grey 'Hosted on Acast. See acast.com/privacy' line after an <hr> is Acast-injected boilerplate inside the description block and the feed; counted as notes (alt_end stops before it). 'Listen on' badges, 'More episodes' cards with their own descriptions and the show's About text follow the notes and are not notes. The Download link above the notes is optional.",
))
L.append(dict(
 id="transistor_ledgerlines_e7", title="7: Double-Entry for Tiny Co-ops, with Priya Ravindran",
 page_url="https://share.transistor.fm/s/3f9a1c2b", platform="transistor",
 notes_start="Priya Ravindran has kept the books for eleven worker co-ops at once — a bakery, two bike shops",
 notes_end="with help from listeners on Ko-fi. Send your questions to questions@ledgerlines.fm.",
 notes_links=["https://coopbooks.org.uk/templates/shared-chart-of-accounts","https://www.uk.coop/resources/simply-legal","https://bookshop.org/p/books/accounting-for-the-rest-of-us-jenna-oduya/1938821","https://ledgerlines.transistor.fm/episodes/6-the-case-for-boring-software","https://ko-fi.com/ledgerlines"],
 notes_text="""Priya Ravindran has kept the books for eleven worker co-ops at once — a bakery, two bike shops, a cleaning collective and a very small brewery among them. She explains why a shared chart of accounts saved her sanity, how she teaches members to read a balance sheet in one evening, and the one reconciliation habit she would make compulsory if she could.
What we cover:
(00:00) Intro and a correction from episode 6
(03:42) How Priya fell into co-op bookkeeping
(11:05) One chart of accounts for eleven businesses
(24:30) Patronage dividends, explained without tears
(38:12) The "Friday twenty minutes" reconciliation habit
(47:50) Listener question: cash or accrual for a market stall?
Links:
Priya's free template: Shared Chart of Accounts for Small Co-ops
Co-operatives UK – Simply Legal guide
The book Priya recommends: Accounting for the Rest of Us by Jenna Oduya
Episode 6 with Marcus Hale: The Case for Boring Software
Ledger Lines is made by Owen Tregarthen with help from listeners on Ko-fi. Send your questions to questions@ledgerlines.fm.""",
 feed="none",
 doubt="Hidden tab panels (Transcript placeholder, Subscribe, Share with embed code) are not notes. 'More from Ledger Lines' with one-line descriptions follows the notes and is not notes. Timestamps in the notes are plain text, not links.",
))
L.append(dict(
 id="spotify_nightshiftbakers_e88", title="Ep. 88 — Laminated Dough at 3 a.m. with Dario Fenwick",
 page_url="https://open.spotify.com/episode/4kVbN8qWzXy2TfR6mPaL1c", platform="spotify",
 notes_start="Dario Fenwick has run the overnight shift at a forty-year-old Leeds bakery since he was nineteen.",
 notes_end="Night Shift Bakers is produced by Clem Asante and Jo Verhoeven. Send us your shift stories at nightshiftbakers.com/stories",
 alt_end="the ovens that outlived three owners, and what a 3 a.m. break actually looks like.",
 notes_links=[],
 text_urls=["https://www.fenwickandrowe.co.uk","https://breadlab.example.org/lamination-temperatures","nightshiftbakers.com/stories"],
 notes_text="""Dario Fenwick has run the overnight shift at a forty-year-old Leeds bakery since he was nineteen. We talk about why croissant dough hates a warm Tuesday, the ovens that outlived three owners, and what a 3 a.m. break actually looks like.
Dario's bakery: https://www.fenwickandrowe.co.uk
The lamination guide he mentions: https://breadlab.example.org/lamination-temperatures
We also answer Hana's question about proving in a cold garage (spoiler: it works, slowly).
Night Shift Bakers is produced by Clem Asante and Jo Verhoeven. Send us your shift stories at nightshiftbakers.com/stories""",
 feed="none",
 doubt="The visible body only shows the first paragraph behind a 'Show more' button; the full description is only in the JSON-LD PodcastEpisode description (meta description has the first paragraph prefixed with 'Listen to this episode from Night Shift Bakers on Spotify.'). Labelled the full JSON-LD text; alt_end is where the visible teaser stops. URLs are plain text (no anchors). 'More episodes from Night Shift Bakers' cards are not notes.",
))
L.append(dict(
 id="apple_fieldrecordings_e15", title="Ep 15 – The Loudest Quiet Place in Iceland",
 page_url="https://podcasts.apple.com/us/podcast/ep-15-the-loudest-quiet-place-in-iceland/id1634509871?i=1000671238890", platform="apple",
 notes_start="Ana spends four nights at a hut below Vatnajökull chasing a sound the rangers call ‘the organ’",
 notes_end="Field Recordings is an independent production of Low Shelf Audio. Supported by listeners like you.",
 notes_links=[],
 notes_text="""Ana spends four nights at a hut below Vatnajökull chasing a sound the rangers call ‘the organ’ – a low drone that only appears when the wind comes off the ice from the north-east. She records it on the last night, at 2 a.m., in minus eleven.
Along the way: a ranger who has heard it once in nine years, a geologist with a theory about ice caves and air pressure, and a very noisy Arctic fox.
Recorded on a Sound Devices MixPre-6 II with a pair of Clippy EM272 mics. The full 40-minute drone is on Ana’s Bandcamp page, free to download.
Field Recordings is an independent production of Low Shelf Audio. Supported by listeners like you.""",
 feed="short",
 doubt="The whole description is in the DOM, clamped to 4 lines by CSS with a 'more' button; the JSON-LD and meta description carry only the first sentence (same as the feed's short <description>). The date eyebrow, 'Nature · 44 min', the Information list and More Episodes summaries are not notes. Copyright line in the page is not notes.",
))
L.append(dict(
 id="simplecast_harborlights_e31", title="Episode 31: The Night the Ore Boat Came Home Early",
 page_url="https://harborlights.simplecast.com/episodes/the-night-the-ore-boat-came-home-early-K3v9xQ2p", platform="simplecast",
 notes_start="Captain Renata Okafor-Byrne on bringing a 700-foot laker into Duluth a day ahead of a November gale",
 notes_end="Harbor Lights is produced by Benedikt Aalto and Wren Castellanos, with support from the Minnesota Humanities Center.",
 notes_links=["https://www.lakesuperiormaritime.org/collections/radio-logs","https://en.wikipedia.org/wiki/Gales_of_November","https://harborlightspodcast.org/ep31","https://www.mnhumanities.org"],
 optional_links=["https://cdn.simplecast.com/audio/5a9c1e2b-7d3f-4b61-9e80-0c4a2f1d3b5e/episodes/0f3e2d1c-b0a9-4876-8543-210fedcba987/audio/128/default.mp3?aid=embed"],
 notes_text="""Captain Renata Okafor-Byrne on bringing a 700-foot laker into Duluth a day ahead of a November gale, and what the radio logs from that night still don't explain.
Renata was first mate on the Arrowhead Spirit in 1998 when the master fell ill off the Apostle Islands. She had eleven hours, a forecast that kept getting worse, and a crew that had never sailed under her. Twenty-three years later she walks us through the night hour by hour, with the original deck log open on the table.
Also in this episode: the Lake Superior Maritime Collections radio archive, and a short history of the gales of November from historian Ellis Varga.
Photos of the Arrowhead Spirit and a scan of the deck log are on our website.
Harbor Lights is produced by Benedikt Aalto and Wren Castellanos, with support from the Minnesota Humanities Center.""",
 feed="same",
 doubt="'Episode Notes' heading is not part of the notes. The Guests and Hosts person cards directly after the notes (with a host Twitter link) are Simplecast metadata, not notes. Tags above the player, pagination and Recent Episodes descriptions are not notes.",
))
