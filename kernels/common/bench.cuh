// bench.cuh: the small harness shared by every bundled ncuwrap benchmark binary.
//
// Contract with ncuwrap (kernels/manifest.yaml documents it too):
//   <binary> [--variant NAME|all]... [--warmup W] [--iters N] [--size KEY=VALUE]... [--list]
// prints ONE JSON document on stdout:
//   {"benchmark": ..., "env": {...}, "results": [{"variant", "kernel", "verified", "max_error",
//    "checked_sizes", "sizes", "times_ms"}]}
// Exit code: 0 all verified, 1 a result is wrong (JSON still printed), 2 bad usage or CUDA error.
//
// Launch order of every variant (so that `ncu --launch-skip` lands on a steady-state launch):
//   1. one run at the family's odd "check" size (not a multiple of any block/tile),
//   2. one run at the full size, verified against a CPU reference,
//   3. W warm-up runs, then N timed runs (one CUDA event pair around each run).
// A "run" is one launch of the variant's kernel unless the manifest says otherwise. Every variant
// measures itself with verify_then_time() below, which keeps this order.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace bench {

[[noreturn]] inline void fail(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fputs("error: ", stderr);
  std::vfprintf(stderr, fmt, ap);
  std::fputc('\n', stderr);
  va_end(ap);
  std::exit(2);
}

inline void check_cuda(cudaError_t err, const char* what, const char* file, int line) {
  if (err != cudaSuccess) {
    fail("CUDA error %s (%s) at %s:%d: %s", cudaGetErrorName(err), cudaGetErrorString(err), file, line, what);
  }
}

}  // namespace bench

#define CUDA_CHECK(call) ::bench::check_cuda((call), #call, __FILE__, __LINE__)
// After every kernel launch: catches bad launch configurations at once (asynchronous faults surface
// at the next synchronizing call, which is also checked).
#define CUDA_CHECK_LAUNCH() ::bench::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

