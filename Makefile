# cdc_lake: two commands for a newcomer — `make demo`, then `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.cdc_lake_installed

BENCH_STAMP := $(VENV)/.cdc_lake_bench_installed
SIZE ?= 1m
# sqlfluff's processes: every core (0) for `make lint` alone; one beside the tests in `make test`
LINT_PROCESSES ?= 0

.PHONY: setup demo demo-kafka check-all test test-integration test-slow test-tools test-docs-site test-kafka e2e e2e-ci unit-test test-cluster cluster-start cluster-stop cluster-status lint build docs bench bench-kafka bench-scheduled bench-schedule-scale bench-increment bench-verify bench-land bench-capacity bench-per-record soak soak-ci clean-lake clean

setup: $(STAMP)

# The venv is created when missing; the stamp re-runs the install when pyproject.toml or a pom
# changes. JVM parts come from Maven Central (jvm/*/pom.xml) with their runtime dependencies;
# Maven's cache (~/.m2) keeps them, so a second setup downloads nothing. Last, the Spark driver's
# class-data-sharing archive (src/cdc_lake/class_archive.py: a demo build, 341 s on a slow day's fresh clone): every later
# Spark start maps its classes instead of loading them from the jars.
MVN_COPY := mvn -q -B dependency:copy-dependencies -DincludeScope=runtime
$(STAMP): pyproject.toml jvm/spark/pom.xml jvm/kafka/pom.xml jvm/derby/pom.xml jvm/connect/pom.xml \
		jvm/canal/pom.xml jvm/iceberg-connect/pom.xml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	rm -rf $(VENV)/jvm
	$(MVN_COPY) -f jvm/spark/pom.xml -DoutputDirectory=$(CURDIR)/$(VENV)/jvm/spark
	$(MVN_COPY) -f jvm/kafka/pom.xml -DoutputDirectory=$(CURDIR)/$(VENV)/jvm/kafka
	$(MVN_COPY) -f jvm/derby/pom.xml -DoutputDirectory=$(CURDIR)/$(VENV)/jvm/derby
	$(MVN_COPY) -f jvm/connect/pom.xml -DoutputDirectory=$(CURDIR)/$(VENV)/jvm/connect
	$(MVN_COPY) -f jvm/canal/pom.xml -DoutputDirectory=$(CURDIR)/$(VENV)/jvm/canal
	$(MVN_COPY) -f jvm/iceberg-connect/pom.xml -DoutputDirectory=$(CURDIR)/$(VENV)/jvm/iceberg-connect/iceberg
	$(BIN)/python -m cdc_lake.env --install
	$(BIN)/python -m cdc_lake.class_archive
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m cdc_lake.demo

# The same through a real Kafka broker: start it, produce the demo workload into topics,
# `cdc-lake consume`, dbt build, the summary, stop the broker.
demo-kafka: $(STAMP)
	$(BIN)/python -m cdc_lake.demo --kafka

# pytest exits 5 when it collects no tests; that is not a failure of the suite. Lint runs beside
# the tests (its output shown after theirs), in one process at the lowest priority: it takes the
# share of the cores the tests leave idle while they wait on the metastore and on dbt's Python
# between nodes, and ends well before them (`make test` 8.4 min with lint on both cores at normal
# priority, 7.8 min so; docs/test_speed.md).
test: $(STAMP)
	@lint_log=$$(mktemp -t cdc_lake_lint_log.XXXXXX); \
	nice -n 19 $(MAKE) --no-print-directory lint LINT_PROCESSES=1 > "$$lint_log" 2>&1 & lint_pid=$$!; \
	trap 'kill $$lint_pid 2>/dev/null; rm -f "$$lint_log"' EXIT; \
	$(BIN)/python -m pytest -ra; tests=$$?; \
	wait $$lint_pid; lint=$$?; \
	echo "--- make lint (ran beside the tests) ---"; cat "$$lint_log"; \
	[ $$tests -eq 0 ] || [ $$tests -eq 5 ] || exit $$tests; \
	exit $$lint

# Everything `make test` leaves out, in one pytest run (one Spark session for all; test_analyst's
# lake serves its docs-site tests too): the modules marked `integration` (lakes that later commands
# change: re-landing, unland, full refresh, scheduled checks; concurrent landers; the analyst's
# workflow), the slow ones (processes killed mid-build, land + build + query at once), a real Kafka
# broker, MariaDB and PostgreSQL end to end (CDC_LAKE_E2E=ci unless set: `make e2e` runs the full matrix), the
# standalone cluster, the benchmark tool and the docs site. CI runs it after `make test`.
INTEGRATION := integration or slow or kafka or e2e or cluster or bench or docs_site
test-integration: $(STAMP)
	CDC_LAKE_E2E=$${CDC_LAKE_E2E:-ci} $(BIN)/python -m pytest -ra -m "$(INTEGRATION)" || [ $$? -eq 5 ]

