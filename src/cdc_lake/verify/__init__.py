"""`cdc-lake verify`: prove the lake equals the source database, table by table.

What "verified" means: at one consistent snapshot of the source (whose binlog position the report
names), every live row of `cdc_current` for the table has exactly the source row's values as
canonical text (floats/doubles as the same number), and the two sides hold the same keys; a table
without a primary key holds the same multiset of rows. A table that differs while the binlog holds
row events for it after the lake's last applied change is reported `in_flight`: those differences
may be changes the next landing and build bring; verify again after it.

    sql.py      the canonical text and hashes, in MariaDB's and in Spark's SQL
    source.py   the source database (PyMySQL, one consistent snapshot, binlog positions)
    lake.py     cdc_current and cdc_changelog in Spark, the results table
    compare.py  counts, checksums, bisection, the rows that differ
    report.py   the lines and the JSON a run prints
"""
