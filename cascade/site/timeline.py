"""The timeline (index.html) and the search index. The table reads without JavaScript; a small
inline script filters its rows and searches the index (search.js: a browser loads a script
from file://, not a JSON file). The script writes results with textContent only."""
from __future__ import annotations

import json
import re
from typing import Any

from cascade.site.collect import Entry
from cascade.site.pages import badge, esc, gate_text, layout, link

SEARCH_CHARS = 20_000  # of each document and record, in the index
_MARKUP = re.compile(r"<!--.*?-->|[#*_`>|\[\]()~-]+", re.S)

SCRIPT = """<script>
(function () {
  var rows = Array.prototype.slice.call(document.querySelectorAll('#timeline tbody tr'));
  var status = document.getElementById('f-status'), folder = document.getElementById('f-folder');
  var q = document.getElementById('q'), out = document.getElementById('results');
  function filter() {
    var s = status.value, f = folder.value, shown = 0;
    rows.forEach(function (r) {
      var ok = (!s || r.dataset.status === s || r.dataset.review === s) &&
               (!f || r.dataset.folder === f);
      r.hidden = !ok; if (ok) shown++;
    });
    document.getElementById('shown').textContent = shown + ' of ' + rows.length;
  }
  status.addEventListener('change', filter);
  folder.addEventListener('change', filter);
  document.getElementById('filters').hidden = false;
  filter();  // the count shows from the start, not only after a first choice
  function search() {
    var words = q.value.toLowerCase().split(/\\s+/).filter(Boolean);
    out.textContent = '';
    if (!words.length || !window.CASCADE_SEARCH) return;
    var hits = window.CASCADE_SEARCH.filter(function (e) {
      var hay = (e.number + ' ' + e.title + ' ' + e.status + ' ' + e.text).toLowerCase();
      return words.every(function (w) { return hay.indexOf(w) >= 0; });
    });
    hits.slice(0, 50).forEach(function (e) {
      var li = document.createElement('li'), a = document.createElement('a');
      a.href = encodeURIComponent(e.slug) + '.html';
      a.textContent = (e.number ? e.number + ' ' : '') + e.title;
      li.appendChild(a);
      li.appendChild(document.createTextNode(' (' + (e.status || e.review) + ')'));
      out.appendChild(li);
    });
    if (!hits.length) out.textContent = 'No match.';
  }
  q.addEventListener('input', function () {
    if (window.CASCADE_SEARCH) return search();
    if (document.getElementById('index-js')) return;
    var s = document.createElement('script');
    s.id = 'index-js'; s.src = 'search.js'; s.addEventListener('load', search);
    document.head.appendChild(s);
  });
})();
</script>"""


def _key(value: str) -> str:
    """A status as the filter matches it: its first word, lower case."""
    return (value.split() or [""])[0].lower().strip(".,;:")


def timeline(entries: list[Entry], commit: str) -> str:
    """The decisions oldest first (the undated last, by number), then the topics."""
    decisions = [e for e in entries if e.source]
    topics = [e for e in entries if not e.source]
    rows = []
    for e in sorted(decisions, key=lambda e: (not e.date, e.date, e.number, e.source)):
        superseded = (link(e.superseded_slug, e.superseded) if e.superseded_slug
                      else esc(e.superseded))
        rows.append(f"<tr data-status=\"{esc(_key(e.status))}\" data-review=\"{esc(e.review)}\""
                    f" data-folder=\"{esc(e.folder)}\"><td>{esc(e.date)}</td>"
                    f"<td>{esc(e.number)}</td><td>{link(e.slug, e.title)}</td>"
                    f"<td>{badge('status', e.status or '-')}</td>"
                    f"<td>{badge('review', e.review)}</td>"
                    f"<td>{esc(gate_text(e.discussion))}</td><td>{superseded}</td></tr>")
    statuses = sorted({_key(e.status) for e in decisions if e.status}
                      | {e.review for e in decisions})
    folders = sorted({e.folder for e in decisions})
    body = [f"<h1>Decision log</h1><p>{len(decisions)} governed decision(s), {len(topics)} "
            "topic discussion(s).</p>",
            "<nav id=\"filters\" hidden>"
            "<label>Status <select id=\"f-status\"><option value=\"\">any</option>"
            + "".join(f"<option>{esc(s)}</option>" for s in statuses) + "</select></label> "
            "<label>Folder <select id=\"f-folder\"><option value=\"\">any</option>"
            + "".join(f"<option>{esc(f)}</option>" for f in folders) + "</select></label> "
            "<label>Search <input id=\"q\" type=\"search\" autocomplete=\"off\"></label> "
            "<span id=\"shown\"></span><ul id=\"results\"></ul></nav>",
            "<table id=\"timeline\"><thead><tr><th>Date</th><th>No.</th><th>Title</th>"
            "<th>Status</th><th>Review</th><th>Gate</th><th>Superseded by</th></tr></thead>"
            "<tbody>\n" + "\n".join(rows) + "\n</tbody></table>"]
    if topics:
        body.append("<h2>Topic discussions</h2><ul>" + "".join(
            f"<li>{link(e.slug, e.title)} {badge('review', e.review)} "
            f"<small>{esc(e.discussion.ledger if e.discussion else '')}</small></li>"
            for e in topics) + "</ul>")
    return layout("Decision log", "\n".join(body), commit, SCRIPT)


def search_index(entries: list[Entry]) -> list[dict[str, Any]]:
    """Each page's words: its number, title, status, the document and record as plain text."""
    out = []
    for e in entries:
        text = e.text + "\n" + (e.discussion.record if e.discussion else "")
        if e.discussion and e.discussion.data:
            text += "\n" + "\n".join(_review_words(e.discussion.data))
        words = " ".join(_MARKUP.sub(" ", text).split())[:SEARCH_CHARS]
        out.append({"slug": e.slug, "number": e.number, "title": e.title, "status": e.status,
                    "review": e.review, "text": words})
    return out


def _review_words(data: dict[str, Any]) -> list[str]:
    """A review's text: its findings, questions and answers, and people's decisions."""
    out = [f.get(k) or "" for f in data["findings"] for k in ("what", "why", "suggestion")]
    out += [a["text"] for f in data["findings"] for a in f.get("answers") or []]
    out += [q["text"] for q in data["questions"]] + [a["text"] for a in data["answers"]]
    out += [x["reason"] for x in data["decision_history"]]
    return out


def as_script(index: list[dict[str, Any]]) -> str:
    """The index as a script that sets ``window.CASCADE_SEARCH``; ``<`` ``>`` ``&`` escaped so
    no text in it can close a script element."""
    data = json.dumps(index, ensure_ascii=False, separators=(",", ":"))
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    data = data.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f"window.CASCADE_SEARCH = {data};\n"
