"""Questions asked on the terminal: one line typed, and Ctrl-C that stops the command."""
from __future__ import annotations

import signal
import threading


def ask_line(prompt: str = "", at_end: str | None = None) -> str:
    """A line typed at the terminal, for a question. Ctrl-C stops the command at once
    (KeyboardInterrupt: exit 130, nothing of the question written), even when the question
    is asked inside a run's event loop -- whose own Ctrl-C handler only cancels its task once
    the loop runs again, so the ^C was echoed and the next line typed taken as the answer.
    The end of the input (Ctrl-D) stops it alike, unless ``at_end`` is the answer it gives."""
    main = threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGINT) if main else None
    if main:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return input(prompt)
    except EOFError:
        if at_end is not None:
            return at_end
        print(flush=True)
        raise KeyboardInterrupt from None
    except KeyboardInterrupt:
        print(flush=True)  # the line the ^C was echoed on ends: "interrupted" goes below it
        raise
    finally:
        if main and before is not None:
            signal.signal(signal.SIGINT, before)
