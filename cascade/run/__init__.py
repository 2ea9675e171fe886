"""Running a protocol on a ledger: its waves of turns, each persona's prompt and reply block,
the auto-invite, and what a run came to. Above the model seam (cascade.turns), below the loop
and the commands that start a run."""
