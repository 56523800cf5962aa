L = []
L.append(dict(
 id="libsyn_grainandgristle_e204", title="204 - Millet Is Not Bird Food (with Amara Nwachukwu)",
 page_url="https://grainandgristle.libsyn.com/204-millet-is-not-bird-food-with-amara-nwachukwu", platform="libsyn",
 notes_start="Chef and grain farmer Amara Nwachukwu makes the case for millet, fonio and teff on British menus",
 notes_end="for 15% off. Become a Gristle Friend and get bonus episodes on Patreon.",
 alt_end="Hearth & Hob cast iron – use code GRISTLE15 at hearthandhob.co.uk/gristle for 15% off.",
 notes_links=["https://www.threefieldsgrain.co.uk","https://grainandgristle.com/recipes/fonio-mackerel-greens","https://hearthandhob.co.uk/gristle","https://www.patreon.com/grainandgristle"],
 optional_links=["https://traffic.libsyn.com/secure/grainandgristle/GG204_Millet_final.mp3?dest-id=1482210"],
 notes_text="""Chef and grain farmer Amara Nwachukwu makes the case for millet, fonio and teff on British menus – and tells us why the first crop she grew in Herefordshire was eaten almost entirely by pigeons.
We cook her fonio “risotto” live in Fen’s kitchen, argue about whether teff pancakes count as injera (they don’t, says Amara, firmly), and Hollis finally admits he has been buying millet from the pet shop.
Find Amara’s farm and mill at threefieldsgrain.co.uk, and her recipe for fonio with smoked mackerel and greens on our recipe page.
This episode is supported by Hearth & Hob cast iron – use code GRISTLE15 at hearthandhob.co.uk/gristle for 15% off.
Become a Gristle Friend and get bonus episodes on Patreon.""",
 feed="none",
 doubt="The description block is collapsed by CSS (max-height + gradient) with a 'Read More' button, but the full text is in the DOM. Sponsor paragraph is part of the publisher's description and counted as notes. 'Direct download: … Category: … posted at' line after the button is Libsyn post meta (download link optional). Sidebar 'About the show' and Recent Episodes descriptions are not notes. Patreon paragraph is a call to action inside the description; alt_end stops before it.",
))
L.append(dict(
 id="podbean_quietcartography_e12", title="Episode 12: The Map That Drew the Border Wrong",
 page_url="https://quietcartography.podbean.com/e/episode-12-the-map-that-drew-the-border-wrong/", platform="podbean",
 notes_start="A surveyor's pencil slip in 1881 moved a county line four hundred yards east. Nobody noticed",
 notes_end="If you enjoy Quiet Cartography, please leave us a review – it genuinely helps other map nerds find us.",
 alt_end="The parish boundary stones project: boundarystones.org.uk • Femi's talk \"How to Read a Field Book\" on YouTube",
 notes_links=["https://maps.nls.uk/os/boundary-remarks/","https://boundarystones.org.uk/","https://www.youtube.com/watch?v=Qc7nL2mXa9E"],
 optional_links=["https://www.podbean.com/media/share/pb-r8k2m-15c9e3a?download=1"],
 notes_text="""A surveyor's pencil slip in 1881 moved a county line four hundred yards east. Nobody noticed for ninety years – until a farmer in Cold Ashby tried to pay his rates and found himself living in the wrong county.
This week Imogen Treharne unpicks the story with map librarian Dr. Femi Adebayo-Clarke, who found the original field book in a box marked "misc. Northants".
Things we talked about:
• The 1881 Ordnance Survey field book (digitised at National Library of Scotland – Boundary Remark Books)
• The parish boundary stones project: boundarystones.org.uk
• Femi's talk "How to Read a Field Book" on YouTube
If you enjoy Quiet Cartography, please leave us a review – it genuinely helps other map nerds find us.""",
 feed="none",
 doubt="Comments below (with links to geograph.org.uk and a listener-maps page) are not notes. An aria-hidden ad slot sits above the date line. The Download Episode button + duration, 'Posted in / Tags', share bar and sidebar (show blurb, recent episodes, archive, links widget) are not notes.",
))
L.append(dict(
 id="buzzsprout_backyardastro_e56", title="56. Finding Andromeda From a Supermarket Car Park",
 page_url="https://www.backyardastrohour.com/2138844/episodes/15502291-56-finding-andromeda-from-a-supermarket-car-park", platform="buzzsprout",
 notes_start="You don't need dark skies to find the Andromeda Galaxy. Lucía Ferrante shows us how she found it",
 alt_start="Send us a text You don't need dark skies to find the Andromeda Galaxy. Lucía Ferrante",
 notes_end="The Society for Popular Astronomy's observing guides: popastro.com Clear skies! — Pete & Nomvula",
 alt_end="Astronomy's observing guides: popastro.com Clear skies! — Pete & Nomvula Support the show",
 notes_links=["https://www.backyardastrohour.com/charts/andromeda-hop.pdf","https://www.lightpollutionmap.info/","https://www.popastro.com/main_spa1/observing/"],
 optional_links=["https://www.buzzsprout.com/twilio/text_messages/2138844/open_sms","https://www.buzzsprout.com/2138844/support","https://www.buzzsprout.com/2138844/15502291-56-finding-andromeda-from-a-supermarket-car-park.mp3?download=true"],
 notes_text="""You don't need dark skies to find the Andromeda Galaxy. Lucía Ferrante shows us how she found it from the Tesco car park in Crawley, using nothing but 10x50 binoculars and a star-hop she learned from her grandfather.
We also cover:
Why averted vision works (and why it feels like cheating)
The Bortle scale, and how to find your own number
This month's sky: Saturn rising, and the Perseids peaking on the 12th
Lucía's star-hop chart: download the PDF
Light pollution map we used: lightpollutionmap.info
The Society for Popular Astronomy's observing guides: popastro.com
Clear skies!
— Pete & Nomvula""",
 feed="same",
 doubt="Buzzsprout injects 'Send us a text' (fan-mail SMS link) before and 'Support the show' after the publisher's notes; both are in the feed description too. Labelled without them, alt_start/alt_end include them; their links are optional. The hidden Transcript and Chapters tab panels are not notes. 'Listen on' badges above the tabs and 'More episodes' cards are not notes.",
))
L.append(dict(
 id="anchor_kitchenlinguistics_e9", title="Why Grandmothers Say \"Fridge\" Differently",
 page_url="https://podcasters.spotify.com/pod/show/kitchenlinguistics/episodes/Why-Grandmothers-Say-Fridge-Differently-e2k7b3q", platform="anchor",
 notes_start="Tomasz and Adaeze compare what four generations of one family call the same six kitchen objects",
 notes_end="Send in a voice message: https://podcasters.spotify.com/pod/show/kitchenlinguistics/message",
 alt_end="https://www.dialectsurvey.example.ac.uk/maps/kitchen Music: \"Steam Kettle\" by Oyinda Lapite.",
 notes_links=["https://www.oed.com/dictionary/icebox_n","https://www.dialectsurvey.example.ac.uk/maps/kitchen","https://podcasters.spotify.com/pod/show/kitchenlinguistics/message"],
 notes_text="""Tomasz and Adaeze compare what four generations of one family call the same six kitchen objects: the fridge, the cooker, the tea towel, the colander, the biscuit tin and the thing you keep plastic bags in.
It turns out great-grandma Halina's "ice box" isn't old-fashioned at all - it's a borrowing with a surprisingly short life. Plus: a listener from Lagos on why "cooker" and "gas" mean the same thing in her house.
Sources and further reading:
https://www.oed.com/dictionary/icebox_n
https://www.dialectsurvey.example.ac.uk/maps/kitchen
Music: "Steam Kettle" by Oyinda Lapite.
---
Send in a voice message: https://podcasters.spotify.com/pod/show/kitchenlinguistics/message""",
 feed="none",
 doubt="The '--- Send in a voice message' line is Anchor-injected boilerplate inside the description; counted as notes (alt_end stops before it). The same description is repeated in window.__STATE__. 'Available on' badges above the notes, 'More from Kitchen Linguistics' rows with their descriptions, and the footer are not notes.",
))
L.append(dict(
 id="podigee_werkbankfunk_e23", title="#23 Schwalbenschwanz ohne Tränen",
 page_url="https://werkbankfunk.podigee.io/23-schwalbenschwanz-ohne-traenen", platform="podigee",
 notes_start="Warum der erste Schwalbenschwanz immer klemmt – und wie man es beim zweiten besser macht. Tischlermeisterin Jule Harms",
 alt_start="Jule Harms über Anreißen, Sägen und das Geräusch einer guten Verbindung Warum der erste Schwalbenschwanz",
 notes_end="gibt es als Bauplan bei uns im Blog. Fragen, Fotos von euren ersten Zinken, Beschwerden: post@werkbankfunk.de",
 alt_end="00:47:50 Sägen: Zugsäge gegen Rückensäge 01:00:10 Die Zinkenschablone 01:08:40 Hörerpost und Verabschiedung",
 notes_links=["https://www.harms-tischlerei.de","https://www.vhs-lueneburg.de/kurse/holz","https://werkbankfunk.de/plaene/zinkenschablone"],
 optional_links=["mailto:post@werkbankfunk.de","https://werkbankfunk.podigee.io/23-schwalbenschwanz-ohne-traenen.mp3?source=webplayer-download","https://werkbankfunk.podigee.io/23-schwalbenschwanz-ohne-traenen.m4a?source=webplayer-download","https://werkbankfunk.podigee.io/23-schwalbenschwanz-ohne-traenen.opus?source=webplayer-download"],
 notes_text="""Warum der erste Schwalbenschwanz immer klemmt – und wie man es beim zweiten besser macht. Tischlermeisterin Jule Harms aus Lüneburg bringt seit zwanzig Jahren Lehrlingen das Zinken bei und hat dabei so ziemlich jeden Fehler gesehen, den man machen kann.
Wir reden über das Anreißen mit Messer statt Bleistift, über die richtige Reihenfolge (Zinken zuerst! Oder doch Schwalben?), über japanische Zugsägen gegen europäische Rückensägen und darüber, warum man einer Verbindung anhört, ob sie passt.
Jules Werkstatt findet ihr unter harms-tischlerei.de, ihre Kurse für Einsteiger*innen über die VHS Lüneburg. Die Schablone, über die wir in der Mitte der Folge sprechen, gibt es als Bauplan bei uns im Blog.
Fragen, Fotos von euren ersten Zinken, Beschwerden: post@werkbankfunk.de""",
 feed="none",
 doubt="The episode subtitle line above the player is publisher text but a subtitle, not the description (alt_start). The 'Kapitelmarken' chapter table after the description comes from the episode's chapter metadata; labelled outside the notes, alt_end runs through it (its seek links are in-page anchors). Download list, share links, Weitere Episoden teasers are not notes.",
))
L.append(dict(
 id="podlove_spurwechsel_sw057", title="SW057 Der Bahnhof als Wohnzimmer",
 page_url="https://spurwechsel-podcast.de/sw057-der-bahnhof-als-wohnzimmer/", platform="podlove",
 notes_start="Was passiert mit Bahnhöfen, wenn keiner mehr Fahrkarten am Schalter kauft? Wir fahren nach Wittenberge, Bad Belzig",
 alt_start="Kulturbahnhöfe, Dorfläden und ein Fahrkartenautomat mit Seele Was passiert mit Bahnhöfen, wenn keiner mehr Fahrkarten",
 notes_end="SW041 Das Deutschlandticket – ein Jahr danach spurwechsel-podcast.de Unsere ältere Folge, auf die Ole sich bei der Kündigungsgeschichte bezieht.",
 notes_links=["https://www.kulturbahnhof-wittenberge.de/","https://de.wikipedia.org/wiki/Bahnhof_Wittenberge","https://coworkland.de/standorte/bad-belzig-bahnhof","https://www.bahnhof-belzig.de/geschichte","https://www.altenbeken.de/leben/bahnhof-buergerbuero","https://www.allianz-pro-schiene.de/themen/infrastruktur/bahnhoefe/","https://www.bundestag.de/resource/blob/912344/wd-5-047-22-bahnhofsgebaeude.pdf","https://spurwechsel-podcast.de/sw041-das-deutschlandticket-ein-jahr-danach/"],
 optional_links=["https://verkehr.social/@lenamarq","https://olebrinkmann.de"],
 notes_text="""Was passiert mit Bahnhöfen, wenn keiner mehr Fahrkarten am Schalter kauft? Wir fahren nach Wittenberge, Bad Belzig und Altenbeken und treffen Menschen, die aus leeren Empfangsgebäuden Cafés, Fahrradwerkstätten und Bürgerbüros gemacht haben. Außerdem: Lena erklärt, warum die Bahn ihre Bahnhöfe eigentlich gar nicht verkaufen will, und Ole hat zum ersten Mal ein Deutschlandticket gekündigt – aus Versehen.
Shownotes
Wittenberge
Kulturbahnhof Wittenberge – Verein für Bahnhofskultur e.V.
kulturbahnhof-wittenberge.de
Seit 2016 betreibt ein Verein das Empfangsgebäude mit Café, Probenraum und Fahrradstation.
Bahnhof Wittenberge – Wikipedia
de.wikipedia.org
Bad Belzig
CoWorkLand Bad Belzig: Arbeiten im Bahnhof
coworkland.de
Der Coworking-Space im ehemaligen Wartesaal, den uns Franziska Dörr gezeigt hat.
Geschichte des Bahnhofs Bad Belzig
www.bahnhof-belzig.de
Altenbeken
Bürgerbüro im Bahnhof – Gemeinde Altenbeken
www.altenbeken.de
Meldeamt, Fundbüro und Fahrkartenverkauf unter einem Dach.
Hintergrund
Bahnhöfe – Allianz pro Schiene
www.allianz-pro-schiene.de
Zahlen zu verkauften und leerstehenden Empfangsgebäuden.
Wissenschaftliche Dienste: Veräußerung von Bahnhofsgebäuden (PDF)
www.bundestag.de
SW041 Das Deutschlandticket – ein Jahr danach
spurwechsel-podcast.de
Unsere ältere Folge, auf die Ole sich bei der Kündigungsgeschichte bezieht.""",
 feed="none",
 doubt="The Podlove Web Player sits between the summary paragraph and the Shownotes card list; both parts are notes. The italic episode subtitle above the summary is an acceptable start (alt_start). The 'Mitwirkende' contributors table after the cards (social icon links) is not notes; its links are optional. Comments (one with a link), post meta, and the comment form are not notes. The small domain lines (psn-url) are part of the card text.",
))
L.append(dict(
 id="powerpress_cedarcreek_ep88", title="Ep. 88: Fiddles, Floods and the Grange Hall Reopening",
 page_url="https://cedarcreekradiohour.com/2022/06/ep-88-fiddles-floods-grange-hall/", platform="wordpress-powerpress",
 notes_start="Live from the newly reopened Cedar Creek Grange Hall: the Hollister Sisters string band, a flood-recovery update",
 notes_end="including Valley Feed & Seed and the Cedar Creek Credit Union. Become an underwriter.",
 notes_links=["https://www.cedarcounty-wa.gov/flood-recovery","https://hollistersisters.com/shop","https://cedarcreekradiohour.com/underwriters/"],
 optional_links=["https://media.blubrry.com/cedarcreek/cedarcreekradiohour.com/wp-content/uploads/2022/06/CCRH_088.mp3","https://podcasts.apple.com/us/podcast/cedar-creek-radio-hour/id1011223344?mt=2&ls=1","https://cedarcreekradiohour.com/feed/podcast/","https://cedarcreekradiohour.com/subscribe-to-podcast/"],
 notes_text="""Live from the newly reopened Cedar Creek Grange Hall: the Hollister Sisters string band, a flood-recovery update from county commissioner Dale Amundsen, and the return of the Swap Shop.
It took fourteen months, two insurance adjusters and about three hundred volunteers, but the Grange Hall floor is dry and the piano has been tuned. Thank you to everyone who hauled mud last spring — this one is for you.
In this episode
The Hollister Sisters play “High Water Reel”, “Ida’s Waltz” and a brand-new one they haven’t named yet (suggestions welcome)
Commissioner Amundsen on the levee study and when the Route 9 bridge will reopen
Swap Shop: a goat cart, forty feet of chain-link, and a 1978 Sears canoe
Weather and river levels with Bud Okerlund
The county’s flood-recovery resources are collected at cedarcounty-wa.gov/flood-recovery. The Hollister Sisters’ new record is available from their website.
Cedar Creek Radio Hour is made possible by our underwriters, including Valley Feed & Seed and the Cedar Creek Credit Union. Become an underwriter.""",
 feed="same",
 doubt="PowerPress player, 'Podcast: Play in new window | Download (Duration …)' and 'Subscribe: Apple Podcasts | RSS | More' lines open the entry content before the notes; not notes (links optional). The image caption after the first paragraph ('The Hollister Sisters warming up… Photo: Marta Quist') is not notes. Comments with links, entry meta, sidebar 'Tune In' text widget with a link are not notes.",
))
