"""Replays that return sequences (leading dims ``[T, batch_B]``) for recurrent agents, with the recurrent
state stored every ``rnn_state_interval`` steps."""
