"""What the toolkit shows, shared by the client's reprs, the history, the widgets and the magics.

``_html`` renders the client's models as HTML (pure functions; Pillow only for a thumbnail);
``_progress`` is the progress display (a notebook bar, text elsewhere) and how long a model
usually takes. Both read objects by their fields (``wire``), not by their classes, so they stand
below the client: its models' ``_repr_html_`` call them without a hook.
"""
