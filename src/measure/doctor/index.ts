// The doctor: the machine checked before anything is timed (GPU, driver and CUDA, clocks, power,
// ECC, other work), facts for the results' environment and diagnostics with fixes. Its only door.
export * from './doctor.js';
