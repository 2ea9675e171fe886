"""One module per CLI command; each exposes a function returning the exit code."""
