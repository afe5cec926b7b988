"""rlpyt's named sequence replays (leading dims ``[T, batch_B]``) for recurrent agents, each a composition
from :mod:`rlrun.replays.factory`."""
