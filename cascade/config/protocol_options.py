"""The options a protocol file may offer its discussions: each a section of named choices in
the file -- ``modes:`` offers ``mode``, ``strategies:`` ``strategy``, ``flows:`` ``flow``,
``tiers:`` ``tier``. Which options a protocol offers, and the names each takes, are its
file's; a rule picks one by the option's key (``mode: deep``), the command line by
``--mode deep``, and the ledger's header records it (``Mode: deep``). How each reshapes a
protocol's steps is the engine's (cascade.protocol.options). Declared here, once, below the
rule files, the protocol files and the command line that all read it."""

SECTIONS: dict[str, str] = {"mode": "modes", "strategy": "strategies", "flow": "flows",
                            "tier": "tiers"}
