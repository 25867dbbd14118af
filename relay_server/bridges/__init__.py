"""The operator's platforms, each in one folder with both its sides: ``sending`` (the core's
``Bridge`` port: notifications and approvals out, with their answers shown) and ``receiving``
(what the platform sends back: replies and decisions, as aiohttp routes or a poller). ``local``
is the built-in default; ``wording`` says things alike on every platform, ``decisions`` reads
an operator's decision alike from every platform."""
