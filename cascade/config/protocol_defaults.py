"""The protocol a discussion takes when none is named, declared here and nowhere else, for
each way a discussion starts: a rule's ledgers -- and a hand-written ledger without a header
-- are reviewed (one voting round per revision); ``cascade new`` opens a discussion in the
design's phases; ``cascade discuss`` on a topic runs Propose, Challenge, Synthesize."""

RULE = "review"
HEADERLESS = RULE
NEW = "phased"
TOPIC = "pcs"
