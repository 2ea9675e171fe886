"""The terminal UI (``cascade ui``): Textual, imported only by that command."""
