"""The protocol engine: roles, steps, visibility and rounds as data (protocols/*.yml, read by
cascade.protocol.loader), a derivation of where a discussion stands from its ledger alone
(cascade.protocol.derivation; cascade.protocol.discussion is the API over one ledger), the plan of
the next wave of turns, the verdict, and a registry of named behaviours for what data cannot
say. No model, no git here: the hook, ``check``, ``status`` and ``plan`` all read protocols
through it; running one is cascade.run's.
"""
