"""Entry point: python -m kernels.harness --kernels kernels --out results.json [options]."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
