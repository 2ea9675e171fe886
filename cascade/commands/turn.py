from __future__ import annotations

import shlex

from cascade.commands.discuss import run_
from cascade.commands.wave import ask_wave
from cascade.errors import CascadeError
from cascade.loop.governance import writing
from cascade.protocol.pending import requested_turns


def turn(path: str, aliases: list[str]) -> int:
    with writing(path, "cascade turn") as d:
        return _turn(d, path, aliases)


def _turn(d, path: str, aliases: list[str]) -> int:
    d.current_phase  # a ledger naming an unknown phase is a configuration error
    if d.protocol.stepped is not None:  # its steps say who speaks: the protocol runs
        if aliases:
            raise CascadeError(f"protocol {d.protocol.name!r} asks by its steps, not by name: "
                               f"cascade run {shlex.quote(path)}", d.path)
        return run_(path, False)
    return ask_wave(d, path, requested_turns(d, aliases) if aliases else None)
