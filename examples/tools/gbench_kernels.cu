// Google Benchmark program of issue 31's recordings (examples/tools/README.md): the four kernels
// of kernels.cuh, one benchmark each. Each iteration is one launch timed on the GPU by a pair of
// CUDA events and handed to the library with SetIterationTime (UseManualTime), so the times are
// the GPU's, not the host's. Run it with --benchmark_repetitions=N: kernelgate takes one sample
// per repetition.
//
// KG_SLOW_PCT=2.5 makes BM_fma run 2.5 % more iterations (kernels.cuh); the other three do not change.
// The GPU's name goes into the output's context ("gpu"), where kernelgate reads it.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "kernels.cuh"

namespace {

kg_tools::Buffers &buffers() {
  static kg_tools::Buffers buf;
  return buf;
}

constexpr double kBytes = static_cast<double>(kg_tools::kElements * sizeof(float));

/** Times every iteration's launch with CUDA events; bytes and FLOPs are per iteration. */
void timeLaunches(benchmark::State &state, const std::function<void(cudaStream_t)> &launch,
                  double bytesPerIter, double flopsPerIter) {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  kg_tools::check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  kg_tools::check(cudaEventCreate(&start), "cudaEventCreate");
  kg_tools::check(cudaEventCreate(&stop), "cudaEventCreate");
  launch(stream);  // warm-up: the module is loaded and the clocks are up before the first sample
  kg_tools::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  for (auto _ : state) {
    kg_tools::check(cudaEventRecord(start, stream), "cudaEventRecord");
    launch(stream);
    kg_tools::check(cudaEventRecord(stop, stream), "cudaEventRecord");
    kg_tools::check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0.0f;
    kg_tools::check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    state.SetIterationTime(static_cast<double>(ms) * 1e-3);
  }
  kg_tools::check(cudaGetLastError(), "a kernel launch");
  const auto iterations = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytesPerIter * iterations));
  if (flopsPerIter > 0)
    state.counters["flops"] =
        benchmark::Counter(flopsPerIter * iterations, benchmark::Counter::kAvgIterations);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
}

void BM_copy(benchmark::State &state) {
  const auto &buf = buffers();
  const int blocks = kg_tools::strideBlocks();
  timeLaunches(state, [&](cudaStream_t s) { kg_tools::launchCopy(buf, blocks, s); }, 2 * kBytes, 0);
}

void BM_saxpy(benchmark::State &state) {
  const auto &buf = buffers();
  const int blocks = kg_tools::strideBlocks();
  const double flops = 2.0 * static_cast<double>(kg_tools::kElements);
  timeLaunches(state, [&](cudaStream_t s) { kg_tools::launchSaxpy(buf, blocks, s); }, 3 * kBytes, flops);
}

void BM_reduce(benchmark::State &state) {
  const auto &buf = buffers();
  const int blocks = kg_tools::strideBlocks();
  const double flops = static_cast<double>(kg_tools::kElements);
  timeLaunches(state, [&](cudaStream_t s) { kg_tools::launchReduce(buf, blocks, s); }, kBytes, flops);
}

void BM_fma(benchmark::State &state) {
  const auto &buf = buffers();
  const int iters = kg_tools::fmaIters();
  state.counters["chain_iters"] = iters;
  const double n = static_cast<double>(kg_tools::kFmaElements);
  timeLaunches(state, [&](cudaStream_t s) { kg_tools::launchFma(buf, iters, s); },
               2 * n * sizeof(float), 2.0 * n * iters);
}

}  // namespace

BENCHMARK(BM_copy)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_saxpy)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_reduce)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_fma)->UseManualTime()->Unit(benchmark::kMicrosecond);

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("gpu", kg_tools::gpuName());
  const char *slow = std::getenv("KG_SLOW_PCT");
  benchmark::AddCustomContext("kg_slow_pct", slow ? slow : "");
  benchmark::AddCustomContext("fma_chain_iters", std::to_string(kg_tools::fmaIters()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
