"""Runs a module of the harness as `python -m` does, without the current directory on sys.path.

The action starts the harness in the checkout it measures: a pull request's code. `python -m
kernelgate_harness` puts that directory first on sys.path, where a `kernelgate_harness/` of the
checkout is imported instead of the action's (it printed what it liked and exited 0, issue 26).
Started as `python <action>/python/kernelgate_launch.py kernelgate_harness --kernels …`, sys.path
begins with this file's folder (the action's python/, holding the harness alone) and the checkout
is not on it: the harness's own process imports nothing of the checkout. Its kernel workers, which
run the checkout's code anyway, add the checkout themselves (worker.py, `checkout_on_path`).
"""

import sys

USAGE = "usage: python kernelgate_launch.py kernelgate_harness[.<module>] [arguments…]"


def main():
    if len(sys.argv) < 2 or sys.argv[1].split(".")[0] != "kernelgate_harness":
        print(f"kernelgate_launch.py runs a module of kernelgate_harness, got {sys.argv[1:2]}; {USAGE}", file=sys.stderr)
        return 2
    module = sys.argv.pop(1)
    import runpy

    # As `python -m`: the module runs as __main__ (so multiprocessing's spawned workers import it
    # by name, from this folder), sys.argv[0] its file.
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
