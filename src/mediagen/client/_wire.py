"""The wire contract's names under their earlier path; they live in ``mediagen._wire``, below
the client, so the catalog reads them without loading the client."""

from mediagen._wire import *  # noqa: F403
