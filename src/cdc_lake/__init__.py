"""cdc_lake: land Kafka CDC records and build Iceberg change logs with dbt on Spark.

The product is the modules here: the CLI (`cli`), the landing of kcat files and of Kafka (`landing`,
`consume`, `sniff`, `formats`), the SQL shell (`sql_shell`), typed tables (`tables`), the Spark
session and Thrift connections (`spark`, `thrift`), the environment defaults (`env`, `hook`) and the
demo (`demo`). `servers/` holds the local servers it runs (metastore, Kafka broker, cluster), all
started through one supervisor. The rest is the test and benchmark rig: `testing/` (harness, truths,
end-to-end servers and workload), `generator/` (the simulated MySQL workload, also behind `cdc-lake
generate`) and `bench/`.
"""

__version__ = "0.1.0"
