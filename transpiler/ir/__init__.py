"""Stages 3-4: the IR (instructions), its builder, printer and reference interpreter."""
