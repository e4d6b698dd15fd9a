"""The wire contract's names under their earlier path; they live in ``mediagen.wire._names``, below
the client, so the catalog reads them without loading the client."""

from mediagen.wire._names import *  # noqa: F403
