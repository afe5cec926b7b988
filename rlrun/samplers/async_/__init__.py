"""Samplers for asynchronous runs (:class:`~rlrun.runners.async_rl.AsyncRl`): each runs in a process of its
own, writing batch ``itr`` into half ``itr % 2`` of a double buffer while copier processes move the other
half into the replay."""
