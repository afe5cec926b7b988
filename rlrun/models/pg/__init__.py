"""Policy and value models for policy-gradient agents."""
