"""The lake side of a verification: the live rows of `cdc_current` for one source table, as the
same texts and hashes the source computes (cdc_lake.verify.sql), and the lake's last applied
source position."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cdc_lake.sqltext import qualified_name, sql_string
from cdc_lake.verify.source import SourceTable
from cdc_lake.verify.sql import MARIADB_LAKE, LakeTexts, double_layers, lake_number_text, lake_value, layered

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class LakeSide:
    """`cdc_current` of one source system and database, in the models' schema; `texts` says how
    the source writes its texts (MariaDB's by default)."""

    def __init__(self, spark: SparkSession, schema: str, source_system: str, database: str,
                 texts: LakeTexts = MARIADB_LAKE) -> None:
        self.spark = spark
        self.schema = schema
        self.source_system = source_system
        self.database = database
        self.texts = texts
        self.dialect = texts.dialect
        self._cached: dict[tuple[str, str], str] = {}

    def _where(self, table: SourceTable) -> str:
        return (
            f"source_system = {sql_string(self.source_system)} "
            f"and database_name = {sql_string(table.database or self.database)} "
            f"and table_name = {sql_string(table.name)}"
        )

    def _rows(self, table: SourceTable) -> tuple[str, list[str]]:
        """The table's live rows as a query, and each column's text (source_value's form) as an
        expression over it: floats and doubles rewritten by double_layers, projection by projection."""
        query = (
            f"select image, row_count from {qualified_name(self.schema, 'cdc_current')} "
            f"where {self._where(table)} and not is_deleted"
        )
        layers: list[list[tuple[str, str]]] = []
        values = []
        for i, column in enumerate(table.columns):
            if column.is_number:
                name = f"verify_number_{i}"
                text = lake_number_text(column, texts=self.texts)
                for depth, layer in enumerate(double_layers(text, name, self.texts.float_layouts[column.data_type])):
                    if depth == len(layers):
                        layers.append([])
                    layers[depth] += layer
                values.append(name)
            else:
                values.append(lake_value(column, texts=self.texts))
        return layered(query, layers), values

    def _texts(self, table: SourceTable) -> tuple[str, list[str], str, str]:
        """The rows' query, its columns' texts, its key text and its row text."""
        query, values = self._rows(table)
        row = self.dialect.row_text(values)
        positions = [table.columns.index(c) for c in table.key]
        key = self.dialect.row_text([values[i] for i in positions]) if table.key else row
        return query, values, key, row

    def _hashed(self, table: SourceTable, cache: bool) -> str:
        """The table's live rows as (key hash, row checksum, multiplicity); cached for a second pass."""
        if (table.database, table.name) in self._cached:
            return self._cached[(table.database, table.name)]
        rows, _, key, row = self._texts(table)
        query = (
            f"select {self.dialect.key_hash(key) if cache else 'null'} as key_hash, "
            f"{self.dialect.checksum(row)} as checksum, "
            f"row_count from ({rows}) as live"
        )
        if not cache:
            return f"({query})"
        view = f"cdc_lake_verify_{len(self._cached)}"
        self.spark.sql(f"cache table {view} as {query}")
        self._cached[(table.database, table.name)] = view
        return view

    def release(self) -> None:
        for view in self._cached.values():
            self.spark.sql(f"uncache table if exists {view}")
            self.spark.catalog.dropTempView(view)
        self._cached.clear()

    def buckets(self, table: SourceTable, width: int, within: int, prefixes: list[str]) -> dict[str, tuple[int, int]]:
        hashed = self._hashed(table, cache=width > 0)
        rows = self.spark.sql(
            f"select {self.dialect.bucket('key_hash', width)} as bucket, sum(row_count) as row_count, "
            f"sum(checksum * row_count) as checksum from {hashed} as hashed "
            f"where {self.dialect.in_buckets('key_hash', within, prefixes)} group by 1"
        ).collect()
        return {r["bucket"]: (int(r["row_count"]), int(r["checksum"] or 0) % 2**64) for r in rows}

    def rows(self, table: SourceTable, width: int, prefixes: list[str]) -> list[tuple[str | None, ...]]:
        """The live rows in the given buckets as the source's texts, a keyless row once per copy."""
        rows, values, key, _ = self._texts(table)
        found = self.spark.sql(
            f"select array({', '.join(values)}) as v, row_count from ({rows}) as live "
            f"where {self.dialect.in_buckets(self.dialect.key_hash(key), width, prefixes)}"
        ).collect()
        return [tuple(r["v"]) for r in found for _ in range(max(int(r["row_count"] or 1), 1))]

    def source_systems(self, databases: list[str] | None = None) -> list[str]:
        """The source systems the lake holds any of `databases` (default: this one) from."""
        names = ", ".join(sql_string(d) for d in sorted(set(databases or [self.database])))
        rows = self.spark.sql(
            f"select distinct source_system from {qualified_name(self.schema, 'cdc_current')} "
            f"where database_name in ({names})"
        ).collect()
        return sorted(r[0] for r in rows if r[0] is not None)

    def formats(self, table: SourceTable) -> list[str]:
        """The formats the lake holds the table's rows from (cdc_current's source_format)."""
        rows = self.spark.sql(
            f"select distinct source_format from {qualified_name(self.schema, 'cdc_current')} "
            f"where {self._where(table)}"
        ).collect()
        return sorted(r[0] for r in rows if r[0] is not None)

    def last_position(self, order: str = "change_order desc") -> str:
        """The source position (readable, as the change log has it) of the last change the lake
        applied from this source system, in every database: the binlog, or the WAL, is the
        server's; `order` (Source.lake_order) says which is last. Empty when there is none."""
        rows = self.spark.sql(
            f"select source_position from {qualified_name(self.schema, 'cdc_changelog')} "
            f"where source_system = {sql_string(self.source_system)} order by {order} limit 1"
        ).collect()
        return "" if not rows or rows[0][0] is None else str(rows[0][0])
