"""The decision log as a static site (``cascade site``): a timeline of the governed decisions,
a page per decision with its review, a page per topic discussion, a search index -- read from
what ``list``, ``status`` and ``drift`` read, by the same functions, so the site says what they
say. A surface, as the terminal UI is: above the commands, whose functions it reuses."""
