"""``cascade site --serve``: the site served on 127.0.0.1 and built again when a watched file
changes or a commit is made (docs/site.md). A poll of the files' times and sizes, once a
second: no file-watching library; the server is Python's own, for this machine only."""
from __future__ import annotations

import os
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cascade.base.errors import CascadeError
from cascade.base.gitio import git_or_none

WATCHED = (".md", ".yml", ".yaml")
SKIPPED = frozenset({"node_modules", "__pycache__", "venv"})


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's)
        pass


def fingerprint(root: Path, out: Path) -> tuple:
    """What a rebuild depends on: the watched files' paths, times and sizes below ``root``
    (not in hidden folders, not in ``out``), and git's HEAD and index."""
    found = []
    skip = out.resolve()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED
                         and (Path(folder) / d).resolve() != skip)
        for name in files:
            if name.endswith(WATCHED):
                try:
                    st = os.stat(os.path.join(folder, name))
                except OSError:
                    continue
                found.append((folder, name, st.st_mtime_ns, st.st_size))
    git_dir = git_or_none(root, "rev-parse", "--absolute-git-dir")
    for name in ("HEAD", "index"):
        path = Path(git_dir.decode().strip()) / name if git_dir else None
        if path is not None and path.is_file():
            st = path.stat()
            found.append((str(path), "", st.st_mtime_ns, st.st_size))
    head = git_or_none(root, "rev-parse", "--verify", "--quiet", "HEAD")
    return tuple(sorted(found)) + ((head or b"").strip(),)


class Preview:
    """The site in ``out``, served, and built again by ``poll`` when what it shows changed.
    ``build``: writes the site (cascade.site.build)."""

    def __init__(self, root: Path, out: Path, build) -> None:
        self.root, self.out, self.build = root, out, build
        self.seen = fingerprint(root, out)
        self.server: ThreadingHTTPServer | None = None

    def start(self, port: int) -> int:
        """Serve ``out`` on 127.0.0.1:``port`` (0: any free one); the port."""
        try:
            self.server = ThreadingHTTPServer(("127.0.0.1", port),
                                              partial(_Quiet, directory=str(self.out)))
        except OverflowError:
            raise CascadeError(f"--port {port}: not a port (0 to 65535)") from None
        except OSError as exc:
            raise CascadeError(f"--port {port}: cannot serve there ({exc.strerror})") from None
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self.server.server_port

    def poll(self) -> bool:
        """Build again when something changed; whether it did. A build that fails says why
        on one line and the last good site stays served."""
        now = fingerprint(self.root, self.out)
        if now == self.seen:
            return False
        self.seen = now
        start = time.perf_counter()
        try:
            self.build()
        except CascadeError as exc:
            print(f"cascade site: {exc} (the last site stays served)", flush=True)
            return False
        print(f"cascade site: built again in {time.perf_counter() - start:.1f} s", flush=True)
        return True

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
