L = []
L.append(dict(
 id="megaphone_deadlinedesk_e112", title="The County That Lost Its Newspaper, and Then Its Hospital",
 page_url="https://www.deadlinedeskpod.com/episodes/112-the-county-that-lost-its-newspaper", platform="megaphone-custom",
 notes_start="When the Harlan Ridge Courier closed in 2019, nobody was left to read the hospital board’s minutes.",
 notes_end="Editor: Leontyne Moss. Sound design: Ravi Castell. Learn more about your ad choices. Visit megaphone.fm/adchoices",
 alt_end="Read Celeste’s full investigation at Ridgeline Report. The Medill “news deserts” data we cite is here.",
 notes_links=["https://www.ridgelinereport.org/investigations/harlan-ridge-hospital","https://localnewsinitiative.northwestern.edu/projects/state-of-local-news/","https://quillfeather.app/deadline","https://stonebridgesleep.com/deadline","https://harbourline.coop/podcast","https://megaphone.fm/adchoices"],
 notes_text="""When the Harlan Ridge Courier closed in 2019, nobody was left to read the hospital board’s minutes. Four years later the county’s only hospital announced it would close its maternity ward, then its emergency room, then everything. Reporter Celeste Abernathy-Oduya went back through four years of board minutes that nobody had covered and found the decisions were all there, in public, waiting for someone to notice.
Mateo talks to Celeste about what she found, to a former Courier editor who still keeps the paper’s police scanner on his kitchen table, and to a nurse who drove a woman in labour 74 miles to the next hospital.
Read Celeste’s full investigation at Ridgeline Report. The Medill “news deserts” data we cite is here.
This episode is sponsored by:
Quillfeather — the notebook app built for reporters. Try it free for 60 days at quillfeather.app/deadline
Stonebridge Mattress — get $200 off with code DEADLINE at stonebridgesleep.com/deadline
Harbourline Credit Union — banking for people who work odd hours. harbourline.coop/podcast
Deadline Desk is produced by Yusra Kettering and Finn Abara. Editor: Leontyne Moss. Sound design: Ravi Castell.
Learn more about your ad choices. Visit megaphone.fm/adchoices""",
 feed="same",
 doubt="Only the first three paragraphs are visible; the sponsors list, credits and the Megaphone ad-choices line sit in a [hidden] block behind a 'Show full notes' button. Labelled the full notes (as in the feed); alt_end is where the visible part stops. Sponsor list and ad-choices line are part of the publisher's description. Ad slots (aria-hidden 'Advertisement'), 'Listen on' list above the notes, topic chips, share links, the newsletter box, More episodes descriptions and the rail 'About Deadline Desk' are not notes.",
))
L.append(dict(
 id="pubradio_commonground_leafblowers", title="Should Brackett County ban gas leaf blowers?",
 page_url="https://www.wqrn.org/commonground/2024/10/16/gas-leaf-blower-ban-brackett-county", platform="public-radio",
 notes_start="This fall, three towns in Brackett County — Millbrook, Easton Falls and North Haddam — are weighing bans",
 notes_end="and the state’s clean landscaping equipment rebate is open through June.",
 alt_end="the state’s clean landscaping equipment rebate is open through June. This segment aired on October 16, 2024.",
 notes_links=["https://www.nelandscapers.org/","https://www.millbrook-ma.gov/DocumentCenter/View/4410/Leaf-Blower-Bylaw-Draft","https://www.mass.gov/info-details/clean-landscaping-equipment-rebate"],
 optional_links=["https://media.wqrn.org/commonground/2024/10/20241016_commonground_leafblowers.mp3"],
 notes_text="""This fall, three towns in Brackett County — Millbrook, Easton Falls and North Haddam — are weighing bans on gas-powered leaf blowers. Supporters point to noise, air quality and the health of the people who run the machines all day. Landscaping companies say battery equipment can’t yet do the job on big properties, and that a ban would land hardest on small, often immigrant-owned businesses.
Today on Common Ground, we look at what’s actually in the proposals, what happened in towns that already passed bans, and what it would cost to switch. And we want to hear from you: would you support a ban in your town?
Guests
Dr. Rosalind Okafor, environmental health researcher at Quarry State University, who has measured leaf-blower noise at 40 Brackett County job sites.
Hector Villalba-Ruiz, owner of Villalba Landscaping in Easton Falls and member of the New England Landscape Contractors Association.
Patricia Dunmore, selectwoman in Millbrook, who co-sponsored the town’s proposed bylaw.
You can read Millbrook’s draft bylaw on the town website, and the state’s clean landscaping equipment rebate is open through June.""",
 feed="none",
 doubt="A station membership promo box ('Local news doesn’t happen by itself… Become a member') is inserted inside the segment body between the intro and the Guests list; not notes. 'This segment aired on …' is station boilerplate (alt_end includes it). Site alert, live-player 'On Air Now', byline/updated lines, Listen/Download/Embed (hidden embed code), photo caption, sponsor slots, tags, author bio cards and rail items are not notes.",
))
L.append(dict(
 id="italian_caffescorretto_e33", title="#33 – La moka che salvò un matrimonio",
 page_url="https://www.caffescorretto.it/puntate/33-la-moka-che-salvo-un-matrimonio/", platform="wordpress-elementor-spreaker",
 notes_start="Tutti in Italia hanno una moka in cucina, ma quasi nessuno conosce la storia vera di come ci è arrivata.",
 alt_start="Nel 1952 a Omegna una lite tra due fratelli cambiò per sempre il modo in cui gli italiani fanno il caffè.",
 notes_end="Se ti piace quello che facciamo, puoi offrirci un caffè (corretto, ovviamente) su Patreon.",
 notes_links=["https://www.museodelcasalingo.it/collezione/caffettiere","https://www.treccani.it/enciclopedia/moka","https://www.ibs.it/oggetti-di-tutti-giorni-libro-ludovica-sanfelice/e/9788823012345","https://archivio.lastampa.it/","https://www.patreon.com/caffescorretto"],
 optional_links=["https://www.spreaker.com/episode/33-la-moka-che-salvo-un-matrimonio--58812233"],
 notes_text="""Tutti in Italia hanno una moka in cucina, ma quasi nessuno conosce la storia vera di come ci è arrivata. In questa puntata Giulia e Matteo partono da una leggenda di famiglia – due fratelli di Omegna, una lite furiosa a Natale del 1952 e una caffettiera scaraventata fuori dalla finestra – e provano a capire quanto ci sia di vero.
Con noi c’è Ludovica Sanfelice, storica del design industriale, che ci racconta come la moka sia passata da oggetto di lusso a simbolo della cucina di tutti, e perché il famoso omino coi baffi è arrivato solo molti anni dopo.
In questa puntata
La leggenda di Omegna (e perché non regge)
Alluminio, autarchia e il brevetto del 1933
Come una pubblicità ha inventato una tradizione
La domanda di un ascoltatore: la moka va lavata col sapone? (No.)
Fonti e approfondimenti
Museo del Casalingo di Omegna – la collezione di caffettiere
La voce «moka» sull’Enciclopedia Treccani
Il libro di Ludovica: Oggetti di tutti i giorni (Edizioni del Lago, 2022)
Archivio storico de La Stampa, per gli articoli del 1952
Caffè Scorretto è un podcast indipendente. Se ti piace quello che facciamo, puoi offrirci un caffè (corretto, ovviamente) su Patreon.""",
 feed="none",
 doubt="Elementor page: the post excerpt widget above the Spreaker player is a one-sentence teaser (alt_start; the Spreaker fallback link text 'Ascolta … su Spreaker.' lies between). The post-content widget is the notes. 'Ascolta anche su' icons, tags, share buttons, 'Potrebbe interessarti anche' excerpts, comments (one with a link) and the footer show description are not notes.",
))
L.append(dict(
 id="japanese_yorunohondana_e71", title="71. 図書館で借りた本に挟まっていたもの",
 page_url="https://yorunohondana.fm/episode/71/", platform="hugo-static",
 notes_start="古本や図書館の本に挟まっていたレシート、しおり、手紙。リスナーから届いた「挟まっていたもの」を紹介しながら",
 notes_end="お便りフォームからお送りください。番組内で紹介させていただくことがあります。",
 notes_links=["https://www.shinchosha.co.jp/book/610123/","https://www.kawade.co.jp/np/isbn/9784309031234/","https://www.hanmoto.com/bd/isbn/9784909876543","https://www.ndl.go.jp/jp/use/tokyo/index.html","https://jinbocho-kosho.example.jp/","https://yorunohondana.fm/episode/58/","https://x.com/hashtag/%E5%A4%9C%E3%81%AE%E6%9C%AC%E6%A3%9A","https://forms.gle/Yh7nQp2cD9xKvR3a8"],
 optional_links=["https://media.yorunohondana.fm/episodes/yh071.mp3"],
 notes_text="""古本や図書館の本に挟まっていたレシート、しおり、手紙。リスナーから届いた「挟まっていたもの」を紹介しながら、本と持ち主のあいだにある小さな物語について話しました。
たつやが古書店で見つけた1987年の映画の半券から、みわこの「返却日を三回も延長した本」の話まで。後半は、挟まっていたものをきっかけに書かれた本を二冊紹介しています。
紹介した本
『しおりの博物誌』（新潮社）
『古本の余白』（河出書房新社）
『返却期限は過ぎていた』（夏葉社）
話題にのぼったもの
国立国会図書館 東京本館
神保町古書店街
58. 古本屋さんの値付けのひみつ（過去回）
お便り募集中
感想やリクエストは、X（旧Twitter）でハッシュタグ #夜の本棚 をつけて投稿するか、お便りフォームからお送りください。番組内で紹介させていただくことがあります。""",
 feed="same",
 doubt="Hosts line ('出演: みわこ, たつや') above the player, listen-on badges, share buttons, tags, pager, 関連エピソード descriptions and the 夜の本棚について show blurb are not notes. The お便り募集中 call for letters is inside the shownotes block and in the feed, so counted.",
))
L.append(dict(
 id="techpod_buildtalks_e65", title="#65 — Reproducible Builds at 40,000 Packages (live from PackagingCon)",
 page_url="https://buildtalks.dev/episodes/65-reproducible-builds-40000-packages/", platform="astro-static",
 notes_start="This one is a little different: we recorded it live on stage at PackagingCon 2024 in Berlin",
 notes_end="and to our supporters on GitHub Sponsors who paid for our train tickets to Berlin.",
 notes_links=["https://packaging-con.org/2024/","https://reproducible-builds.org/","https://reproducible-builds.org/specs/source-date-epoch/","https://diffoscope.org/","https://salsa.debian.org/reproducible-builds/strip-nondeterminism","https://reproducible-builds.org/docs/timestamps/","https://reproducible-builds.org/docs/locales/","https://reproducible-builds.org/docs/stable-inputs/","https://tests.reproducible-builds.org/","https://github.com/kpcyrd/rebuilderd","https://in-toto.io/","https://slsa.dev/spec/v1.0/levels","https://bootstrappable.org/","https://guix.gnu.org/manual/en/html_node/Invoking-guix-challenge.html","https://nixos.org/manual/nix/stable/command-ref/nix-build.html#opt-check","https://www.chromium.org/developers/testing/isolated-testing/deterministic-builds/","https://go.dev/blog/rebuild","https://noorhv.net/talks/packagingcon-2024.pdf","https://fosstodon.org/@noorhv","https://buildtalks.dev/episodes/41-the-trusting-trust-problem/","https://github.com/sponsors/buildtalks"],
 optional_links=["https://cdn.buildtalks.dev/audio/buildtalks-065.mp3","https://buildtalks.dev/episodes/65-reproducible-builds-40000-packages/transcript/","https://buildtalks.dev/rss.xml","https://www.youtube.com/watch?v=bT65rEpR0dX"],
 notes_text="""This one is a little different: we recorded it live on stage at PackagingCon 2024 in Berlin, in front of about two hundred people who care far too much about build systems. Our guest Noor Haddadin-Vance has spent five years leading the reproducible-builds effort for a Linux distribution with just over 40,000 source packages. Today, all but 312 of them build bit-for-bit identically on any machine.
We talk about the unglamorous causes of non-determinism (timestamps! locale! filesystem ordering!), SOURCE_DATE_EPOCH, why compilers were the easy part, what a rebuilder network actually catches, and the social work of convincing hundreds of upstream maintainers to merge one-line patches. The audience Q&A at the end is excellent — thank you to everyone who queued at the microphone.
Chapters
Time Topic
00:00 Cold open and welcome from the PackagingCon stage
02:35 What “reproducible” means, and what it doesn’t
08:08 The first 10,000 packages: timestamps everywhere
15:02 SOURCE_DATE_EPOCH and the spec that made it possible
21:30 Locale, umask and filesystem ordering
28:31 Why compilers were the easy part
34:04 diffoscope: reading the diff of two binaries
39:55 Rebuilders, and what they have actually caught
46:00 The 312 stubborn packages
50:12 Audience Q&A: JVM builds, Go, and embedded firmware
1:00:40 Wrap-up and thanks
Links
Reproducible Builds project
SOURCE_DATE_EPOCH specification
diffoscope
strip-nondeterminism
Docs: timestamps
Docs: locales
Docs: stable order for inputs
Continuous test results
rebuilderd
in-toto
SLSA build levels
Bootstrappable Builds
guix challenge
nix-build --check
Chromium: deterministic builds
Go blog: Perfectly Reproducible, Verified Go Toolchains
Noor’s slides: packagingcon-2024.pdf
Noor on the fediverse: @noorhv@fosstodon.org
Previous episode on the same topic: #41 The Trusting Trust Problem
Thanks to the PackagingCon organisers for the stage and the sound desk, and to our supporters on GitHub Sponsors who paid for our train tickets to Berlin.""",
 feed="none",
 doubt="The chapters <table> (timestamps are in-page #t= anchors) and the 19-item link list are part of the notes. Eyebrow/date/'Live' badge, the guests/hosts line (links to guest pages), the media links line (MP3, transcript, RSS), 'Edit this page on GitHub', listen-elsewhere list, giscus discussion, pager with next/previous blurbs and the footer show description are not notes. One link is relative (/episodes/41-…), resolved against the page URL.",
))
