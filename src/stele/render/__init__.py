"""Rendering: plain text for agents (byte-stable), Rich for people (`term.py` is Rich's only home)."""
