"""Operating an account's data: delete an account (``deletion``), copy one out and back in
(``export``, ``importing``, the format in ``jsonl``), and back up or restore the managed
server's whole database (``backup``). The commands are in ``maxy.dataops.cli``."""