namespace bench {

using Sizes = std::map<std::string, long long>;

struct Args {
  std::vector<std::string> variants;  // empty: all
  int warmup = 5;
  int iters = 20;
  bool list = false;
  Sizes size_overrides;
};

// One measured variant.
struct Result {
  std::string variant;
  std::string kernel;  // function name of the profiled kernel ("" when there is none, e.g. cudaMemcpy)
  bool verified = false;
  double max_error = 0.0;
  std::vector<std::string> checked_sizes;
  Sizes sizes;
  std::vector<float> times_ms;
  std::map<std::string, double> extra;  // optional numbers (e.g. registers, launches per run)
};

struct Context {
  Args args;
  Sizes sizes;        // defaults with --size overrides applied
  cudaDeviceProp prop{};
  int device = 0;
};

struct Variant {
  std::string name;
  std::string kernel;
  std::function<Result(const Context&)> run;
};

// ---------------------------------------------------------------- small utilities

inline long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

inline std::string fmt_size(std::initializer_list<long long> dims) {
  std::string s;
  for (long long d : dims) {
    if (!s.empty()) s += "x";
    s += std::to_string(d);
  }
  return s;
}

// Deterministic pseudo-random fill, identical on every machine.
inline void fill_uniform(std::vector<float>& v, unsigned seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (auto& x : v) x = dist(gen);
}

// Device buffer owning its memory (RAII, so early returns cannot leak).
template <class T>
struct DeviceBuffer {
  T* ptr = nullptr;
  size_t count = 0;
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) : count(n) { CUDA_CHECK(cudaMalloc(&ptr, std::max<size_t>(n, 1) * sizeof(T))); }
  explicit DeviceBuffer(const std::vector<T>& h) : DeviceBuffer(h.size()) { upload(h); }  // a copy of h
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr) cudaFree(ptr);
  }
  size_t bytes() const { return count * sizeof(T); }
  void upload(const std::vector<T>& h) { CUDA_CHECK(cudaMemcpy(ptr, h.data(), count * sizeof(T), cudaMemcpyHostToDevice)); }
  std::vector<T> download() const {
    std::vector<T> h(count);
    CUDA_CHECK(cudaMemcpy(h.data(), ptr, count * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
  void zero() { CUDA_CHECK(cudaMemset(ptr, 0, std::max<size_t>(count, 1) * sizeof(T))); }
};

// Time `runs` executions of `launch` (one event pair each), after `warmup` untimed ones.
inline std::vector<float> time_runs(const std::function<void()>& launch, int warmup, int iters,
                                    cudaStream_t stream = 0) {
  for (int i = 0; i < warmup; ++i) launch();
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<cudaEvent_t> start(iters), stop(iters);
  for (int i = 0; i < iters; ++i) {
    CUDA_CHECK(cudaEventCreate(&start[i]));
    CUDA_CHECK(cudaEventCreate(&stop[i]));
  }
  for (int i = 0; i < iters; ++i) {
    CUDA_CHECK(cudaEventRecord(start[i], stream));
    launch();
    CUDA_CHECK(cudaEventRecord(stop[i], stream));
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> ms(iters);
  for (int i = 0; i < iters; ++i) {
    CUDA_CHECK(cudaEventElapsedTime(&ms[i], start[i], stop[i]));
    CUDA_CHECK(cudaEventDestroy(start[i]));
    CUDA_CHECK(cudaEventDestroy(stop[i]));
  }
  return ms;
}

// One value against its reference with a relative+absolute tolerance; keeps the largest |got-want| in
// *max_err (NaN counts as infinitely wrong).
inline bool close_enough(double got, double want, double atol, double rtol, double* max_err) {
  const double e = std::fabs(got - want);
  if (e > *max_err || std::isnan(e)) *max_err = std::isnan(e) ? INFINITY : e;
  return e <= atol + rtol * std::fabs(want);  // NaN fails too
}

// Compare n values with close_enough(); returns whether all passed.
template <class A, class B>
inline bool compare(const A& got, const B& want, size_t n, double atol, double rtol, double* max_err) {
  bool ok = true;
  for (size_t i = 0; i < n; ++i) ok = close_enough(static_cast<double>(got[i]), static_cast<double>(want[i]), atol, rtol, max_err) && ok;
  return ok;
}

// The elements a check looks at: all n, or (sampled: a full size too slow to check on the CPU)
// `count` pseudo-random ones, the same on every machine.
inline std::vector<long long> check_indices(long long n, bool sampled, unsigned seed, int count = 1024) {
  std::vector<long long> at;
  std::mt19937 gen(seed);
  for (long long q = 0; q < (sampled ? count : n); ++q) at.push_back(sampled ? static_cast<long long>(gen() % n) : q);
  return at;
}

// A check for Trial::run: every element of `out` (downloaded after the run) equals `want`.
template <class T, class W>
inline auto matches(const DeviceBuffer<T>& out, const std::vector<W>& want) {
  return [&out, &want](double* max_err) { return compare(out.download(), want, want.size(), 0.0, 0.0, max_err); };
}

// ---------------------------------------------------------------- verify, then time

// One shape of a variant (the launch order above): Trial::run launches it once, checks that run
// against the CPU reference and, at the full size (the last shape), times W warm-ups + N runs.
class Trial {
 public:
  Trial(const Context& ctx, Result& result, bool full) : ctx_(ctx), result_(result), full_(full) {}

  // The full size: the shape that is timed (checks there may sample, as the whole grid is slow on a CPU).
  bool full() const { return full_; }

  // `launch()` runs the variant once; `verify(&max_error)` checks the run and says whether it is right;
  // `label` names the shape in "checked_sizes". `stream` is the one the timing events go on.
  template <class Launch, class Verify>
  void run(const std::string& label, Launch&& launch, Verify&& verify, cudaStream_t stream = 0) {
    launch();
    CUDA_CHECK(cudaDeviceSynchronize());
    result_.verified = verify(&result_.max_error) && result_.verified;
    result_.checked_sizes.push_back(label);
    if (full_) result_.times_ms = time_runs(launch, ctx_.args.warmup, ctx_.args.iters, stream);
    ++runs_;
  }

  int runs() const { return runs_; }

 private:
  const Context& ctx_;
  Result& result_;
  bool full_;
  int runs_ = 0;
};

// A variant's whole measurement: for each shape (the odd check sizes first, the full size last),
// `body(shape, trial)` prepares that shape's inputs and reference and calls trial.run() once.
// Shapes are a braced list ({1000003LL, n}) or an array of tuples (const long long shapes[2][2]).
template <class Shape, size_t N, class Body>
Result verify_then_time(const Context& ctx, const Shape (&shapes)[N], Body&& body) {
  Result r;
  r.sizes = ctx.sizes;
  r.verified = true;
  for (size_t i = 0; i < N; ++i) {
    Trial trial(ctx, r, i + 1 == N);
    body(shapes[i], trial);
    // A body that forgets trial.run() would print a result nobody measured.
    if (trial.runs() != 1) fail("internal: a variant ran %d times at one shape instead of once", trial.runs());
  }
  return r;
}

// ---------------------------------------------------------------- JSON output

inline std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else {
      o += c;
    }
  }
  return o + "\"";
}

inline std::string json_num(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

inline int device_attr(cudaDeviceAttr attr, int dev) {
  int v = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&v, attr, dev));
  return v;
}

