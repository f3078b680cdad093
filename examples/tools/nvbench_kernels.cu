// nvbench program of issue 31's recordings (examples/tools/README.md): the four kernels of
// kernels.cuh, one nvbench benchmark each, no axes (one state each). nvbench times every launch
// cold (L2 flushed, CUDA events) until its stopping rule is met; with --jsonbin it writes every
// launch's time, which kernelgate reads as the samples.
//
// KG_SLOW_PCT=2.5 makes `fma` run 2.5 % more iterations (kernels.cuh); the other three do not change.
#include <nvbench/nvbench.cuh>

#include <cstdio>

#include "kernels.cuh"

namespace {

kg_tools::Buffers &buffers() {
  static kg_tools::Buffers buf;  // allocated on first use, after nvbench has chosen the device
  return buf;
}

constexpr auto kBytes = kg_tools::kElements * sizeof(float);

void bench_copy(nvbench::state &state) {
  auto &buf = buffers();
  const int blocks = kg_tools::strideBlocks();
  state.add_element_count(kg_tools::kElements, "Elements");
  state.add_global_memory_reads(kBytes, "Bytes read");
  state.add_global_memory_writes(kBytes, "Bytes written");
  state.exec([&](nvbench::launch &launch) { kg_tools::launchCopy(buf, blocks, launch.get_stream()); });
}

void bench_saxpy(nvbench::state &state) {
  auto &buf = buffers();
  const int blocks = kg_tools::strideBlocks();
  state.add_element_count(kg_tools::kElements, "Elements");
  state.add_global_memory_reads(2 * kBytes, "Bytes read");
  state.add_global_memory_writes(kBytes, "Bytes written");
  state.exec([&](nvbench::launch &launch) { kg_tools::launchSaxpy(buf, blocks, launch.get_stream()); });
}

void bench_reduce(nvbench::state &state) {
  auto &buf = buffers();
  const int blocks = kg_tools::strideBlocks();
  state.add_element_count(kg_tools::kElements, "Elements");
  state.add_global_memory_reads(kBytes, "Bytes read");
  state.exec([&](nvbench::launch &launch) { kg_tools::launchReduce(buf, blocks, launch.get_stream()); });
}

void bench_fma(nvbench::state &state) {
  auto &buf = buffers();
  const int iters = kg_tools::fmaIters();
  std::fprintf(stderr, "fma: %d iterations per element (KG_SLOW_PCT=%s)\n", iters,
               std::getenv("KG_SLOW_PCT") ? std::getenv("KG_SLOW_PCT") : "");
  state.add_element_count(kg_tools::kFmaElements, "Elements");
  state.add_global_memory_reads(kg_tools::kFmaElements * sizeof(float), "Bytes read");
  state.add_global_memory_writes(kg_tools::kFmaElements * sizeof(float), "Bytes written");
  state.exec([&](nvbench::launch &launch) { kg_tools::launchFma(buf, iters, launch.get_stream()); });
}

}  // namespace

NVBENCH_BENCH(bench_copy).set_name("copy");
NVBENCH_BENCH(bench_saxpy).set_name("saxpy");
NVBENCH_BENCH(bench_reduce).set_name("reduce");
NVBENCH_BENCH(bench_fma).set_name("fma");

NVBENCH_MAIN
