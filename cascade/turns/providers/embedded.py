"""The ``cascade-local`` provider: the embedded offline model (cascade.turns.local),
``cascade-local/smollm2``, asked through litellm as a custom provider registered with it."""
from __future__ import annotations

from cascade.turns.call import Ask, Route, Target
from cascade.turns.providers import LOCAL, Provider, register
from cascade.turns.providers.litellm_route import route as litellm_route


async def route(target: Target, ask: Ask) -> Route | str:
    """The embedded model needs no key: always asked."""
    return await litellm_route(target, ask, local=True)


register(Provider(LOCAL, route, uses_litellm=True))
