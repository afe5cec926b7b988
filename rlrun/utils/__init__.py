"""Data structures and helpers with no dependency on the rest of rlrun."""
