"""The demo agent's variants: one good agent and three ways to be worse.

Each variant changes one thing, so a screening and a compare of it against
`baseline` have exactly one true thing to find, on the axis named here:

- `slower`: every model call takes 150 ms more (a real sleep inside its
  `chat` span, so the screener's wall-clock latency sees it): latency.
- `broken`: the model looks up the EU refund policy (14 days) instead of
  the store's (30 days), so the two refund tasks of examples/concierge.yaml
  are wrong every time; the tool call's arguments on the span show why:
  correctness.
- `flaky`: the model misreads Oslo as Osaka on about half the runs (a coin
  seeded by task and round), so the weather task passes in some rounds and
  fails in others: robustness.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Final

from collector.demo_agent.chat import Quirks


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    what: str  # one line for --help and the start-up banner
    extra_model_delay_s: float = 0.0
    refund_region: str = "US"
    misread_share: float = 0.0

    def quirks(self, rng: random.Random) -> Quirks:
        """This run's quirks; draws from `rng` first, so the coin is the same per task and round
        whatever the variant does later."""
        coin = rng.random()
        return Quirks(refund_region=self.refund_region, misread_city=coin < self.misread_share)


VARIANTS: Final[dict[str, Variant]] = {
    v.name: v
    for v in (
        Variant("baseline", "answers every task of examples/concierge.yaml right"),
        Variant("slower", "150 ms more on every model call", extra_model_delay_s=0.15),
        Variant("broken", "reads the EU refund policy: refund tasks fail", refund_region="EU"),
        Variant("flaky", "misreads Oslo as Osaka on half the runs", misread_share=0.5),
    )
}
