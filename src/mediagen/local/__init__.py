"""What this machine keeps between runs: the request journal (and its compaction), the spend
limit's ledger and the output cache's files, each written so that a crash never leaves half a
file (``_files``).

Below the client and free of it: nothing here sends a request or knows a model, so a tool that
only reads the journal (the history's join) loads no HTTP client.
"""
