"""The tables and columns of a schema-24 archive, frozen: what migrations 1 to 24 make of an
empty database (:func:`~.archive_path.archive_tables`), written out so that opening an archive
of this version does not run the 24 migrations in memory first (#30: 13 % of a run's
profiled CPU when all 100 feeds answered 304). ``tests/test_archive_marker.py`` derives
them again from the migrations and compares; a new schema version gets its own entry here
the same way.
"""

from __future__ import annotations

from collections.abc import Mapping

#: Table → its columns (space-separated), in the order the migrations create the tables.
_V24 = {
    "feeds": (
        "author categories content_hash description error_count etag explicit fetch_settings "
        "fetch_url first_seen_at funding gone_at id image language last_error last_error_at "
        "last_fetched_at last_modified last_status last_success_at link locked meta_seen_at name "
        "new_feed_url next_due_at not_before owner_email owner_name podcast_guid tags_filled_at "
        "title ttl type update_frequency update_period updated url warnings"
    ),
    "episodes": (
        "archive_url chapters duration enclosure_length enclosure_type enclosure_url episode_type "
        "explicit feed_id first_seen_at found_on_site_at guid id image item_hash key link "
        "notes_html notes_text number page_attempts page_confidence page_document_id page_error "
        "page_etag page_evidence page_extractor page_failures page_fetched_at page_last_modified "
        "page_method page_notes_html page_notes_text page_recheck_at page_status page_url "
        "page_version_seen_at persons published removed_from_feed_at row_hash season "
        "simple_chapters summary title transcripts unlisted_at updated version_seen_at"
    ),
    "fetches": "bytes episode_id error feed_id id kind ms started_at status url warning",
    "hosts": "host not_before reason updated_at",
    "feed_redirects": "feed_id id seen_at status target",
    "feed_moves": "feed_id id moved_at new_url old_url reason",
    "episode_revisions": (
        "changed duration enclosure_length enclosure_type enclosure_url episode_id guid id "
        "notes_html notes_text page_notes_html page_notes_text published seen_from seen_until "
        "source title"
    ),
    "feed_revisions": "author changed description feed_id id image seen_from seen_until title",
    "links": "domain episode_id id normalized_url position revision_id source text url",
    "feed_bodies": "feed_id id kind seen_at snapshot_id",
    "backfill_walks": "feed_id finished_at id started_at",
    "backfill_pages": (
        "episode_keys episodes error etag feed_id fetched_at id kind last_modified links since "
        "status url walk_id"
    ),
    "snapshots": (
        "base_id body content_type depth feed_id first_fetched_at hash id items_cut items_from "
        "items_hash items_to size url"
    ),
    "episodes_fts": "notes_text page_notes_text summary title",
    "documents": "body content_type first_fetched_at hash id kind size url",
    "page_bodies": "document_id episode_id id seen_at",
    "transcripts": (
        "attempts document_id episode_id error etag failures fetched_at first_seen_at format id "
        "items language last_modified next_check_at position rel status type unlisted_at url "
        "version_seen_at warnings"
    ),
    "chapter_files": (
        "attempts document_id episode_id error etag failures fetched_at first_seen_at format id "
        "items last_modified next_check_at position status type unlisted_at url version "
        "version_seen_at warnings"
    ),
    "transcript_revisions": (
        "document_id episode_id format id items seen_from seen_until transcript_id"
    ),
    "chapter_revisions": (
        "chapter_file_id document_id episode_id format id items seen_from seen_until"
    ),
    "transcript_segments": (
        "end episode_id id position revision_id speaker start text transcript_id"
    ),
    "chapters": (
        "chapter_file_id end episode_id id image position revision_id source start title toc url"
    ),
    "transcript_segments_fts": "speaker text",
    "chapters_fts": "title",
    "tags": (
        "attributes episode_id feed_id id name namespace ns parent_id position seen_from "
        "seen_until text"
    ),
    "media_payloads": (
        "content_type ext first_seen_at last_audit last_audit_at last_seen_at sha256 size"
    ),
    "media_fetches": (
        "bytes episode_id error etag fetched_at final_url headers id last_modified outcome sha256 "
        "status url"
    ),
    "episode_media": "episode_id first_seen_at id last_seen_at sha256 url version",
    "fixity_events": "checked_at expected found id outcome sha256",
    "media_state": (
        "checks episode_id error_count etag id last_error last_modified next_check_at "
        "partial_bytes partial_key updated_at url validator"
    ),
    "header_sets": "headers id sha256",
    "captures": (
        "body_sha256 body_size content_encoding document_id episode_id feed_id http_version id "
        "kind method payload_sha256 reason remote_ip request_headers_id response_headers_id "
        "response_values snapshot_id software started_at status url"
    ),
    "image_files": "feed_id first_seen_at id last_seen_at sha256 url version",
    "image_fetches": (
        "bytes error etag feed_id fetched_at final_url headers id last_modified outcome sha256 "
        "status url"
    ),
    "image_state": (
        "checks error_count etag feed_id id last_error last_modified next_check_at partial_bytes "
        "partial_key updated_at url validator"
    ),
    "push_subscriptions": (
        "asked_at callback feed_url hub last_error last_notified_at lease_seconds lease_until "
        "notifications renew_at secret state topic"
    ),
    "podping_cursor": "block block_time id updated_at",
    "push_notices": "body content_type feed_url id received_at sha256 signature_valid size topic",
    "link_domains": "domain episodes links podcasts urls",
    "link_domain_feeds": "domain feed_id n",
}

#: The frozen tables by schema version: versions not here are derived from the migrations.
FROZEN_TABLES: Mapping[int, Mapping[str, frozenset[str]]] = {
    24: {name: frozenset(columns.split()) for name, columns in _V24.items()},
}
