"""The one client-side rule engine: the catalog's rules and a request's local price.

``catalog`` validates a request against its model's catalog entry and turns it into the
estimate's query; ``_local_price`` prices it on this machine; ``_durations`` reads the billable
seconds both need. Pure functions over the catalog's JSON: it stands on ``wire`` only, so the
client's models, the widgets' forms and the magics judge a request by the same rules.
"""
