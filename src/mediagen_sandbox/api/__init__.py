"""HTTP routes of the sandbox: `/v1` (the spec), `/files` (signed URLs) and `/admin`."""
