"""The lake side of a verification: the live rows of `cdc_current` for one source table, as the
same texts and hashes the source computes (cdc_lake.verify.sql), and the lake's last applied
source position."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from cdc_lake.sqltext import qualified_name, sql_string
from cdc_lake.verify.source import BinlogPosition, SourceTable
from cdc_lake.verify.sql import SPARK, double_layers, lake_number_text, lake_value, layered

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

BINLOG_POSITION = re.compile(r"^(\S+):(\d+)\b")


class LakeSide:
    """`cdc_current` of one source system and database, in the models' schema."""

    def __init__(self, spark: SparkSession, schema: str, source_system: str, database: str) -> None:
        self.spark = spark
        self.schema = schema
        self.source_system = source_system
        self.database = database
        self._cached: dict[str, str] = {}

    def _where(self, table: str) -> str:
        return (
            f"source_system = {sql_string(self.source_system)} and database_name = {sql_string(self.database)} "
            f"and table_name = {sql_string(table)}"
        )

    def _rows(self, table: SourceTable) -> tuple[str, list[str]]:
        """The table's live rows as a query, and each column's text (source_value's form) as an
        expression over it: floats and doubles rewritten by double_layers, projection by projection."""
        query = (
            f"select image, row_count from {qualified_name(self.schema, 'cdc_current')} "
            f"where {self._where(table.name)} and not is_deleted"
        )
        layers: list[list[tuple[str, str]]] = []
        values = []
        for i, column in enumerate(table.columns):
            if column.is_number:
                name = f"verify_number_{i}"
                for depth, layer in enumerate(double_layers(lake_number_text(column), name)):
                    if depth == len(layers):
                        layers.append([])
                    layers[depth] += layer
                values.append(name)
            else:
                values.append(lake_value(column))
        return layered(query, layers), values

    def _texts(self, table: SourceTable) -> tuple[str, list[str], str, str]:
        """The rows' query, its columns' texts, its key text and its row text."""
        query, values = self._rows(table)
        row = SPARK.row_text(values)
        positions = [table.columns.index(c) for c in table.key]
        key = SPARK.row_text([values[i] for i in positions]) if table.key else row
        return query, values, key, row

    def _hashed(self, table: SourceTable, cache: bool) -> str:
        """The table's live rows as (key hash, row checksum, multiplicity); cached for a second pass."""
        if table.name in self._cached:
            return self._cached[table.name]
        rows, _, key, row = self._texts(table)
        query = (
            f"select {SPARK.key_hash(key) if cache else 'null'} as key_hash, {SPARK.checksum(row)} as checksum, "
            f"row_count from ({rows}) as live"
        )
        if not cache:
            return f"({query})"
        view = f"cdc_lake_verify_{len(self._cached)}"
        self.spark.sql(f"cache table {view} as {query}")
        self._cached[table.name] = view
        return view

    def release(self) -> None:
        for view in self._cached.values():
            self.spark.sql(f"uncache table if exists {view}")
            self.spark.catalog.dropTempView(view)
        self._cached.clear()

    def buckets(self, table: SourceTable, width: int, within: int, prefixes: list[str]) -> dict[str, tuple[int, int]]:
        hashed = self._hashed(table, cache=width > 0)
        rows = self.spark.sql(
            f"select {SPARK.bucket('key_hash', width)} as bucket, sum(row_count) as row_count, "
            f"sum(checksum * row_count) as checksum from {hashed} as hashed "
            f"where {SPARK.in_buckets('key_hash', within, prefixes)} group by 1"
        ).collect()
        return {r["bucket"]: (int(r["row_count"]), int(r["checksum"] or 0) % 2**64) for r in rows}

    def rows(self, table: SourceTable, width: int, prefixes: list[str]) -> list[tuple[str | None, ...]]:
        """The live rows in the given buckets as the source's texts, a keyless row once per copy."""
        rows, values, key, _ = self._texts(table)
        found = self.spark.sql(
            f"select array({', '.join(values)}) as v, row_count from ({rows}) as live "
            f"where {SPARK.in_buckets(SPARK.key_hash(key), width, prefixes)}"
        ).collect()
        return [tuple(r["v"]) for r in found for _ in range(max(int(r["row_count"] or 1), 1))]

    def source_systems(self) -> list[str]:
        rows = self.spark.sql(
            f"select distinct source_system from {qualified_name(self.schema, 'cdc_current')} "
            f"where database_name = {sql_string(self.database)}"
        ).collect()
        return sorted(r[0] for r in rows if r[0] is not None)

    def last_position(self) -> tuple[str, BinlogPosition | None]:
        """The source position of the last change the lake applied from this source system
        (every database: the binlog is the server's), readable and, where it is one, as a binlog
        file and offset."""
        rows = self.spark.sql(
            f"select source_position from {qualified_name(self.schema, 'cdc_changelog')} "
            f"where source_system = {sql_string(self.source_system)} order by change_order desc limit 1"
        ).collect()
        if not rows or rows[0][0] is None:
            return "", None
        text = str(rows[0][0])
        match = BINLOG_POSITION.match(text)
        return text, BinlogPosition(match.group(1), int(match.group(2))) if match else None
