"""`python -m cdc_lake.bench.soak`: see the package's docstring."""

import sys

from cdc_lake.bench.soak.report import main

if __name__ == "__main__":
    sys.exit(main())