# Parts of test-integration alone.
# Heavier runs (real processes killed mid-build, larger workloads).
test-slow: $(STAMP)
	$(BIN)/python -m pytest -ra -m slow || [ $$? -eq 5 ]

# dbt unit tests alone. Their fixtures take column types from the real relations, so the models
# must exist: `dbt run --empty` creates any that are missing (and changes no data).
unit-test: $(STAMP)
	$(BIN)/dbt seed
	$(BIN)/dbt run --empty
	$(BIN)/dbt test --select test_type:unit


# A Spark standalone master + worker + Thrift Server on 127.0.0.1 (see docs/cluster.md);
# state in CDC_LAKE_CLUSTER_DIR (default .lake-cluster/). Then: CDC_LAKE_TARGET=thrift dbt build.
cluster-start: $(STAMP)
	$(BIN)/cdc-lake cluster start

cluster-stop: $(STAMP)
	$(BIN)/cdc-lake cluster stop

cluster-status: $(STAMP)
	$(BIN)/cdc-lake cluster status

# `make bench`'s code end to end at 600 changes in one Spark session (speed not checked), and the
# schedule-scale bench's (marker bench_tools: about 4 minutes, left out of CI's integration run).
test-tools: $(STAMP)
	$(BIN)/python -m pytest -ra -m "bench or bench_tools" pytests/test_bench_smoke.py || [ $$? -eq 5 ]

# The generated dbt docs site opened in headless Chromium (Debian's `chromium`): a model page and
# the lineage graph. It builds test_analyst's lake first (its fixtures).
test-docs-site: $(STAMP)
	$(BIN)/python -m pytest -ra -m docs_site pytests/test_analyst.py

# A real Kafka broker (KRaft) on free loopback ports in a temporary dir, stopped whatever happens.
test-kafka: $(STAMP)
	$(BIN)/python -m pytest -ra -m kafka

# MariaDB (Debian's mariadb-server) -> Debezium in Kafka Connect, and -> Alibaba Canal's server ->
# Kafka -> cdc_lake, and PostgreSQL (Debian's postgresql) -> Debezium (pgoutput) -> Kafka ->
# cdc_lake, all on free loopback ports in temporary dirs, stopped whatever happens: every Debezium
# setting of the matrix and the 100k-row transactions. `e2e-ci` is the reduced set CI runs
# (CDC_LAKE_E2E=ci; the Canal test is the same in both).
E2E_TESTS := pytests/test_e2e_debezium.py pytests/test_e2e_canal.py pytests/test_e2e_postgres.py
e2e: $(STAMP)
	CDC_LAKE_E2E=full $(BIN)/python -m pytest -ra -m e2e $(E2E_TESTS)

e2e-ci: $(STAMP)
	CDC_LAKE_E2E=ci $(BIN)/python -m pytest -ra -m e2e $(E2E_TESTS)

# Starts its own cluster on free ports in a temporary dir, and stops it whatever happens.
test-cluster: $(STAMP)
	$(BIN)/python -m pytest -ra -m cluster