// The environment record. CUDA 13 removed clock fields from cudaDeviceProp: attributes are used.
inline std::string env_json(const Context& ctx) {
  const int dev = ctx.device;
  int driver = 0, runtime = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  const int sm_clock_khz = device_attr(cudaDevAttrClockRate, dev);
  const int mem_clock_khz = device_attr(cudaDevAttrMemoryClockRate, dev);
  const int bus_bits = device_attr(cudaDevAttrGlobalMemoryBusWidth, dev);
  const int l2 = device_attr(cudaDevAttrL2CacheSize, dev);
  const int ecc = device_attr(cudaDevAttrEccEnabled, dev);
  const int sms = device_attr(cudaDevAttrMultiProcessorCount, dev);
  const double peak_gbps = 2.0 * mem_clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  auto ver = [](int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); };
  std::string o = "{";
  o += "\"gpu\": " + json_str(ctx.prop.name);
  o += ", \"cc\": " + json_str(std::to_string(ctx.prop.major) + "." + std::to_string(ctx.prop.minor));
  o += ", \"sm_count\": " + std::to_string(sms);
  o += ", \"driver_version\": " + json_str(ver(driver));
  o += ", \"runtime_version\": " + json_str(ver(runtime));
  o += ", \"sm_clock_khz\": " + std::to_string(sm_clock_khz);
  o += ", \"mem_clock_khz\": " + std::to_string(mem_clock_khz);
  o += ", \"mem_bus_width_bits\": " + std::to_string(bus_bits);
  o += ", \"l2_bytes\": " + std::to_string(l2);
  o += ", \"peak_dram_gbps\": " + json_num(peak_gbps);
  o += ", \"ecc\": " + std::string(ecc ? "true" : "false");
  o += ", \"global_mem_bytes\": " + std::to_string(static_cast<long long>(ctx.prop.totalGlobalMem));
  o += ", \"smem_per_sm_bytes\": " + std::to_string(static_cast<long long>(ctx.prop.sharedMemPerMultiprocessor));
  o += ", \"regs_per_sm\": " + std::to_string(ctx.prop.regsPerMultiprocessor);
  o += ", \"max_threads_per_sm\": " + std::to_string(ctx.prop.maxThreadsPerMultiProcessor);
  o += "}";
  return o;
}

inline std::string sizes_json(const Sizes& s) {
  std::string o = "{";
  bool first = true;
  for (const auto& kv : s) {
    if (!first) o += ", ";
    first = false;
    o += json_str(kv.first) + ": " + std::to_string(kv.second);
  }
  return o + "}";
}

inline std::string result_json(const Result& r) {
  std::string o = "{";
  o += "\"variant\": " + json_str(r.variant);
  o += ", \"kernel\": " + (r.kernel.empty() ? std::string("null") : json_str(r.kernel));
  o += ", \"verified\": " + std::string(r.verified ? "true" : "false");
  o += ", \"max_error\": " + json_num(r.max_error);
  o += ", \"checked_sizes\": [";
  for (size_t i = 0; i < r.checked_sizes.size(); ++i) o += (i ? ", " : "") + json_str(r.checked_sizes[i]);
  o += "], \"sizes\": " + sizes_json(r.sizes);
  o += ", \"times_ms\": [";
  for (size_t i = 0; i < r.times_ms.size(); ++i) o += (i ? ", " : "") + json_num(r.times_ms[i]);
  o += "]";
  if (!r.extra.empty()) {
    o += ", \"extra\": {";
    bool first = true;
    for (const auto& kv : r.extra) {
      o += (first ? "" : ", ") + json_str(kv.first) + ": " + json_num(kv.second);
      first = false;
    }
    o += "}";
  }
  return o + "}";
}

// ---------------------------------------------------------------- command line

[[noreturn]] inline void usage(const char* prog, const char* why) {
  std::fprintf(stderr,
               "error: %s\nusage: %s [--variant NAME|all]... [--warmup W] [--iters N] [--size KEY=VALUE]... [--list]\n",
               why, prog);
  std::exit(2);
}

inline long long parse_int(const char* prog, const std::string& text, const char* what) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0) usage(prog, (std::string("not an integer for ") + what + ": " + text).c_str());
  return v;
}

