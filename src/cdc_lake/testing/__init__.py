"""The test rig, not the product: the harness that builds test lakes with real dbt and Spark
(`harness`), the truths the tests compare with (the simulator's in `truth`, MariaDB's values in
`mysql_values`, the conformance corpus and Flink's row kinds in `conformance`), and the end-to-end
rig's servers and workload (`mariadb`, `kafka_connect`, `canal_server`, `e2e_workload`). The
workload generator (`cdc_lake.generator`) and the benchmark (`cdc_lake.bench`) are the rest of it."""
