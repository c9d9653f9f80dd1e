"""Paper checks: scripts reproducing each paper's qualitative result (see docs/papers.md)."""
