"""The site's page of the panel, measured (stats.html): ``cascade stats``' figures, of the
ledgers the site read, as charts (cascade.site.charts) and as tables that hold every number
the charts draw, and more."""
from __future__ import annotations

from cascade.commands.stats import Counts, Stats, findings_text, landing, percent
from cascade.site.charts import Chart
from cascade.site.pages import layout, table
from cascade.site.render import esc

CHARTS = "charts"  # the folder of the charts' SVG files, below the site


def _spend(c: Counts) -> tuple[str, str]:
    tokens = f"{c.tokens / c.discussions:,.0f}" if c.discussions and c.tokens else "-"
    cost = f"${c.cost / c.discussions:.4f}" if c.discussions and c.priced else "-"
    return tokens, cost


def _figure(chart: Chart) -> str:
    return (f"<figure><img src=\"{CHARTS}/{esc(chart.name)}.svg\" "
            f"alt=\"{esc(chart.title)}: {esc(chart.alt)}\" width=\"720\"></figure>")


def panel_page(s: Stats, charts: list[Chart], commit: str) -> str:
    """The page: what it counts, the charts, then a table per persona and per rule."""
    if not s.discussions:
        return layout("The panel", "<h1>The panel, measured</h1>\n<p>No discussions yet: "
                      "nothing to measure.</p>", commit)
    personas = [[esc(p.name), str(p.discussions), str(p.votes), str(p.blocks),
                 percent(p.blocks, p.votes), esc(findings_text(p)),
                 f"{p.agreed} of {p.concluded}", str(p.overruled), *_spend(p)]
                for p in s.personas]
    rules = []
    for r in s.rules:
        landed = landing(r) or "-"
        ended = ", ".join(f"{n} {o}" for o, n in sorted(r.outcomes.items()))
        rules.append([esc(r.name), str(r.discussions), esc(ended), str(r.votes),
                      percent(r.blocks, r.votes), esc(findings_text(r)), str(r.decided),
                      esc(landed), *_spend(r)])
    body = [f"<h1>The panel, measured</h1>\n<p>Over {s.discussions} discussion(s): each "
            "persona's votes, how often it blocks, what it found and how that ended, and "
            "whether its last vote went the way the discussion concluded; then each rule. "
            "The same figures as <code>cascade stats</code>.</p>",
            *[_figure(c) for c in charts],
            "<h2>Per persona</h2>",
            table(("Persona", "Discussions", "Votes", "Blocks", "Block rate",
                   "Findings (how they ended)", "Last vote as concluded",
                   "Overruled by a person", "Tokens per discussion", "Cost per discussion"),
                  personas),
            "<h2>Per rule</h2>",
            table(("Rule", "Discussions", "Concluded", "Votes", "Block rate",
                   "Findings (how they ended)", "Decided by a person", "To a conclusion",
                   "Tokens per discussion", "Cost per discussion"), rules)]
    if s.unread:
        body.append("<h2>Not counted</h2><ul>" + "".join(
            f"<li><code>{esc(path)}</code>: {esc(why)}</li>" for path, why in s.unread.items())
            + "</ul>")
    return layout("The panel, measured", "\n".join(body), commit)
