"""The service's wire contract as the toolkit reads it: the bottom floor.

``_names`` holds every name the spec leaves open (docs/wire-contract.md); ``_fields`` reads a
service object the one way, a client model or its JSON dict alike. Every other floor reads the
service through these, so they import nothing else of ``mediagen``.
"""
