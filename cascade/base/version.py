"""The version of this package (one place: the package, its user agent and --version say it)."""

__version__ = "0.1.0"
