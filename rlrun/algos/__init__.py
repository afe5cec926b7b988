"""Training algorithms: they turn sampled batches into gradient steps on the agent."""
