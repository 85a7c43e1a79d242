"""One encoder per CDC tool; `ENCODERS` maps the format names of DESIGN.md to them."""

from __future__ import annotations

from cdc_lake.generator.encoders.base import Encoder
from cdc_lake.generator.encoders.canal_flat import CanalFlatEncoder
from cdc_lake.generator.encoders.debezium import DebeziumEncoder
from cdc_lake.generator.encoders.kafka_river_canal import KafkaRiverCanalEncoder
from cdc_lake.generator.encoders.lindorm import LindormEncoder
from cdc_lake.generator.encoders.tencent_dts import TencentDtsEncoder

ENCODERS: dict[str, type[Encoder]] = {
    "kafka_river_canal": KafkaRiverCanalEncoder,
    "debezium": DebeziumEncoder,
    "canal_flat": CanalFlatEncoder,
    "tencent_dts": TencentDtsEncoder,
    "lindorm": LindormEncoder,
}

__all__ = ["ENCODERS", "Encoder"]
