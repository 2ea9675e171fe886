"""Questions asked on the terminal: one line typed, and Ctrl-C that stops the command."""
from __future__ import annotations

import signal
import threading


def ask_line(prompt: str = "") -> str:
    """A line typed at the terminal, for a question. Ctrl-C stops the command at once
    (KeyboardInterrupt: exit 130, nothing of the question written), even when the question
    is asked inside a run's event loop -- whose own Ctrl-C handler only cancels its task once
    the loop runs again, so the ^C was echoed and the next line typed taken as the answer."""
    main = threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGINT) if main else None
    if main:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return input(prompt)
    except KeyboardInterrupt:
        print(flush=True)  # the line the ^C was echoed on ends: "interrupted" goes below it
        raise
    finally:
        if main and before is not None:
            signal.signal(signal.SIGINT, before)
