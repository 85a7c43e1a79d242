"""The local broker's storage setup, without starting it (no `kafka` marker: a few seconds of Java)."""

from __future__ import annotations

from pathlib import Path

from cdc_lake.servers.kafka_broker import LocalKafka, new_cluster_id

# URL-safe base64 maps the six high bits 111110 to "-": a UUID whose first byte is 0xF8-0xFB
# gives a cluster id that starts with "-"
DASH_FIRST = bytes([0xF8]) + bytes(15)
PLAIN = bytes(range(16))


def test_cluster_id_never_starts_with_a_dash() -> None:
    draws = iter([DASH_FIRST, DASH_FIRST, PLAIN])
    cluster_id = new_cluster_id(lambda: next(draws))
    assert cluster_id == "AAECAwQFBgcICQoLDA0ODw"
    assert not cluster_id.startswith("-")
    assert all(not new_cluster_id().startswith("-") for _ in range(2000))


def test_storage_formats_with_an_id_that_looks_like_an_option(tmp_path: Path) -> None:
    # a state folder written before ids were redrawn may hold one: formatting must still take it
    broker = LocalKafka(tmp_path / "kafka")
    broker.folder.mkdir(parents=True)
    broker._save(broker_port=1, controller_port=2, cluster_id="-" + new_cluster_id()[1:])
    broker._configure()
    meta = (broker.folder / "data" / "meta.properties").read_text()
    assert f"cluster.id={broker._state()['cluster_id']}\n" in meta
