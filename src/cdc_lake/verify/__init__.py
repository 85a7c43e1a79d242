"""`cdc-lake verify`: prove the lake equals the source database, table by table.

What "verified" means: at one consistent snapshot of the source (whose binlog position or WAL LSN
the report names), every live row of `cdc_current` for the table has exactly the source row's values as
canonical text (floats/doubles as the same number), and the two sides hold the same keys; a table
without a primary key holds the same multiset of rows. A table that differs while the binlog (or
PostgreSQL's WAL) holds row changes of it after the lake's last applied change is reported
`in_flight`: those differences may be changes the next landing and build bring; verify again after it.

    sql.py           the canonical text and hashes, in MariaDB's and in Spark's SQL
    source.py        what a source offers (Source), the URL's scheme picking one; MariaDB/MySQL
                     (PyMySQL, one consistent snapshot, binlog positions)
    postgres.py      PostgreSQL (pg8000, a repeatable-read snapshot, WAL records via pg_walinspect)
    postgres_sql.py  PostgreSQL's canonical text per type
    lake.py          cdc_current and cdc_changelog in Spark, the results table
    compare.py       counts, checksums, bisection, the rows that differ
    report.py        the lines and the JSON a run prints
"""
