"""The core: plain types, the exception root, time, URLs and settings.

Imports only the stdlib; every other layer builds on it.
"""
