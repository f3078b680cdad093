// The deep checks' recordings on the H100 (test/fixtures/deep/README.md) for the tests.

/**
 * The first finding of memcheck on the planted-fault module's oob_store, as recorded in deep22:
 * its Triton kernel oob_tail stores one element past its output (faulty_bench.py:286); the
 * innermost Python frame of the launch is Triton's launcher, under faulty_bench.py:306.
 */
export const PLANTED_OOB_FINDING = {
  what: 'Invalid __global__ write of size 4 bytes',
  kernel: 'oob_tail',
  detail: [
    'at oob_tail+0x130 in faulty_bench.py:286',
    'by thread (32,0,0) in block (31,0,0)',
    'Access to 0x7f90e280a880 is out of bounds',
    'and is 1 bytes after the nearest allocation at 0x7f90e2806a00 of size 16,000 bytes',
  ].join('\n'),
  python_frame: '__call__ in driver.py:713',
};
