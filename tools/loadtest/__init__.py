"""./nanotick loadtest: latency against offered load (docs/BENCHMARKS.md "Latency against offered load")."""