inline Args parse_args(int argc, char** argv) {
  Args a;
  const char* prog = argv[0];
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* name) -> std::string {
      if (i + 1 >= argc) usage(prog, (std::string(name) + " needs a value").c_str());
      return argv[++i];
    };
    if (arg == "--variant") {
      std::string v = value("--variant");
      size_t start = 0;  // accept comma-separated lists too
      while (start <= v.size()) {
        size_t comma = v.find(',', start);
        std::string one = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!one.empty()) a.variants.push_back(one);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (arg == "--warmup") {
      a.warmup = static_cast<int>(parse_int(prog, value("--warmup"), "--warmup"));
      if (a.warmup < 0) usage(prog, "--warmup must be >= 0");
    } else if (arg == "--iters") {
      a.iters = static_cast<int>(parse_int(prog, value("--iters"), "--iters"));
      if (a.iters < 1) usage(prog, "--iters must be >= 1");
    } else if (arg == "--size") {
      std::string kv = value("--size");
      size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) usage(prog, ("--size wants KEY=VALUE, got " + kv).c_str());
      long long v = parse_int(prog, kv.substr(eq + 1), "--size");
      if (v < 1) usage(prog, ("--size values must be >= 1: " + kv).c_str());
      a.size_overrides[kv.substr(0, eq)] = v;
    } else if (arg == "--list") {
      a.list = true;
    } else if (arg == "-h" || arg == "--help") {
      std::printf("usage: %s [--variant NAME|all]... [--warmup W] [--iters N] [--size KEY=VALUE]... [--list]\n", prog);
      std::exit(0);
    } else {
      usage(prog, ("unknown argument " + arg).c_str());
    }
  }
  return a;
}

// The whole main() of a benchmark binary.
inline int run_main(int argc, char** argv, const std::string& benchmark, const Sizes& defaults,
                    const std::vector<Variant>& variants) {
  Context ctx;
  ctx.args = parse_args(argc, argv);
  if (ctx.args.list) {
    std::string o = "{\"benchmark\": " + json_str(benchmark) + ", \"sizes\": " + sizes_json(defaults) + ", \"variants\": [";
    for (size_t i = 0; i < variants.size(); ++i) {
      o += (i ? ", " : "") + std::string("{\"variant\": ") + json_str(variants[i].name) +
           ", \"kernel\": " + (variants[i].kernel.empty() ? std::string("null") : json_str(variants[i].kernel)) + "}";
    }
    std::printf("%s]}\n", o.c_str());
    return 0;
  }
  ctx.sizes = defaults;
  for (const auto& kv : ctx.args.size_overrides) {
    if (!defaults.count(kv.first)) {
      std::string known;
      for (const auto& d : defaults) known += (known.empty() ? "" : ", ") + d.first;
      usage(argv[0], ("unknown size " + kv.first + " (known: " + known + ")").c_str());
    }
    ctx.sizes[kv.first] = kv.second;
  }
  std::vector<const Variant*> selected;
  bool all = ctx.args.variants.empty();
  for (const auto& name : ctx.args.variants) all = all || name == "all";
  if (all) {
    for (const auto& v : variants) selected.push_back(&v);
  } else {
    for (const auto& name : ctx.args.variants) {
      auto it = std::find_if(variants.begin(), variants.end(), [&](const Variant& v) { return v.name == name; });
      if (it == variants.end()) {
        std::string known;
        for (const auto& v : variants) known += (known.empty() ? "" : ", ") + v.name;
        usage(argv[0], ("unknown variant " + name + " (known: " + known + ")").c_str());
      }
      selected.push_back(&*it);
    }
  }
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count < 1) fail("no CUDA device found");
  CUDA_CHECK(cudaSetDevice(ctx.device));
  CUDA_CHECK(cudaGetDeviceProperties(&ctx.prop, ctx.device));
  CUDA_CHECK(cudaFree(nullptr));  // create the context before any timing

  std::string out = "{\"benchmark\": " + json_str(benchmark) + ", \"env\": " + env_json(ctx) + ", \"warmup\": " +
                    std::to_string(ctx.args.warmup) + ", \"iters\": " + std::to_string(ctx.args.iters) + ", \"results\": [";
  bool all_ok = true;
  for (size_t i = 0; i < selected.size(); ++i) {
    Result r = selected[i]->run(ctx);
    r.variant = selected[i]->name;
    r.kernel = selected[i]->kernel;
    all_ok = all_ok && r.verified;
    if (!r.verified) {
      std::fprintf(stderr, "%s/%s: result does not match the CPU reference (max error %g)\n", benchmark.c_str(),
                   r.variant.c_str(), r.max_error);
    }
    out += (i ? ", " : "") + result_json(r);
  }
  out += "]}";
  std::printf("%s\n", out.c_str());
  return all_ok ? 0 : 1;
}

}  // namespace bench
