"""The primitives every layer stands on: errors, text, files written atomically, paths kept
inside the repository, git, the bundled data, entry points of installed packages."""
