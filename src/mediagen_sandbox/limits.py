"""The bounds every request is held to, in one place: the catalog states them, the request
schemas enforce them, and the outer ASGI layer caps what is read at all.

Why each exists: an unbounded field is a way for one caller to make the server (or a render
worker) do unbounded work, and for a response to echo megabytes back. The per-field lengths are
the catalog's and the spec's; the rest are generous ceilings no valid request comes near.
"""

from __future__ import annotations

PROMPT_CHARS = 4000  # video and image prompts, lyrics
NEGATIVE_PROMPT_CHARS = 2000  # and the music prompt
SPEECH_TEXT_CHARS = 5000  # one speaker's text, one segment's text, previous/next context
NAME_CHARS = 256  # ids, names, tags and other short strings the catalog gives no bound of
VARIANT_CHARS = 64  # the spec's variant and enhancement_model
INTERACTION_ID_CHARS = 256  # the spec's previous_interaction_id

LIST_ITEMS = 64  # any array in a body; the catalog's per-mode max_counts are lower still
SPEECH_TOTAL_CHARS = SPEECH_TEXT_CHARS * LIST_ITEMS  # what an estimate's text_length may price
COUNT = 64  # an estimate's counts (outputs, reference images)
DURATION_SECONDS = 3600.0  # an estimate's duration; no model renders more than minutes
TOKENS = 10_000_000  # an estimate's input/output tokens
CREDITS = 1e12  # an admin-set balance, grant or cap (the ledger holds integer cents)

BODY_BYTES = 1 << 20  # a JSON request body; the largest valid body is a fraction of this
HEAD_BYTES = 64 << 10  # a request line and its headers (what browsers and proxies send fits)
ERROR_DETAILS = 50  # entries of a 422's details; the message counts the rest
