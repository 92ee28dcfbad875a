"""Stage 5: analyses and Program -> Program passes."""
