"""Dixit as a PettingZoo environment, for learning agents (``pip install 'dixit-lab[env]'``).

* :func:`parallel_env` -- a native ``ParallelEnv``: one step is one phase of a round;
* :func:`env` -- its AEC form (``parallel_to_aec``, order-enforced);
* :func:`single_agent_env` -- one learning seat against dixit_lab agents, a Gymnasium ``Env``;
* :func:`vector_env` -- many tables stepped at once over NumPy arrays, a Gymnasium
  ``VectorEnv`` with a row per table and seat;
* :class:`AgentPolicy` -- any dixit_lab agent as a policy of the environment (opponents);
* the ``policy`` agent (``dixit_lab_agents.policy_agent``) -- a trained policy in tournaments.

Observations, masks and the action numbering live in :mod:`dixit_lab.env.encoding`, which
needs only NumPy; importing this package does not import PettingZoo until an environment is
made. See ``docs/environment.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dixit_lab.env.encoding import ActionLayout, Encoder, ObservationLayout, SeatState
from dixit_lab.env.policies import AgentPolicy, random_policy
from dixit_lab.errors import install_hint

if TYPE_CHECKING:
    from pettingzoo import AECEnv

    from dixit_lab.env.parallel import DixitParallelEnv
    from dixit_lab.env.single import DixitSingleAgentEnv
    from dixit_lab.env.vector import DixitVectorEnv

__all__ = [
    "ActionLayout",
    "AgentPolicy",
    "Encoder",
    "ObservationLayout",
    "SeatState",
    "env",
    "parallel_env",
    "random_policy",
    "single_agent_env",
    "vector_env",
]


def _require_pettingzoo() -> None:
    try:
        import gymnasium  # noqa: F401
        import pettingzoo  # noqa: F401
    except ImportError as error:
        raise ImportError(f"the Dixit environment needs pettingzoo and gymnasium ({error}); "
                          f"install them with {install_hint('env')}") from None


def parallel_env(n_players: int = 4, rules: Any = "classic", deck: Any = "dreams",
                 embedder: str = "conse", render_mode: str | None = None,
                 **options: Any) -> DixitParallelEnv:
    """A Dixit ``ParallelEnv`` (see :class:`~dixit_lab.env.parallel.DixitParallelEnv` for
    ``options``: clue bank, clue actions, reward, illegal actions, rule options)."""
    _require_pettingzoo()
    from dixit_lab.env.parallel import DixitParallelEnv

    return DixitParallelEnv(n_players, rules, deck, embedder, render_mode, **options)


def env(n_players: int = 4, rules: Any = "classic", deck: Any = "dreams",
        embedder: str = "conse", render_mode: str | None = None, **options: Any) -> AECEnv:
    """The AEC form of :func:`parallel_env`: ``parallel_to_aec``, in PettingZoo's
    ``OrderEnforcingWrapper``. (No ``AssertOutOfBoundsWrapper``: the environment checks every
    action against the mask itself, with a message naming the agent, when the phase's last
    agent has acted; the extra layer would cost a fifth of the AEC speed.)"""
    _require_pettingzoo()
    from pettingzoo.utils import parallel_to_aec, wrappers

    aec = parallel_to_aec(parallel_env(n_players, rules, deck, embedder, render_mode,
                                       **options))
    return wrappers.OrderEnforcingWrapper(aec)


def single_agent_env(opponents: Any = ("literal", "literal", "literal"), seat: int = 0,
                     render_mode: str | None = None, **options: Any) -> DixitSingleAgentEnv:
    """A Gymnasium ``Env`` for one learner at ``seat`` against ``opponents`` (dixit_lab
    agents or specs); ``options`` as for :func:`parallel_env` (rules, deck, embedder ...)."""
    _require_pettingzoo()
    from dixit_lab.env.single import DixitSingleAgentEnv

    return DixitSingleAgentEnv(list(opponents), seat, render_mode, **options)


def vector_env(num_tables: int = 64, n_players: int = 4, rules: Any = "classic",
               deck: Any = "dreams", embedder: str = "conse", **options: Any
               ) -> DixitVectorEnv:
    """``num_tables`` tables of :func:`parallel_env` stepped at once, a Gymnasium
    ``VectorEnv`` (see :class:`~dixit_lab.env.vector.DixitVectorEnv` for ``options``:
    ``observations="flat"`` or ``"compact"``, clue bank, clue actions, reward, rule
    options)."""
    _require_pettingzoo()
    from dixit_lab.env.vector import DixitVectorEnv

    return DixitVectorEnv(num_tables, n_players, rules, deck, embedder, **options)
