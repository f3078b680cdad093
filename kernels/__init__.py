"""kernelgate's kernel set: one package per kernel, plus the harness that verifies and times them."""
