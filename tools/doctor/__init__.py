"""./nanotick doctor: how this machine is set up for low latency (docs/TUNING.md)."""
