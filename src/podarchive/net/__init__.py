"""The network: the only httpx user and its socket guards.

Per-host politeness, and the one door every fetch goes through (:mod:`~.fetch_for`).
"""
