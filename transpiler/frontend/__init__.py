"""Stages 1-2: read and parse the user's source; fence off unsupported Python."""
