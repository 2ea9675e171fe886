"""The decision log as a static site (``cascade site``, docs/site.md), read by the same
functions as ``list``, ``status`` and ``drift``, so the site says what they say."""
