"""Reading nanotick's counters files (src/core/counters_file.hpp) from outside
the processes that write them: `counters_file.read()` for one file, and
`python -m tools.counters` (`./nanotick stat`) to show them, once or live."""