# Benchmark (docs/benchmarks.md): SIZE=tiny|small|1m|5m|250k or a comma list; default 1M changes.
$(BENCH_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -e '.[dev,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python -m cdc_lake.bench --size $(SIZE) $(BENCH_ARGS)

# Landing from Kafka against kafka-consumer-perf-test on the same topic (docs/benchmarks.md).
BENCH_KAFKA_ARGS ?= --changes 100000 --runs 3
bench-kafka: $(BENCH_STAMP)
	$(BIN)/python -m cdc_lake.bench.kafka_landing $(BENCH_KAFKA_ARGS)

# A scheduled `dbt build` with nothing new, and the analyst's one-view build, against the start-up
# floor, from the command line on a demo lake of its own (src/cdc_lake/bench/scheduled.py).
bench-scheduled: $(STAMP)
	$(BIN)/python -m cdc_lake.bench.scheduled $(BENCH_SCHEDULED_ARGS)

# The scheduled `dbt build` of one fixed increment (new keys and new changes to old ones) on a
# built history, per node with its Spark jobs, warm and from the command line
# (src/cdc_lake/bench/increment.py).
bench-increment: $(BENCH_STAMP)
	$(BIN)/python -m cdc_lake.bench.increment --cold $(BENCH_INCREMENT_ARGS)

# What a schedule pays on a large history, warm (issue 40: the no-op build, a 1,000-record batch,
# the fixed 20,000-change increment): SIZE=1m here, then SIZE=5m (src/cdc_lake/bench/schedule_scale.py).
bench-schedule-scale: $(BENCH_STAMP)
	$(BIN)/python -m cdc_lake.bench.schedule_scale --size $(SIZE) $(BENCH_SCHEDULE_SCALE_ARGS)

# Landing kcat files (`cdc-lake land`) against a bare Spark read and a bare Iceberg append of the
# same files, 1M changes (src/cdc_lake/bench/file_landing.py): 15 minutes here.
bench-land: $(BENCH_STAMP)
	$(BIN)/python -m cdc_lake.bench.file_landing $(BENCH_LAND_ARGS)

# `cdc-lake verify` of a 1M-row table against count(*) and one full scan of each side, and 10
# differing rows found by key, on a MariaDB server and a lake of its own (src/cdc_lake/bench/verify.py).
bench-verify: $(STAMP)
	$(BIN)/python -m cdc_lake.bench.verify $(BENCH_VERIFY_ARGS)

# Capacity (issue 69): the soak's production without faults at rising rates, each on a lake that
# already holds a 1M history, with `cdc-lake consume --follow` and `cdc-lake build --every`; per
# rate freshness, backlog, builds and CPU; the highest rate kept up with (docs/benchmarks.md,
# "Capacity"; src/cdc_lake/bench/capacity.py). About 20 minutes per rate here.
CAPACITY_ARGS ?=
bench-capacity: $(BENCH_STAMP)
	$(BIN)/python -m cdc_lake.bench.capacity $(CAPACITY_ARGS)

# Where a full build's time goes per record (issue 69): each format's base model and changes view
# cut after every CTE into Spark's noop sink, the writes, and the change log written once per
# record; SIZE changes, one warm session (docs/benchmarks.md; src/cdc_lake/bench/per_record.py).
bench-per-record: $(BENCH_STAMP)
	$(BIN)/python -m cdc_lake.bench.per_record --size $(SIZE) $(BENCH_PER_RECORD_ARGS)

# A day in production, compressed: producer, `cdc-lake consume --follow`, a build loop, upkeep and
# seeded faults for DURATION seconds at RATE change records/s (all formats together), then
# everything checked against the simulator's truth; writes docs/soak.md (src/cdc_lake/bench/soak/).
DURATION ?= 1800
RATE ?= 100
soak: $(BENCH_STAMP)
	$(BIN)/python -m cdc_lake.bench.soak --duration $(DURATION) --rate $(RATE) $(SOAK_ARGS)

# CI's soak: five minutes with every fault, at a rate whose builds CI's time allows (3,000 simulated
# changes, about 17,000 records; the report goes to a temporary folder; docs/soak.md keeps the long
# run's). Exit status 0 only when nothing was lost or doubled.
soak-ci: $(STAMP)
	out=$$(mktemp -d) && $(BIN)/python -m cdc_lake.bench.soak --duration 300 --rate 50 \
		--report $$out/soak.md --results $$out/soak.json --plot $$out/soak.png

# sqlfluff's dbt templater compiles the models, which opens Spark: on a lake of its own (empty, as
# on a fresh checkout), whose metastore server is stopped afterwards, so linting never waits for
# or leaves anything in the developer's lake.
# sqlfluff on every core (--processes 0): 66 s against 125 s in one process on this machine.
lint: $(STAMP)
	$(BIN)/ruff check src pytests
	export CDC_LAKE_DIR=$$(mktemp -d -t cdc_lake_lint.XXXXXX); \
	trap '$(BIN)/cdc-lake metastore stop >/dev/null; rm -rf "$$CDC_LAKE_DIR"' EXIT; \
	$(BIN)/sqlfluff lint --processes $(LINT_PROCESSES) $(wildcard models macros tests)

build: $(STAMP)
	$(BIN)/dbt build

# Every data test over every row (a scheduled `dbt build` tests the last batch of the large
# incremental models: README "Data tests: the batch, or everything").
check-all: $(STAMP)
	$(BIN)/dbt test --vars '{cdc_check_all: true}'

docs: $(STAMP)
	$(BIN)/dbt docs generate

clean-lake:
	rm -rf .lake .lake-cluster target logs

clean: clean-lake
	rm -rf $(VENV)
