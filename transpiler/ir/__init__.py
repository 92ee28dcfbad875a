"""Stages 3-4: the IR (instructions), its builder and reference interpreter."""
