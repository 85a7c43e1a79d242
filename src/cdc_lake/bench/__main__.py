"""`python -m cdc_lake.bench`: see cdc_lake.bench."""

import sys

from cdc_lake.bench import main

sys.exit(main())
