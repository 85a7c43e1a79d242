"""The workload simulator behind `cdc-lake generate` (pure Python, standard library only).

- `workload`: the seeded random MySQL workload (and a Lindorm HBase-style table) with its ground truth;
- `encoders/`: one module per CDC tool, turning workload events into that tool's Kafka records;
- `kafka`: kcat-style record files, landing batches, offsets and injected faults;
- `truth`: the ground-truth files; `runner.generate()` ties it together. The subcommand is
  cdc_lake.cli.generate.
"""

from __future__ import annotations

from cdc_lake.generator.runner import Options, generate

__all__ = ["Options", "generate"]
