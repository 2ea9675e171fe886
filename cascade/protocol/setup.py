"""A generated panel's setup, walked on a run (cascade.protocol.engine): the panel proposed,
then a person's confirmation -- ``start``, or a choice the confirmation ``redo``es (``modify``
what to change, ``mode <name>``), which runs the proposal again. Once per discussion: a new
revision of the document keeps the panel."""
from __future__ import annotations

from cascade.ledger.provenance import ledger_id
from cascade.protocol.options import Options, specialize
from cascade.protocol.panel import panel_of
from cascade.protocol.runstate import Draft, given_by


def walk_setup(run: Draft, ledger) -> bool:
    """Walk the setup steps (a panel proposed, then confirmed); False while one is open --
    ``run.step`` then names it. A choice the confirmation ``redo``es runs the proposal again
    (``NEXT: modify <what to change>``, ``NEXT: mode <name>``: a mode the protocol has)."""
    base = run.terms.base or run.steps
    order = run.steps.setup
    position, index, direction = 0, 0, ""
    # the last proposed (accepted, once setup is done)
    run.setup.panel = panel_of(ledger.entries, ledger_id(ledger.header))
    while index < len(order):
        step = order[index]
        if step.decision:
            answer = None
            for a in run.setup.answers:
                if a.used or a.line <= position:
                    continue
                if a.step == step.id or (a.step is None and a.choice in step.choices):
                    if a.choice == "mode" and base.get_mode(a.text.split()[0] if a.text
                                                            else None) is None:
                        a.used = True
                        run.setup.notes.append(
                            f"NEXT: mode {a.text or '(none)'} (line {a.line}) names "
                            f"no mode of {', '.join(m.name for m in base.modes)}: not taken")
                        continue
                    answer = a
                    break
            if answer is None:
                run.step, run.waiting, run.setup.done = step, ["person"], False
                return False
            answer.used = True
            position = answer.line
            run.decisions.chosen[(0, step.id)] = answer
            target = dict(step.redo).get(answer.choice)
            if target is not None:
                if answer.choice == "mode":
                    run.steps = specialize(base, Options.running(
                        run.steps, run.terms.cap, mode=answer.text.split()[0]))
                    run.terms.mode = run.steps.mode
                    run.fixed = {r.id: r.persona for r in run.steps.fixed_roles}
                    order = run.steps.setup
                direction = (f"{answer.choice} {answer.text}".strip() if answer.text
                             else answer.choice)
                run.steering.direction_by = given_by(answer)
                index = next(i for i, s in enumerate(order) if s.id == target)
                continue
            index += 1
            continue
        turn = next((t for t in run.setup.turns if t.step == step.id and t.line > position), None)
        if turn is None:
            run.step, run.setup.done = step, False
            run.waiting = [a for a in run.speakers(step)]
            run.steering.direction = direction
            return False
        position = turn.line
        index += 1
    run.members = run.setup.panel.aliases if run.setup.panel is not None else []
    return True
