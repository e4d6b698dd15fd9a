"""The sandbox's data-access layer: every SQL statement of the sandbox is in this package.

``store`` opens the database (one connection per thread, write and read transactions) and
``schema`` brings a data directory up to this release's layout; the other modules hold one
table family each: ``accounts`` (organizations, members, keys), ``ledger`` (credits),
``generations``, ``assets`` and ``idempotency``. Everything above this package (the API
routes, submit, the job runner, seeding) calls these functions and never writes SQL, so a
change of layout is a change here plus a migration in ``schema``.
"""
