"""The model seam: what a persona is told (the prompt, fenced and redacted), the one call to a
model with its retries and fallbacks (cascade.turns.chain), the providers that make the call
(cascade.turns.providers: one module each), the reply read back, the cache and the budget.

Only the providers that need it import litellm, lazily.
"""
