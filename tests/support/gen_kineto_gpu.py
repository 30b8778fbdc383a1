#!/usr/bin/env python3
"""gen_kineto_gpu.py - synthetic torch.profiler (Kineto) traces with GPU work,
for checking prof's join of kernels to the code that launched them
(rules.md §3.2) against tests/support/gpu_join.py on traces of any size.

Each step of each launching thread runs --ops-per-step operations: regions
(cpu_op, user_annotation) nested two to four deep, a module calling aten
ops, some a call inside a call of itself; inside them the thread's runtime
calls launch --kernels-per-op kernels, copies (cudaMemcpyAsync) and memsets
(cudaMemsetAsync), some through the driver (cuLaunchKernel) or, with
--graph, cudaGraphLaunch with several kernels of one correlation id; calls
that launch nothing (cudaGetDevice, cudaStreamIsCapturing) come between
them. A step ends with aten::item: a copy to the host and a
cudaStreamSynchronize until the thread's stream drains. Thread 0 is the
main thread (ProfilerStep#N), thread 1 the backward thread, each thread
launches on its own stream of device 0. A kernel starts after its launch
call returns (1-3 µs after it, or when its stream is free) and never
overlaps another of its stream.

Default: the GPU is busy, kernels long (50-500 µs) and queued deep, so the
launch delay is large. --launch-bound: kernels of 2-5 µs, each launched by a
call of about 8 µs with 10-20 µs of CPU between launches, so the GPU idles
in short gaps and each kernel starts 1-3 µs after its call returns.
--outside K: K launches on thread 0 before its first region (outside every
region). --unjoined K: K kernels on a stream of their own whose correlation
names no call (every fifth has none). About 1% of launch calls take over
50 µs.

Events are written as Kineto writes them: CPU ops by start, then runtime
calls by end, then GPU records by start; --flush MS writes the calls and
records in buffers of MS ms of trace time, each buffer's calls before its
records (as CUPTI flushes them); --shuffle SEED in a random order. Times
are microseconds with three decimals relative to baseTimeNanoseconds, exact
in ns. The same options and --seed give the same file.

Usage: gen_kineto_gpu.py [options] -o FILE[.gz]"""
import argparse
import gzip
import random

PID = 31337
T0 = 86_400_000_000_000  # trace ns of the start: a day of uptime
US = 1000

# operations: (name, [child...]); a child is a region or a launch slot:
# k kernel, d driver kernel, c copy, s memset, g graph (kernel without --graph)
FORWARD = [
    ("nn.Module: Linear", [("aten::linear", [("aten::t", []), ("aten::addmm", ["k", "k"])])]),
    ("nn.Module: Sequential", [("nn.Module: Sequential", [("aten::relu", ["k"])]), "k",
                               ("aten::add", ["k"])]),
    ("aten::to", [("aten::_to_copy", [("aten::copy_", ["c"])])]),
    ("aten::zeros", [("aten::zero_", [("aten::fill_", ["s"])])]),
    ("Torch-Compiled Region", [("CompiledFunction", ["d", "d"]), "k"]),
    ("CUDAGraph.replay", ["g"]),
    ("aten::_foreach_add_", ["k"]),
]
BACKWARD = [
    ("autograd::engine::evaluate_function: AddmmBackward0",
     [("AddmmBackward0", [("aten::mm", ["k"]), ("aten::mm", ["k"])]), ("aten::sum", ["k"])]),
    ("autograd::engine::evaluate_function: ReluBackward0",
     [("ReluBackward0", [("aten::threshold_backward", ["k"])])]),
]
SYNC = ("aten::item", [("aten::_local_scalar_dense", ["h", "sync"])])
KERNEL = {  # kernel name by the innermost region's name
    "aten::addmm": "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1",
    "aten::mm": "ampere_sgemm_128x64_nt",
    "aten::relu": "void at::native::vectorized_elementwise_kernel<4, at::native::relu_kernel>",
    "CompiledFunction": "triton_poi_fused_add_mul_0",
    "CUDAGraph.replay": "void graph_node_kernel<128>",
}
OTHER_KERNEL = "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl>"
FILL = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>"


def us(t):
    return f"{t // US}.{t % US:03d}"


