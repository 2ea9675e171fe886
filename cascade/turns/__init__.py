"""Persona turns: who speaks, what they are told, the one seam to the model, and the append.

Only ``cascade.turns.model`` (and the embedded provider it loads) imports litellm, lazily.
"""
