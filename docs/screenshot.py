"""Writes docs/ui.svg, the screenshot of `cascade ui` in docs/ui.md: a repository with an ADR's
discussion (three personas replied through the fake endpoint the tests use), shown at
100x30 by Textual's own SVG export.

    python docs/screenshot.py
"""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

REPLIES = {
    "AI-Architect": ("Session tokens as JWTs with a 1h expiry keep the services stateless. "
                     "Rotate the refresh token on every use.\n\nQ: Where do revoked tokens "
                     "live between deploys?", "CHANGES"),
    "AI-Security": ("Short expiry is right. Store refresh tokens hashed, bind them to the "
                    "device, and log every rotation.\n\nCONCERN: no rate limit on /login.",
                    "CHANGES"),
    "AI-Pragmatist": ("Ship JWT with the 1h expiry now; device binding can follow.\n\n"
                      "DECISION: JWT, 1h expiry, rotating refresh tokens.", "READY"),
}


def main() -> None:
    from fakellm import FakeLLM

    with FakeLLM() as fake, tempfile.TemporaryDirectory() as tmp:
        for name, (comment, vote) in REPLIES.items():
            fake.script(f"YOUR ROLE: {name}", json.dumps({"comment": comment, "vote": vote}))
        env = {**os.environ, "CASCADE_MODEL": "openai/fake", "CASCADE_API_BASE": fake.url}
        run = lambda *a: subprocess.run(a, cwd=tmp, env=env, check=True,  # noqa: E731
                                        capture_output=True)
        run("git", "init", "-q")
        run("git", "config", "user.name", "Rob")
        run(sys.executable, "-m", "cascade", "new", "Add user authentication", "--template",
            "feature")
        ledger = Path(tmp, "discussions/add-user-authentication.discussion.md")
        run(sys.executable, "-m", "cascade", "turn", str(ledger))
        run(sys.executable, "-m", "cascade", "comment", str(ledger),
            "Agreed on JWT. @security: is a rate limit on /login enough for now?")
        os.chdir(tmp)
        from cascade.ui.app import CascadeApp

        async def shoot() -> None:
            app = CascadeApp(ledger)
            async with app.run_test(size=(100, 30)) as pilot:
                await pilot.pause(0.5)
                app.save_screenshot(str(HERE / "ui.svg"))

        asyncio.run(shoot())
    print(f"wrote {HERE / 'ui.svg'}")


if __name__ == "__main__":
    main()
