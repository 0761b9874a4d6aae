"""tilewise benchmarks (issue 5): speed, memory, compile time and schedule quality measured in one
run against peers we did not write (TFLM, LiteRT) and against published silicon figures.

`python bench/run.py` (or `make bench`) runs every section; each module here owns one job:
machine.py (machine description), models.py (model files and inputs), stats.py (medians, run-by-run
ratios), peers.py (TFLM / LiteRT timing and arena), tilewise_host.py (generate, build and time the
generated C), callgrind.py (instruction counts), host_exec.py (table 1), memory_table.py (table 2),
compile_time.py (table 3), schedule_quality.py (table 4), geometries.py + published.py + silicon.py
(table 5), tables.py (text tables), plots.py (PNGs).
"""
