"""The local servers cdc_lake runs, each a `supervisor.LocalServer`: the lake's metastore (Derby's
network server), a Kafka broker (`cdc-lake kafka`, `make demo-kafka`) and a Spark standalone cluster
with its Thrift Server (`cdc-lake cluster`); with the process and port helpers they share."""
