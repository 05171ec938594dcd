"""Rendering: plain text for agents (byte-stable), Rich for people (`term.py` is Rich's only home).

Layer 9: it turns the core's results (recall, findings, tasks, sessions) into text or JSON and
imports the core only for their types; the adapters above call it.
"""
