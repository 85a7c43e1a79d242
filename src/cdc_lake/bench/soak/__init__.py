"""A day in production, compressed (issue 44): `make soak` (`python -m cdc_lake.bench.soak`).

Everything runs as it runs in production, in a temporary folder: a local Kafka broker; the
simulator's workload (every format; key changes, keyless tables, DDL, truncates, duplicates and a
few malformed records) produced into its topics by a real producer, paced to last DURATION seconds
at RATE change records per second, all formats together; `cdc-lake consume --follow`; `cdc-lake
build --every BUILD_INTERVAL` (a `dbt build` every BUILD_INTERVAL seconds in one process whose
Spark session stays warm) with `cdc_compact` and `cdc_expire_snapshots` between two builds every
UPKEEP_INTERVAL seconds (`--upkeep-every`), as a user would schedule them; and faults at the
moments a seeded schedule picks: kill -9 of the consumer (twice), of the build process while it
builds (twice), of the metastore server, a broker restart, and a topic deleted and created again.
Nobody steps in: a dead consumer or build process is started again (as a service manager would) and
its next build picks up what the killed one left; the lake's processes start the metastore server
again themselves; a producer that gives up on its records is replaced and they are sent again, in
order (at least once, as a CDC tool's restarted task sends again from its last acknowledged
position).

At the end the producer has sent everything and the faults stop; a last `cdc-lake consume`
(without --follow) lands what is left while the schedule goes on, and the schedule's first build
that starts after that landing is the last: once it and what follows it (the upkeep when due, else
`cdc_compact_latest`) are logged, the schedule is stopped between two builds, so the analyst's query
at the end reads what a scheduled build leaves, built by the warm process that built all along.
Then, against the simulator's truth: `cdc_current` and
`cdc_history` per format, every record a change or a reject (only the injected malformed ones),
reconciliation clean, no record landed twice. Measured: changes/s sustained; freshness per change
(produced -- the source's commit, in this simulation -- to the end of the first build that shows
it: the first successful build that started after its landing, so an upper bound); a fixed
analyst query on `cdc_current` at the start and at the end; files per table at each upkeep.
Written to docs/soak.md (with a PNG of freshness over time, faults marked) and
bench/results/soak.json. Exit status 0 when every check of correctness passed.

One module per job over the run's shared state (`state.py`): `producer.py` (the workload),
`faults.py` (the schedule of faults), `supervision.py` (the consumer, the build schedule, CPU),
`check.py` (the truth, freshness, backlog, the analyst query); `run.py` runs them together as
`Soak`; `report.py` writes the summary and the page, and holds the command line.
"""

from cdc_lake.bench.soak.check import ANALYST_QUERY, analyst_seconds
from cdc_lake.bench.soak.report import main, percentile, plot, render, summarize
from cdc_lake.bench.soak.run import Soak
from cdc_lake.bench.soak.state import FAULTS, KNOWN_FAULTS, RAW_SCHEMA, SCHEMA, SoakState
from cdc_lake.bench.soak.supervision import LAST_BUILD_TRIES, SoakProcess

__all__ = [
    "ANALYST_QUERY", "FAULTS", "KNOWN_FAULTS", "LAST_BUILD_TRIES", "RAW_SCHEMA", "SCHEMA", "Soak", "SoakProcess",
    "SoakState", "analyst_seconds", "main", "percentile", "plot", "render", "summarize",
]
