"""Loopback ports for the servers the project starts (metastore, Kafka, Connect, MariaDB, Canal,
the Spark cluster): each binds a free port of its own, never a fixed one."""

from __future__ import annotations

import socket

HOST = "127.0.0.1"


def free_port(host: str = HOST) -> int:
    """A port nothing listens on now (the OS picks it; a server started next can take it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def port_is_free(port: int, host: str = HOST) -> bool:
    """True when `port` can be bound now (a server of an earlier run may take it back). As a
    server binds: with SO_REUSEADDR (Java's server sockets set it), so the connections a killed
    server leaves in TIME_WAIT do not keep its port from it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def port_open(port: int, host: str = HOST, timeout: float = 1.0) -> bool:
    """True when something accepts TCP connections on `port`."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False
