"""Discussion protocols as data: roles, steps and rounds. A protocol is a YAML file (bundled
in protocols/, or a repository's .cascade/protocols/), read by cascade.protocol.specfile. One
that names a registered ``planner`` (``respond``: ``review``, ``phased``, seed 002) has steps
that are phases, entered in order (advancing one is an appended ledger event); any other
protocol's one phase is the whole discussion.
"""
from __future__ import annotations

import functools
from pathlib import Path

from msgspec import Struct

from cascade.config import protocol_defaults
from cascade.config.yamlio import check_keys, did_you_mean, load_yaml
from cascade.base.errors import CascadeError
from cascade.protocol.phasedfile import PHASED_KEYS, SEED_KEYS, seed_phases
from cascade.protocol.spec import Step, Steps
from cascade.protocol.specfile import parse_steps
from cascade.base.resources import search_path

DEFAULT_PROTOCOL = protocol_defaults.NEW  # for `cascade new`
HEADERLESS_PROTOCOL = protocol_defaults.HEADERLESS  # a hand-written ledger with no header

_PROTOCOL_KEYS = {"name", "title", "description", "roles", "steps", "rounds", "participants",
                  "outcome", "planner", "artifacts", "modes", "setup", "after", "strategies",
                  "flows", "tiers", "pause", "resume"}


class Protocol(Struct, frozen=True):
    name: str
    title: str
    description: str
    path: Path
    steps: Steps  # its roles, steps and rounds (cascade.protocol.spec)

    @property
    def planner(self) -> str | None:
        """The registered planner whose steps are phases (None: the step engine plans)."""
        return self.steps.planner

    @property
    def max_rounds(self) -> int:
        return self.steps.rounds.max

    def phase_ids(self) -> list[str]:
        """Its phases, in order: its steps when they are phases, else its one: its name."""
        return [s.id for s in self.steps.steps] if self.steps.phased else [self.name]

    @property
    def first_phase(self) -> str:
        return self.phase_ids()[0]

    def phase(self, phase_id: str) -> Step | None:
        """The step that is phase ``phase_id`` (None: no such phase, or not phased)."""
        return self.steps.step(phase_id) if self.steps.phased else None

    def has_phase(self, phase_id: str) -> bool:
        return phase_id in self.phase_ids()

    def phase_title(self, phase_id: str) -> str:
        step = self.phase(phase_id)
        return step.title if step is not None else self.title if phase_id == self.name else \
            phase_id

    def votes_count_in(self, phase_id: str) -> bool:
        """Whether votes cast in phase ``phase_id`` count (an unknown phase: they do)."""
        step = self.phase(phase_id)
        return step is None or step.confirm

    def next_phase(self, phase_id: str) -> str | None:
        return self.steps.next_phase(phase_id) if self.steps.phased else None


def load_protocol_file(path: Path) -> Protocol:
    raw = load_yaml(path)
    if isinstance(raw, dict) and "phases" in raw:  # the phased discussion design's form
        if "steps" in raw:
            raise CascadeError("a protocol has 'phases:' (each a phase) or 'steps:', not both",
                               path, raw.line_of("phases"))
        data = check_keys(raw, path, SEED_KEYS, {"phases"}, "protocol")
        name = data.get("name", path.stem)  # the design's phase file names none
        steps = seed_phases(data, path)
    else:
        phased = isinstance(raw, dict) and raw.get("planner") is not None
        data = check_keys(raw, path, PHASED_KEYS if phased else _PROTOCOL_KEYS,
                          {"name", "steps"}, "protocol")
        name = data["name"]
        steps = None
    if not isinstance(name, str):
        raise CascadeError("protocol 'name' must be a string", path, data.line_of("name"))
    if name != path.stem:  # a ledger records the name, and a name is looked up as a file name
        raise CascadeError(f"protocol name {name!r} does not match the file name {path.name!r}",
                           path, data.line_of("name"))
    return Protocol(name, str(data.get("title") or name),
                    str(data.get("description") or "").strip(), path,
                    steps or parse_steps(data, path))


def load_protocol(name: str, root: Path | None, where: Path | None = None) -> Protocol:
    """Find a protocol by name: the repository's own first, then the bundled ones. An unknown
    name is an error naming ``where`` (the ledger or rule file that asked for it)."""
    folders = tuple(search_path("protocols", root))
    protocol = _load(name, folders)
    if protocol is None:
        known = sorted({p.stem for f in folders for p in f.glob("*.y*ml")})
        raise CascadeError(f"unknown protocol {name!r} (known: {', '.join(known)})"
                           + did_you_mean(name, known), where)
    return protocol


def role_personas(root: Path | None) -> frozenset[str]:
    """The personas that fill a fixed role of some protocol, bundled or the repository's (a
    moderator, a synthesizer): a protocol's role, never a member picked by topic."""
    folders = tuple(search_path("protocols", root))
    names = sorted({p.stem for f in folders for p in f.glob("*.y*ml")
                    if p.suffix in (".yml", ".yaml")})
    return frozenset(r.persona for name in names
                     for r in load_protocol(name, root).steps.fixed_roles)


@functools.lru_cache(maxsize=64)
def _load(name: str, folders: tuple[Path, ...]) -> Protocol | None:
    for folder in folders:
        for ext in (".yml", ".yaml"):
            path = folder / f"{name}{ext}"
            if path.is_file() or path.is_symlink():  # a link is refused as it is read
                return load_protocol_file(path)
    return None
