from __future__ import annotations

import shlex

from cascade.commands.discuss import ask_wave, run_
from cascade.base.errors import CascadeError
from cascade.check.governance import resolve
from cascade.loop.staging import writing_staged
from cascade.protocol.pending import requested_turns


def turn(path: str, aliases: list[str]) -> int:
    with writing_staged(path, "cascade turn") as (d, written):
        d.current_phase  # a ledger naming an unknown phase is a configuration error
        stepped = not d.protocol.steps.shape.by_name
        if stepped and aliases:
            raise CascadeError(f"protocol {d.protocol.name!r} asks by its steps, not by name: "
                               f"cascade run {shlex.quote(path)}", d.path)
        code = 0 if stepped else ask_wave(d, path, requested_turns(d, aliases) if aliases
                                          else None, resolve(path)[2])
    if stepped:  # its steps say who speaks: the protocol runs (and stages what it wrote)
        return run_(path, False)
    written.say()
    return code
