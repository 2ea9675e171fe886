"""Persona turns: who speaks, what they are told, the one seam to the model, and the append.

Only the providers that need it (cascade.turns.providers) import litellm, lazily.
"""
