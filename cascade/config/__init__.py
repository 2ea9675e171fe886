"""Data files and their loaders: personas, protocols, templates (and, later, rules)."""
