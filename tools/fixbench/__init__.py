"""./nanotick fix-bench: the FIX round trip beside the binary one (fixbench.py)."""
