"""What the benchmarks and the tests both use: a collector started as a
process (`servers`), a throwaway PostgreSQL cluster (`postgres`), OTLP
request builders (`otlp`), the crash and fuzz harnesses, and stored-run
builders (`runs`). The benchmarks import nothing of `tests`."""
