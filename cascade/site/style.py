"""The site's stylesheet (style.css): plain CSS, no web fonts, no network."""
from __future__ import annotations

CSS = """\
body { font: 15px/1.5 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #fff; }
header, footer { padding: .6em 1.5em; background: #f3f4f6; }
header a { font-weight: 600; text-decoration: none; color: inherit; margin-right: 1.5em; }
footer { font-size: .85em; color: #555; margin-top: 3em; }
main { padding: 0 1.5em; max-width: 75em; overflow-wrap: break-word; }
table { border-collapse: collapse; margin: .8em 0; width: 100%; }
th, td { border-bottom: 1px solid #e5e7eb; padding: .3em .5em; text-align: left;
         vertical-align: top; overflow-wrap: anywhere; }
th { background: #f9fafb; overflow-wrap: normal; }
section > table td:first-child, #timeline td:nth-child(-n+2) { white-space: nowrap; }
code, pre { font-family: ui-monospace, monospace; font-size: .9em; }
pre { background: #f6f8fa; padding: .6em; overflow-x: auto; white-space: pre-wrap; }
.doc { border-left: 3px solid #e5e7eb; padding-left: 1em; }
.doc h1 { font-size: 1.5em; } .doc h2 { font-size: 1.25em; } .doc h3 { font-size: 1.1em; }
dl.meta { display: grid; grid-template-columns: max-content auto; gap: .2em 1em; }
dl.meta dt { font-weight: 600; }
dl.meta dd { margin: 0; }
#filters { margin: 1em 0; }
#filters label { margin-right: 1em; }
.status, .review, .vote, .severity, .state, .gate { padding: 0 .35em; border-radius: 3px;
  background: #eef; white-space: nowrap; }
.status-accepted, .review-accepted, .vote-ready, .state-resolved, .gate-ok { background: #dcfce7; }
.status-superseded, .status-deprecated, .state-waived, .state-overridden { background: #eee; }
.status-rejected, .review-rejected, .vote-reject, .severity-critical, .gate-blocked
  { background: #fee2e2; }
.review-changes, .vote-changes, .severity-major, .state-open { background: #fef3c7; }
p.gate { white-space: normal; background: none; padding: 0; }
#timeline td:nth-child(3) { min-width: 12em; }
#timeline .status { white-space: normal; }
.drifted { color: #9a3412; font-weight: 600; }
.error { color: #b91c1c; }
figure { margin: 1.5em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #e5e7eb; }
figcaption { font-size: .9em; color: #555; }
"""
