"""Entry point: python -m kernelgate_harness --kernels kernels --out results.json [options]."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