class Trace:
    def __init__(self, a):
        self.a, self.rng = a, random.Random(a.seed)
        self.cpu, self.rt, self.gpu = [], [], []  # (time key, text)
        self.corr = 0
        self.clock = [T0 + i * 3 * US for i in range(a.threads)]
        self.free = {}  # stream -> time it is free
        self.ext = 0

    def r(self, lo, hi):  # a random time in [lo, hi] µs, in ns
        return self.rng.randint(lo * US, hi * US)

    # ---- events ------------------------------------------------------------------
    def region(self, th, name, s, e):
        cat = "cpu_op" if name.startswith("aten::") else "user_annotation"
        self.ext += 1
        self.cpu.append((s, f'{{"ph":"X","cat":"{cat}","name":"{name}","pid":{PID},'
                            f'"tid":{tid(th)},"ts":{us(s)},"dur":{us(e - s)},'
                            f'"args":{{"External id":{self.ext}}}}}'))

    def call(self, th, name, dur, cat="cuda_runtime"):
        """a runtime call at the thread's clock: its correlation id"""
        self.corr += 1
        s = self.clock[th]
        self.clock[th] += dur
        self.rt.append((s + dur, f'{{"ph":"X","cat":"{cat}","name":"{name}","pid":{PID},'
                                 f'"tid":{tid(th)},"ts":{us(s)},"dur":{us(dur)},'
                                 f'"args":{{"cbid":211,"correlation":{self.corr}}}}}'))
        return self.corr

    def record(self, cat, name, stream, after, dur, corr, extra=""):
        """a GPU record on its stream, not before `after`: its end"""
        s = max(self.free.get(stream, 0), after)
        self.free[stream] = s + dur
        c = "" if corr is None else f',"correlation":{corr}'
        self.gpu.append((s, f'{{"ph":"X","cat":"{cat}","name":"{name}","pid":0,"tid":{stream},'
                            f'"ts":{us(s)},"dur":{us(dur)},"args":{{"device":0,"context":1,'
                            f'"stream":{stream}{c}{extra}}}}}'))
        return s + dur

    # ---- what a thread does --------------------------------------------------------
    def launch(self, th, slot, region):
        a, r = self.a, self.r
        if self.rng.random() < .25:
            self.call(th, self.rng.choice(("cudaGetDevice", "cudaStreamIsCapturing")), r(1, 2))
            self.clock[th] += r(0, 2)
        slow = self.rng.random() < .01
        cpu = r(51, 80) if slow else r(7, 9) if a.launch_bound else r(3, 6)
        lo, hi = (2, 5) if a.launch_bound else (50, 500)  # a kernel's time, µs
        name, cat, kname, n = "cudaLaunchKernel", "kernel", KERNEL.get(region, OTHER_KERNEL), 1
        if slot == "k" and self.rng.random() < .1:
            name = "cudaLaunchKernelExC"
        elif slot == "d":
            name = "cuLaunchKernel"
        elif slot == "g" and a.graph:
            name, n = "cudaGraphLaunch", self.rng.randint(3, 6)
        elif slot in "ch":
            name, cat = "cudaMemcpyAsync", "gpu_memcpy"
            kname = "Memcpy HtoD (Pageable -> Device)" if slot == "c" else "Memcpy DtoH (Device -> Pageable)"
            lo, hi = (2, 4) if a.launch_bound else (20, 200)
        elif slot == "s":
            name, cat, kname, lo, hi = "cudaMemsetAsync", "gpu_memset", "Memset (Device)", 1, 3
        corr = self.call(th, name, cpu, "cuda_driver" if slot == "d" else "cuda_runtime")
        after = self.clock[th] + r(1, 3)
        extra = ',"bytes":1048576' if cat != "kernel" else ',"registers per thread":32,"grid":[64,1,1]'
        for _ in range(n):
            after = self.record(cat, kname, stream_of(th), after, r(lo, hi), corr, extra) + r(0, 1)

    def op(self, th, node, launches):
        """region `node` at the thread's clock, its slots' launches from `launches`"""
        name, children = node
        self.clock[th] += self.r(1, 3)
        s = self.clock[th]
        first = self.rng.random() < .1  # now and then a call at the region's very start
        for ch in children:
            if isinstance(ch, tuple):
                self.clock[th] += self.r(1, 3)
                self.op(th, ch, launches)
                continue
            for _ in range(1 if ch in ("h", "sync") else launches.pop(0)):
                if not first:  # the CPU work of the operation between its calls
                    self.clock[th] += self.r(10, 20) if self.a.launch_bound else self.r(1, 4)
                first = False
                if ch == "sync":
                    wait = max(self.free.get(stream_of(th), 0) - self.clock[th], 0)
                    self.call(th, "cudaStreamSynchronize", wait + self.r(1, 2))
                else:
                    self.launch(th, ch, name)
            first = False
        self.clock[th] += self.r(1, 3)
        self.region(th, name, s, self.clock[th])

    def step(self, n):
        a = self.a
        start = max(self.clock)
        for th in range(a.threads):
            self.clock[th] = start + th * self.r(1, 5)
            ops = BACKWARD if th == 1 else FORWARD
            for k in range(a.ops_per_step):
                node = ops[(k + n + th) % len(ops)]
                nslots = count_slots(node)
                q, m = divmod(a.kernels_per_op, nslots)
                self.op(th, node, [q + (i < m) for i in range(nslots)])
            self.op(th, SYNC, [])
        end = max(self.clock) + US
        self.cpu.append((start, f'{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{n}",'
                                f'"pid":{PID},"tid":{PID},"ts":{us(start)},"dur":{us(end - start)},'
                                f'"args":{{"External id":0}}}}'))
        self.clock = [end + US] * a.threads

    def build(self):
        a = self.a
        for _ in range(a.outside):  # before thread 0's first region
            self.clock[0] += self.r(2, 4)
            corr = self.call(0, "cudaLaunchKernel", self.r(3, 5))
            self.record("kernel", FILL, stream_of(0), self.clock[0] + self.r(1, 3), self.r(2, 5), corr)
        self.clock = [max(self.clock)] * a.threads
        for n in range(1, a.steps + 1):
            self.step(n)
        at = T0
        for i in range(a.unjoined):  # on a stream of their own, naming no call
            at = self.record("kernel", OTHER_KERNEL, 99, at + self.r(3, 10), self.r(5, 20),
                             None if i % 5 == 4 else self.corr + 1000 + i)

    def write(self, path):
        a = self.a
        if a.shuffle is not None:
            events = [e[1] for e in self.cpu + self.rt + self.gpu]
            random.Random(a.shuffle).shuffle(events)
        else:
            w = int(a.flush * 1_000_000) if a.flush else 1 << 62
            keyed = [(-1, 0, *e) for e in self.cpu] + [(e[0] // w, 1, *e) for e in self.rt] + \
                    [(e[0] // w, 2, *e) for e in self.gpu]
            keyed.sort(key=lambda e: e[:3])
            events = [e[3] for e in keyed]
        meta = [f'{{"name":"process_name","ph":"M","ts":{us(T0)},"pid":{PID},"tid":0,'
                f'"args":{{"name":"python3"}}}}',
                f'{{"name":"process_name","ph":"M","ts":{us(T0)},"pid":0,"tid":0,'
                f'"args":{{"name":"python3"}}}}']
        names = ["pt_main_thread", "pt_autograd_0"] + [f"worker_{i}" for i in range(2, a.threads)]
        for th in range(a.threads):
            meta.append(f'{{"name":"thread_name","ph":"M","ts":{us(T0)},"pid":{PID},"tid":{tid(th)},'
                        f'"args":{{"name":"thread {tid(th)} ({names[th]})"}}}}')
        for s in sorted(self.free):
            meta.append(f'{{"name":"thread_name","ph":"M","ts":{us(T0)},"pid":0,"tid":{s},'
                        f'"args":{{"name":"stream {s} "}}}}')
        op = gzip.open if path.endswith(".gz") else open
        with op(path, "wt", **({"compresslevel": 1} if path.endswith(".gz") else {})) as f:
            f.write('{\n  "schemaVersion": 1,\n  "deviceProperties": [{"id": 0, "name": '
                    '"NVIDIA H100 80GB HBM3", "totalGlobalMem": 84929347584, "computeMajor": 9, '
                    '"computeMinor": 0, "numSms": 132}],\n  "cuda_runtime_version": 12010,\n'
                    '  "traceEvents": [\n')
            f.write(",\n".join(events + meta))
            f.write('\n],\n  "traceName": "gen_kineto_gpu.json",\n  "displayTimeUnit": "ms",\n'
                    '  "baseTimeNanoseconds": 1711964646000000000\n}\n')


def tid(th):
    return PID if th == 0 else PID + 10 + th


def stream_of(th):
    return 7 + 4 * th


def count_slots(node):
    return sum(count_slots(c) if isinstance(c, tuple) else 1 for c in node[1])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arg = p.add_argument
    arg("--steps", type=int, default=3, help="ProfilerStep#N of thread 0 (default 3)")
    arg("--ops-per-step", type=int, default=8, help="operations a thread runs a step (default 8)")
    arg("--kernels-per-op", type=int, default=3, help="launches an operation makes (default 3)")
    arg("--threads", type=int, default=1, help="launching threads; the second is backward")
    arg("--shuffle", type=int, metavar="SEED", help="the events in a random order")
    arg("--launch-bound", action="store_true", help="short kernels waiting for their launch")
    arg("--graph", action="store_true", help="cudaGraphLaunch: several kernels of one id")
    arg("--unjoined", type=int, default=0, metavar="K", help="K kernels naming no call")
    arg("--outside", type=int, default=0, metavar="K", help="K launches before any region")
    arg("--flush", type=float, default=0, metavar="MS", help="calls and records in buffers of MS ms")
    arg("--seed", type=int, default=1)
    arg("-o", required=True, metavar="FILE", help="the trace; gzip when FILE ends in .gz")
    a = p.parse_args()
    if a.threads < 1 or a.steps < 0:
        p.error("--threads must be at least 1, --steps at least 0")
    t = Trace(a)
    t.build()
    t.write(a.o)


if __name__ == "__main__":
    main()
