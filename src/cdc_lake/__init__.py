"""cdc_lake: land Kafka CDC records and build Iceberg change logs with dbt on Spark."""

__version__ = "0.1.0"
