"""Matrix: the room's events out (``sending``) and its sync in (``receiving``)."""
