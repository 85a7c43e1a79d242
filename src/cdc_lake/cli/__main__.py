"""`python -m cdc_lake.cli ...`, as `cdc-lake ...` (the bench and tests start it so)."""

import sys

from cdc_lake.cli import main

sys.exit(main())
