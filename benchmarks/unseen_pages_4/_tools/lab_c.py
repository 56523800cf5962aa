L = []
L.append(dict(
 id="ssp_mindfulmachinist_e14", title="E14 – Tolerances, Burnout and the Lathe in the Garage",
 page_url="https://mindfulmachinist.com/podcast/e14-tolerances-burnout-lathe/", platform="wordpress-ssp",
 notes_start="CNC programmer Ximena Ortuño spent nine years writing toolpaths for aerospace brackets, and she was very good at it.",
 notes_end="This episode is brought to you by Edgebreak Deburring Tools. Listeners get a free sample pack with the code MINDFUL.",
 notes_links=["https://www.practicalmachinist.com/forum/threads/southbend-heavy-10-restoration-log.401223/","https://www.vintagemachinery.org/mfgindex/detail.aspx?id=2104","https://www.mind.org.uk/information-support/types-of-mental-health-problems/stress/","https://mindfulmachinist.com/go/edgebreak"],
 optional_links=["https://mindfulmachinist.com/podcast-download/712/e14-tolerances-burnout-lathe.mp3?ref=download","https://mindfulmachinist.com/podcast-player/712/e14-tolerances-burnout-lathe.mp3?ref=new_window","https://episodes.castos.com/mindfulmachinist/e14-tolerances-burnout-lathe.mp3"],
 notes_text="""CNC programmer Ximena Ortuño spent nine years writing toolpaths for aerospace brackets, and she was very good at it. Then one Tuesday she couldn’t make herself open the CAM software. In this episode she talks about the year after — the burnout, the boredom, and the 1950s Southbend lathe she rescued from a farm auction for forty dollars.
We talk about why manual machining felt like “breathing with my hands”, the difference between a tolerance and a standard, and how she came back to CNC on her own terms, three days a week.
Mentioned in this episode:
Ximena’s restoration thread on Practical Machinist
South Bend Lathe Works on VintageMachinery.org
The book: Shop Class as Soulcraft by Matthew B. Crawford
Mind – information on stress and burnout
This episode is brought to you by Edgebreak Deburring Tools. Listeners get a free sample pack with the code MINDFUL.""",
 feed="none",
 doubt="SSP is set to show the player below the content: after the notes come a Jetpack 'Share this:' block, the Castos player (with hidden Subscribe/Share panels holding RSS, links and embed code) and the 'Download file | Play in new window | Duration: 00:34:11 | Recorded on …' meta line, all inside .entry-content; none of that is notes. The sponsor line is the publisher's and counted. Related Episodes excerpts and the sidebar newsletter box are not notes.",
))
L.append(dict(
 id="squarespace_slowtrain_e27", title="Ep 27: The Sleeper to Fort William",
 page_url="https://www.slowtrainpodcast.co.uk/episodes/ep-27-the-sleeper-to-fort-william", platform="squarespace",
 notes_start="Eleven hours, one bunk, and a 4 a.m. wake-up at Rannoch Moor. Bea and Kofi take the Caledonian Sleeper",
 notes_end="Music by The Ochil Drift. Sound recordist: Kofi Mensah-Larbi. We paid for our own tickets.",
 notes_links=["https://www.sleeper.scot/routes/fort-william","https://www.westhighlandline.org.uk/stations/rannoch/","https://www.moorofrannochhotel.co.uk"],
 optional_links=["https://static1.squarespace.com/static/5f3a2b1c0d9e8f7a6b5c4d3e/t/650c1a9f8e7d6c5b4a392817/1695298001122/STP_Ep27_Sleeper_Final.mp3/original/STP_Ep27_Sleeper_Final.mp3"],
 notes_text="""Eleven hours, one bunk, and a 4 a.m. wake-up at Rannoch Moor. Bea and Kofi take the Caledonian Sleeper from Euston all the way to the end of the line at Fort William, and try to work out whether a night train is a journey or a very expensive bad night’s sleep.
Listen below, or wherever you get your podcasts.
Along the way we meet Angus, a host who has made up the beds on this route for twenty-two years and still can’t sleep on trains himself; we eat the haggis, neeps and tatties in the Club Car at 10.40 p.m.; and Kofi loses a fight with the folding washbasin.
At Rannoch the train stops in the middle of nowhere and the sun comes up over the moor. We recorded that too — it’s at 31:20, if you just want to hear the quiet.
Useful links
Caledonian Sleeper – Fort William route
Rannoch station on the Friends of the West Highland Lines site
Angus recommends the Moor of Rannoch Hotel if you want to get off and stay
Music by The Ochil Drift. Sound recordist: Kofi Mensah-Larbi. We paid for our own tickets.""",
 feed="none",
 doubt="The notes are three HTML blocks separated by an audio block and an image block; all three are notes. The image caption ('Rannoch Moor at 5.52 a.m. … Photo by Kofi Mensah-Larbi.') sits between them and is not notes. The announcement bar, date/category/author lines, tags, like/share, author bio, prev/next and the 'Timetable' newsletter block are not notes.",
))
L.append(dict(
 id="substack_marginalia_e31", title="Notes in the margins of a stolen library book",
 page_url="https://marginalia.substack.com/p/notes-in-the-margins-of-a-stolen", platform="substack",
 notes_start="In 2019 a retired librarian in Sligo bought a box of books at a house clearance and found",
 alt_start="Episode 31: a 1962 copy of Middlemarch, four readers, and sixty years of arguments written in pencil.",
 notes_end="If you have a book with someone else’s handwriting in it, I would love to see it — here’s how to send me a photo.",
 extended_end="The book is going back to Galway next month, fine waived, margins intact. Thanks for listening, and keep writing in your books.",
 notes_links=["https://www.galwaylibrary.ie/local-history","https://marginalia.substack.com/p/send-me-your-margins"],
 optional_links=["https://marginalia.substack.com/p/notes-in-the-margins-of-a-stolen?utm_source=substack&utm_medium=email&utm_content=share&action=share","https://marginalia.substack.com/subscribe?"],
 notes_text="""In 2019 a retired librarian in Sligo bought a box of books at a house clearance and found, at the bottom, a copy of Middlemarch that had been due back at Galway County Library on 3 March 1962. It never went back. Instead it went round — through at least four readers, who argued with George Eliot, and then with each other, in the margins.
This week I track down two of them. One is eighty-seven and remembers exactly why she underlined “the growing good of the world” three times. The other is her grandson, who wrote “boring” next to chapter 15 in 1998 and would like the record to show he has since changed his mind.
The library, by the way, has waived the fine. Galway County Library’s local history team helped me date the stamp; their local history collection is open to anyone.
If you have a book with someone else’s handwriting in it, I would love to see it — here’s how to send me a photo.""",
 feed="short",
 doubt="Audio player at top (its track description repeats the subtitle). The subtitle h3 is the post's summary and the feed's short description: acceptable start (alt_start). A Substack subscribe widget ('Marginalia is a reader-supported podcast … Subscribe') sits between paragraphs 2 and 3 inside the body and is not notes; the 'Share' button after the last paragraph is not notes. A collapsed <details> Transcript follows the body (extended_end). Comments (one with a link) and 'Ready for more?' previews are not notes.",
))
L.append(dict(
 id="ghost_openbench_e40", title="Episode 40: The Oscilloscope That Came Back From the Dead",
 page_url="https://openbench.fm/episode-40-the-oscilloscope-that-came-back/", platform="ghost",
 notes_start="This week Tamsin Achebe-Roy tells us how she brought a dead 1987 Hameg oscilloscope back to life",
 alt_start="Tamsin Achebe-Roy repaired a 1987 analogue scope with a 3D-printed knob, a borrowed schematic and a lot of patience.",
 notes_end="Open Bench is made by Rafe Lindqvist and Dolores Mbeki. Our theme music is \"Solder Fumes\" by Kettle & Wire.",
 notes_links=["https://tamsinfixes.net/2024/hameg-hm203-restoration/","https://www.repaircafe.org/en/visit/","https://elektrotanya.example.com/hameg","https://www.freecad.org/","https://therestartproject.org/right-to-repair/"],
 notes_text="""This week Tamsin Achebe-Roy tells us how she brought a dead 1987 Hameg oscilloscope back to life with a borrowed service manual, a 3D-printed timebase knob and about forty evenings of patience. It started as a £15 car-boot find and ended with her teaching a repair café how to read a CRT schematic.
Listen here, or in your podcast app:
In this episode
Why analogue scopes fail (it's nearly always the power supply)
Finding a service manual when the manufacturer no longer exists
Designing a replacement knob in FreeCAD, and printing it in PETG
High voltage safety: what Tamsin did, and what she wishes she'd done
Running a repair café table for test equipment
Links
Tamsin's full repair log, with photos and the FreeCAD files, is on her blog:
Bringing a Hameg HM203 back from the dead
Forty evenings, one borrowed manual and a 3D-printed knob: a complete restoration log for a 1987 analogue oscilloscope.
Tamsin Fixes Things Tamsin Achebe-Roy
Find a Repair Café near you
The archive of old test-gear manuals Tamsin used: Hameg manuals
FreeCAD
Right to repair in the UK: The Restart Project
Open Bench is made by Rafe Lindqvist and Dolores Mbeki. Our theme music is "Solder Fumes" by Kettle & Wire.""",
 feed="none",
 doubt="A Ghost audio card (title 'Open Bench 040 — …', 0:00 / 53:48, 1×) sits in the middle of the notes; its player text is UI, not notes. The bookmark card (title, description, author/publisher) is part of the notes. The custom excerpt under the title is a summary (alt_start); the feature image caption, byline, reading time, comments script and read-more cards are not notes.",
))
L.append(dict(
 id="medium_commonstable_e17", title="What a Tool Library Taught One Town About Trust",
 page_url="https://medium.com/the-commons-table/what-a-tool-library-taught-one-town-about-trust-8c3e1f2a9b7d", platform="medium",
 notes_start="In a converted fire station in Beacon Falls, there are 1,900 tools on the shelves and no deposit",
 alt_start="Episode 17 of The Commons Table podcast: 1,900 tools, 600 members, and a lending rule that shouldn’t work.",
 notes_end="libraries, gardens, workshops and the people who hold them together. New episodes every other Monday.",
 alt_end="New episodes every other Monday. Listen on Apple Podcasts · Spotify · everywhere else",
 notes_links=["https://beaconfallstoollibrary.org/start-your-own","https://www.shareable.net/how-to-start-a-tool-library/","https://localtools.org/find/"],
 optional_links=["https://podcasts.apple.com/us/podcast/the-commons-table/id1711223344","https://open.spotify.com/show/2CoMmOnStAbLe000000000","https://commonstable.captivate.fm/listen"],
 notes_text="""In a converted fire station in Beacon Falls, there are 1,900 tools on the shelves and no deposit on any of them. You can borrow a tile saw, a pressure washer or a wheelbarrow with nothing but a library card and a promise. When Greer Oyelaran started the tool library in 2016, everyone told her the shelves would be empty within a year.
Eight years later, she has lost eleven tools. Total.
In episode 17 of The Commons Table, I sat down with Greer and two of her volunteers to find out why. The answer, it turns out, is less about tools than about what happens when you ask people to be trustworthy instead of assuming they aren’t.
“The deposit says: we think you’ll steal this. People hear that. Take it away, and they hear something else.”
We talk about the “bring it back dirty” rule, the Saturday repair table that keeps the inventory alive, and the one time a borrowed chainsaw came back with a thank-you cake. Greer also shares the lending policy template she gives to other towns — you can download it here.
If you want to go further, the Shareable guide to starting a tool library is still the best place to begin, and the Local Tools directory will tell you if there’s already one near you.
The Commons Table is a podcast about shared things: libraries, gardens, workshops and the people who hold them together. New episodes every other Monday.""",
 feed="none",
 doubt="The whole Medium post body is the episode write-up by the show's host. The subtitle (h2) is a summary, acceptable as start. The lead image caption sits between subtitle and body and is not notes; an embedded Captivate player iframe sits mid-body. The final 'Listen on Apple Podcasts · Spotify · everywhere else' line is inside the body but is a listen-on bar (alt_end includes it; its links optional). Tags, claps, 'Published in'/'Written by' blurbs, responses (one with a link) and 'More from' previews are not notes.",
))
L.append(dict(
 id="webflow_groundwork_e19", title="19 — Earthworms Are Engineers (with Dr. Ines Varga-Holm)",
 page_url="https://www.groundworkpod.com/episodes/19-earthworms-are-engineers", platform="webflow",
 notes_start="Charles Darwin spent forty years watching earthworms and called them the most important animals in the history",
 alt_start="Soil ecologist Dr. Ines Varga-Holm on what earthworms actually do underground, why counting them is harder than it sounds",
 notes_end="Groundwork is produced by Callum Reyes-Whitfield and Priyanka Doshi. If you found this useful, support the show — it keeps us digging.",
 notes_links=["https://www.earthwormwatch.org/","https://doi.org/10.1016/j.soilbio.2023.109188","https://ahdb.org.uk/knowledge-library/how-to-count-earthworms","https://www.gutenberg.org/ebooks/2355","https://www.groundworkpod.com/field-guides/worm-count","https://www.groundworkpod.com/support"],
 notes_text="""Charles Darwin spent forty years watching earthworms and called them the most important animals in the history of the world. Dr. Ines Varga-Holm thinks he undersold them.
In this episode Ines explains the three “engineering” groups of earthworms — the surface dwellers, the horizontal burrowers and the deep vertical diggers — and why a field can have plenty of worms and still be missing the ones that matter. We also get into why ploughing hits the deep diggers hardest, what happened to worm numbers on her study farms in the first three years after switching to direct drilling, and how to do a proper worm count with a spade, a tray and twenty minutes.
The spade test
Dig a 20 cm cube of soil, break it up on a tray, and count. More than ten worms is good; more than sixteen is excellent. Do it in spring or autumn when the soil is moist, and do the same spot every year.
“If you only do one thing for your soil this year, count your worms. You can’t manage what you’ve never looked at.”
Links from the episode
Earthworm Watch — the citizen science survey Ines mentions
Her open-access paper: Anecic earthworm recovery under direct drilling
AHDB guide to counting earthworms
Darwin’s The Formation of Vegetable Mould through the Action of Worms (free on Project Gutenberg)
Our field guide for this episode: Worm Count Sheet (PDF)
Groundwork is produced by Callum Reyes-Whitfield and Priyanka Doshi. If you found this useful, support the show — it keeps us digging.""",
 feed="none",
 doubt="The hero block above the player has a one-paragraph summary (CMS 'summary' field) that differs from the rich-text body; acceptable as alt_start, though the player and 'Listen on' badges lie between. The 'Show notes' tab label is UI. Empty w-condition-invisible sponsor and transcript blocks follow; the newsletter's hidden success/failure messages and related-episode summaries are not notes.",
))
L.append(dict(
 id="wix_greenroomhour_e8", title="Ep. 8: The Understudy Who Went On",
 page_url="https://www.greenroomhour.com/episodes/ep-8-the-understudy", platform="wix",
 notes_start="Every community theatre has a story like this one. In March, three hours and forty minutes before curtain",
 notes_end="autumn season is on sale now at marlowstreetplayhouse.org. Our theme tune is by Juniper & the Props.",
 notes_links=["https://www.marlowstreetplayhouse.org/whats-on"],
 notes_text="""Every community theatre has a story like this one. In March, three hours and forty minutes before curtain on opening night of The Importance of Being Earnest at the Marlow Street Playhouse, the actor playing Lady Bracknell lost her voice completely. Her understudy, Delphine Osei-Marsh, was at work in a dental surgery across town.
Delphine tells us what happened in those four hours: the phone call, the costume that needed taking in with safety pins, and the line — you know the one — that she'd rehearsed a thousand times in her car but never once in front of an audience.
We also talk to director Bram Wójcik about why the Playhouse double-casts every lead, and what it costs a tiny theatre to do it.
The Marlow Street Playhouse's autumn season is on sale now at marlowstreetplayhouse.org. Our theme tune is by Juniper & the Props.""",
 feed="none",
 doubt="Wix collapsible-text element clamps the notes to 5 lines with a 'Read More' button; all text is in the DOM. The 'EPISODE 8 | MAY 2, 2024 | 39 MIN' line, the audio player's title line, 'Listen on' social bar, More Episodes repeater descriptions, the subscribe form and footer are not notes. No semantic article/main content markers other than the Wix main container.",
))
