"""The charts of the site's page of the panel (stats.html), drawn by pygal as SVG images: they
read without JavaScript, and an image's scripts never run. pygal writes a ``<script>`` of its
own configuration into every chart (``js=[]`` stops its tooltips loading one from the network);
the chart is written without it, so the file holds no script even opened on its own. Every
label is escaped as XML text by pygal."""
from __future__ import annotations

import re
from typing import Any

from cascade.commands.stats import Stats
from cascade.config.rules import SEVERITIES
from cascade.protocol.findings import STATUSES

_SCRIPT = re.compile(rb"<script\b[^>]*>.*?</script>", re.S)
_COLOURS = {"critical": "#dc2626", "major": "#f59e0b", "minor": "#60a5fa", "info": "#9ca3af",
            "resolved": "#16a34a", "answered": "#60a5fa", "waived": "#9ca3af",
            "overridden": "#6b7280", "open": "#f59e0b"}
WIDTH = 720


class Chart:
    """A chart of the page; ``alt``: what it says to a reader who does not see it."""

    def __init__(self, name: str, title: str, alt: str, svg: bytes) -> None:
        self.name, self.title, self.alt, self.svg = name, title, alt, svg


def _style(colours: tuple[str, ...] = ("#2563eb",)) -> Any:
    from pygal.style import Style  # the site extra's; only a site build imports it
    return Style(background="white", plot_background="white", foreground="#1d1d1f",
                 foreground_strong="#1d1d1f", foreground_subtle="#6b7280",
                 colors=colours, font_family="system-ui, sans-serif",
                 label_font_size=13, major_label_font_size=13, value_font_size=12,
                 legend_font_size=13, title_font_size=16)


def _bars(title: str, labels: list[str], series: list[tuple[str, list]],
          stacked: bool = False, percent: bool = False) -> bytes:
    import pygal  # the site extra's; only a site build imports it
    kind = pygal.HorizontalStackedBar if stacked else pygal.HorizontalBar
    colours = tuple(_COLOURS.get(name, "#2563eb") for name, _ in series)
    legend = 28 * -(-len(series) // 3) if len(series) > 1 else 0  # rows of three
    chart = kind(js=[], width=WIDTH, height=110 + 40 * len(labels) + legend, title=title,
                 style=_style(colours), show_legend=len(series) > 1, legend_at_bottom=True,
                 print_values=not stacked, print_zeroes=False, truncate_label=-1,
                 range=(0, 100) if percent else None, include_x_axis=True,
                 value_formatter=(lambda v: f"{v:.0f}%") if percent else
                 (lambda v: f"{v:,.4g}"))
    chart.x_labels = labels[::-1]  # pygal draws the first label at the bottom
    if not percent:  # counts: whole, round steps on the value axis
        top = max((sum(v[i] or 0 for _, v in series) for i in range(len(labels))), default=0)
        step = _step(top)
        chart.y_labels = list(range(0, int(top) + step + 1, step))
    for name, values in series:
        chart.add(name, values[::-1])
    return _SCRIPT.sub(b"", chart.render())


def _step(top: float) -> int:
    """A round step (1, 2 or 5 times a power of ten) for an axis up to ``top``, about eight
    steps long."""
    step = 1
    while top / step > 8:
        for factor in (2, 2.5, 2):  # 1 -> 2 -> 5 -> 10
            step = int(step * factor)
            if top / step <= 8:
                break
    return step


def charts(s: Stats) -> list[Chart]:
    """The page's charts: five per persona, one per rule."""
    names = [p.name for p in s.personas]
    out: list[Chart] = []
    if s.personas:
        rates = [round(100 * p.blocks / p.votes, 1) if p.votes else None for p in s.personas]
        out.append(Chart("block-rate", "Block rate: CHANGES or REJECT, of its votes",
                         _alt(names, rates, "%"), _bars("Block rate (% of votes)", names,
                                                        [("block rate", rates)],
                                                        percent=True)))
        raised = [(s_, [p.findings.get(s_, 0) for p in s.personas]) for s_ in SEVERITIES]
        out.append(Chart("findings", "Findings raised, by severity", _alt_series(names, raised),
                         _bars("Findings by severity", names, raised, stacked=True)))
        fates = [(state, [p.fates.get(state, 0) for p in s.personas]) for state in STATUSES]
        out.append(Chart("findings-ended", "How its findings ended", _alt_series(names, fates),
                         _bars("How its findings ended", names, fates, stacked=True)))
        agreed = [round(100 * p.agreed / p.concluded, 1) if p.concluded else None
                  for p in s.personas]
        out.append(Chart("agreement", "Last vote as the discussion concluded",
                         _alt(names, agreed, "%"),
                         _bars("Last vote as concluded (% of concluded discussions)", names,
                               [("as concluded", agreed)], percent=True)))
        tokens = [round(p.tokens / p.discussions) if p.discussions and p.tokens else None
                  for p in s.personas]
        out.append(Chart("tokens", "Tokens per discussion", _alt(names, tokens, " tokens"),
                         _bars("Tokens per discussion", names, [("tokens", tokens)])))
    measured = [r for r in s.rules if r.days]
    if measured:
        rules = [r.name for r in measured]
        days = [r.as_dict()["to_conclusion"]["days"]["median"] for r in measured]
        out.append(Chart("days", "Days to a conclusion, per rule (median)",
                         _alt(rules, days, " days"),
                         _bars("Days to a conclusion (median)", rules, [("days", days)])))
    return out


def _alt(names: list[str], values: list, unit: str) -> str:
    return "; ".join(f"{n}: {'-' if v is None else f'{v:g}{unit}'}" for n, v in zip(names, values))


def _alt_series(names: list[str], series: list[tuple[str, list]]) -> str:
    said = []
    for i, name in enumerate(names):
        parts = [f"{values[i]} {label}" for label, values in series if values[i]]
        said.append(f"{name}: {', '.join(parts) or 'none'}")
    return "; ".join(said)
