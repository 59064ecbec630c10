"""Published sites: each account's ``sites`` folder served at ``/sites/...`` of ``maxy serve``
(chosen by host name), and the install's public hostname; ``maxy sites ...``."""
