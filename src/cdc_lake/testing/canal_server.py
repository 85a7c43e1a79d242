"""Alibaba Canal's server reading a MariaDB/MySQL binlog into Kafka as FlatMessage JSON, for the end-to-end test.

The server (`CanalLauncher` of Canal 1.1.4) runs from the jars `make setup` copied from Maven
Central (jvm/canal/pom.xml). Every file it reads is written into its folder, which is the head of
its classpath: `canal.properties` (the server and its Kafka producer), `<destination>/instance.properties`
(the source, the table filter, the topic), `spring/cdc_lake-instance.xml` (one instance's bean
graph, `INSTANCE_XML`) and `logback.xml` (the log goes to `canal.log` there). One instance, all
state in memory (a restarted server starts again at the binlog's end), no ZooKeeper, no admin.

Limits of Canal 1.1.4 to plan a workload around:
- MariaDB 10.6+ writes a status variable (Q_XID, code 129) into the CREATE TABLE and DROP TABLE
  events that Canal's binlog parser cannot read: it retries that event forever. Create the tables
  before the server starts; the parser begins at the binlog's end (SHOW MASTER STATUS).
- Without a table-metadata store (tsdb, which needs a database of its own) Canal reads a table's
  columns live when it parses that table's row events: let it send a table's changes before
  changing that table's columns.
- The topic must exist: the project's broker creates no topics by itself, and Canal does not.

    with CanalServer(folder, mariadb_port=port, user=..., password=..., bootstrap=..., topic="canal.db",
                     filter_regex=r"db\\..*", slave_id=5500) as canal:   # returns once it reads the binlog
        ...
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from cdc_lake.env import jvm_dir
from cdc_lake.servers.ports import free_port
from cdc_lake.servers.supervisor import LocalServer

START_TIMEOUT = 120.0
MAX_RECORD_BYTES = 32 * 1024 * 1024
# log lines that say the parser has its start position and the Kafka producer has subscribed
PARSER_READY = "find start position successfully"
PRODUCER_READY = "is running now ......"

# One instance's beans. Placeholders come from <destination>/instance.properties (Canal's own
# configurer also resolves ${canal.instance.destination}, a system property its generator sets).
INSTANCE_XML = """\
<?xml version="1.0" encoding="UTF-8"?>
<!-- cdc_lake: one Canal instance for the end-to-end test; everything in memory, no tsdb, no ZooKeeper -->
<beans xmlns="http://www.springframework.org/schema/beans"
       xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
       xsi:schemaLocation="http://www.springframework.org/schema/beans
                           http://www.springframework.org/schema/beans/spring-beans-3.2.xsd">

  <bean class="com.alibaba.otter.canal.instance.spring.support.PropertyPlaceholderConfigurer">
    <property name="ignoreResourceNotFound" value="false"/>
    <property name="locationNames">
      <list><value>classpath:${canal.instance.destination:}/instance.properties</value></list>
    </property>
  </bean>

  <bean id="alarmHandler" class="com.alibaba.otter.canal.common.alarm.LogAlarmHandler"/>
  <bean id="metaManager" class="com.alibaba.otter.canal.meta.MemoryMetaManager"/>

  <!-- raw=false: the MQ worker converts parsed entries (the default keeps serialized bytes) -->
  <bean id="eventStore" class="com.alibaba.otter.canal.store.memory.MemoryEventStoreWithBuffer">
    <property name="raw" value="false"/>
  </bean>

  <bean id="eventSink" class="com.alibaba.otter.canal.sink.entry.EntryEventSink">
    <property name="eventStore" ref="eventStore"/>
  </bean>

  <bean id="eventParser" class="com.alibaba.otter.canal.parse.inbound.mysql.MysqlEventParser">
    <property name="destination" value="${canal.instance.destination}"/>
    <!-- the parser reads the binlog as a replica of this id (must differ from the server's) -->
    <property name="slaveId" value="${canal.instance.mysql.slaveId}"/>
    <property name="connectionCharset" value="UTF-8"/>
    <property name="detectingEnable" value="false"/>
    <property name="alarmHandler" ref="alarmHandler"/>
    <property name="eventSink" ref="eventSink"/>
    <property name="haController">
      <bean class="com.alibaba.otter.canal.parse.ha.HeartBeatHAController">
        <property name="switchEnable" value="false"/>
      </bean>
    </property>
    <!-- memory first, then the position the MQ worker acknowledged: with memory alone a parse error
         makes the retry start again at the binlog's end, skipping events -->
    <property name="logPositionManager">
      <bean class="com.alibaba.otter.canal.parse.index.FailbackLogPositionManager">
        <constructor-arg index="0">
          <bean class="com.alibaba.otter.canal.parse.index.MemoryLogPositionManager"/>
        </constructor-arg>
        <constructor-arg index="1">
          <bean class="com.alibaba.otter.canal.parse.index.MetaLogPositionManager">
            <constructor-arg index="0" ref="metaManager"/>
          </bean>
        </constructor-arg>
      </bean>
    </property>
    <property name="eventFilter">
      <bean class="com.alibaba.otter.canal.filter.aviater.AviaterRegexFilter">
        <constructor-arg index="0" value="${canal.instance.filter.regex}"/>
      </bean>
    </property>
    <property name="masterInfo">
      <bean class="com.alibaba.otter.canal.parse.support.AuthenticationInfo">
        <property name="address">
          <bean class="java.net.InetSocketAddress">
            <constructor-arg index="0" value="${canal.instance.master.host}"/>
            <constructor-arg index="1" type="int" value="${canal.instance.master.port}"/>
          </bean>
        </property>
        <property name="username" value="${canal.instance.dbUsername}"/>
        <property name="password" value="${canal.instance.dbPassword}"/>
      </bean>
    </property>
    <!-- no file and offset: start at the binlog's end (SHOW MASTER STATUS) -->
    <property name="masterPosition">
      <bean class="com.alibaba.otter.canal.protocol.position.EntryPosition"/>
    </property>
    <!-- the stock default: the statement text of row events (MariaDB's annotate rows) is sent as
         QUERY messages, as a deployment left at its defaults sends it -->
    <property name="filterQueryDml" value="false"/>
    <!-- table metadata read live from the source (a tsdb would need an H2 or MySQL store) -->
    <property name="enableTsdb" value="false"/>
    <!-- one parsing thread: a small machine, and the order is the binlog's either way -->
    <property name="parallel" value="false"/>
  </bean>

  <bean id="instance" class="com.alibaba.otter.canal.instance.spring.CanalInstanceWithSpring">
    <property name="destination" value="${canal.instance.destination}"/>
    <property name="eventParser" ref="eventParser"/>
    <property name="eventSink" ref="eventSink"/>
    <property name="eventStore" ref="eventStore"/>
    <property name="metaManager" ref="metaManager"/>
    <property name="alarmHandler" ref="alarmHandler"/>
    <property name="mqConfig">
      <bean class="com.alibaba.otter.canal.instance.core.CanalMQConfig">
        <property name="topic" value="${canal.mq.topic}"/>
        <property name="partition" value="0"/>
      </bean>
    </property>
  </bean>
</beans>
"""

LOGBACK_XML = """\
<configuration>
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>{log}</file>
    <encoder><pattern>%d{{HH:mm:ss.SSS}} %-5level [%thread] %logger{{36}} - %msg%n</pattern></encoder>
  </appender>
  <logger name="org.apache.kafka" level="WARN"/>
  <logger name="org.springframework" level="WARN"/>
  <root level="INFO"><appender-ref ref="FILE"/></root>
</configuration>
"""


class CanalError(Exception):
    """The Canal server could not be started or stopped running."""


class CanalServer(LocalServer):
    """One Canal server with one instance (`destination`) reading 127.0.0.1:`mariadb_port` into `topic`.

    `filter_regex` is Canal's table filter (`db\\..*`: every table of `db`). `time_zone` is the
    JVM's zone, in which Canal renders TIMESTAMP values (cdc_lake's `source_time_zone` var).
    """

    name = "canal"
    error = CanalError

    def __init__(
        self,
        folder: Path,
        *,
        mariadb_port: int,
        user: str,
        password: str,
        bootstrap: str,
        topic: str,
        filter_regex: str,
        slave_id: int,
        destination: str = "cdclake",
        time_zone: str = "UTC",
        heap: str = "256m",
    ) -> None:
        super().__init__(folder)
        self.mariadb_port = mariadb_port
        self.user = user
        self.password = password
        self.bootstrap = bootstrap
        self.topic = topic
        self.filter_regex = filter_regex
        self.slave_id = slave_id
        self.destination = destination
        self.time_zone = time_zone
        self.heap = heap

    @property
    def log_file(self) -> Path:
        return self.folder / "canal.log"

    def _classpath(self) -> str:
        jars = jvm_dir("canal")
        if not any(jars.glob("canal.deployer-*.jar")):
            raise CanalError(f"Canal jars not found in {jars}: run `make setup`")
        # the folder first: its logback.xml and spring/ win over any the jars carry
        return f"{self.folder}:{jars / '*'}"

    def _configure(self) -> None:
        (self.folder / "spring").mkdir(parents=True, exist_ok=True)
        (self.folder / self.destination).mkdir(exist_ok=True)
        (self.folder / "canal.properties").write_text(_properties({
            "canal.id": "1",
            "canal.ip": "127.0.0.1",
            # kafka mode serves no clients, but the server still takes these ports; never the defaults
            "canal.port": str(free_port()),
            "canal.metrics.pull.port": str(free_port()),
            "canal.zkServers": "",
            "canal.serverMode": "kafka",
            "canal.withoutNetty": "true",
            "canal.destinations": self.destination,
            "canal.conf.dir": str(self.folder),
            "canal.auto.scan": "false",
            "canal.instance.global.mode": "spring",
            "canal.instance.global.lazy": "false",
            "canal.instance.global.spring.xml": "classpath:spring/cdc_lake-instance.xml",
            "canal.mq.servers": self.bootstrap,
            "canal.mq.flatMessage": "true",
            "canal.mq.acks": "all",
            # no producer retries: a failed send fails Canal's batch, which it sends again in order
            "canal.mq.retries": "0",
            "canal.mq.batchSize": "16384",
            "canal.mq.lingerMs": "1",
            "canal.mq.maxRequestSize": str(MAX_RECORD_BYTES),
            "canal.mq.bufferMemory": str(64 * 1024 * 1024),
            "canal.mq.compressionType": "none",
            "canal.mq.canalBatchSize": "50",
            "canal.mq.canalGetTimeout": "100",
        }))
        (self.folder / self.destination / "instance.properties").write_text(_properties({
            "canal.instance.master.host": "127.0.0.1",
            "canal.instance.master.port": str(self.mariadb_port),
            "canal.instance.dbUsername": self.user,
            "canal.instance.dbPassword": self.password,
            "canal.instance.mysql.slaveId": str(self.slave_id),
            "canal.instance.filter.regex": self.filter_regex,
            "canal.mq.topic": self.topic,
        }))
        (self.folder / "spring" / "cdc_lake-instance.xml").write_text(INSTANCE_XML)
        (self.folder / "logback.xml").write_text(LOGBACK_XML.format(log=self.log_file))

    def command(self) -> list[str]:
        return [
            "java", "-Xms64m", f"-Xmx{self.heap}", "-XX:+UseSerialGC", "-Djava.awt.headless=true",
            "-Dfile.encoding=UTF-8", f"-Duser.timezone={self.time_zone}",
            f"-Dcanal.conf={self.folder / 'canal.properties'}",
            "-cp", self._classpath(), "com.alibaba.otter.canal.deployer.CanalLauncher",
        ]

    def working_dir(self) -> Path:
        return self.folder

    def ready(self) -> bool:
        """The parser has its start position and the producer runs."""
        text = self.log_file.read_text(errors="replace") if self.log_file.exists() else ""
        return PARSER_READY in text and f"the MQ producer: {self.destination} {PRODUCER_READY}" in text

    def start(self, timeout: float = START_TIMEOUT) -> CanalServer:
        self._configure()
        return super().start(timeout)


def _properties(values: Mapping[str, str]) -> str:
    # Java properties read a backslash as an escape: a regex's `\.` is written `\\.`
    escaped = {key: value.replace("\\", "\\\\") for key, value in values.items()}
    return "".join(f"{key}={value}\n" for key, value in escaped.items())
