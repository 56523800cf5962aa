"""The process a run lives in: its lock, worker processes, the allocator and progress display."""
