"""Benchmark tables recorded as JSON from the benches' own output and rendered into Markdown (see __main__.py)."""
