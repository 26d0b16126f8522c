"""Short "what am I looking at" texts, one per panel (Help menu and each dock's title tooltip)."""

from __future__ import annotations

ABOUT = """<h3>WarpScope</h3>
<p>See what a GPU does with a kernel launch: how the grid is cut into blocks, how blocks land on
the streaming multiprocessors (SMs), how many fit at once and which resource stops more from
fitting, how the grid drains in waves and ends in a tail &mdash; and, on a machine with a GPU, what
bandwidth the real kernels reach.</p>
<p>The simulated views follow the CUDA driver's occupancy rules exactly (checked against the driver
on an H200). <i>When</i> blocks reach the SMs comes from a dispatch model fitted to block traces
recorded on an H200 (docs/DISPATCH.md): occupancy says how many blocks may sit on an SM, not that
they all start at once.</p>"""

PANELS: dict[str, tuple[str, str]] = {
    "controls": (
        "Launch controls",
        """
<p>Describe a launch. <b>Elements</b> is how much data; <b>threads per block</b> is the block size
you would write in <code>&lt;&lt;&lt;grid, block&gt;&gt;&gt;</code>. For a custom launch the grid
is the element count divided by the block size, rounded up; a registry kernel brings its own grid
rule (four elements per thread, a Triton program's BLOCK_SIZE, a fixed grid-stride grid), the very
rule its launcher uses. Number boxes take what the command line takes (1e6, 2^20, 4M, 48K) and act
when you press Enter or leave the box.</p>
<p><b>Registers</b> and <b>shared memory</b> are what one thread and one block need; the compiler
decides them for real kernels. Both come out of a fixed budget per SM, so asking for more can
leave room for fewer blocks. The <b>carveout</b> splits the SM's on-chip storage between L1 cache
and shared memory; if one block needs more than the share you pick, the driver takes a bigger
one, and the note under the box says so.</p>
<p>Type a block size like 250 into the box (or untick <i>slider snaps to warps</i>) and watch idle
lanes appear.</p>
<p><b>Scheduler model.</b> <i>Block cost</i>: every block as long as the others (uniform), its bytes
over its SM's share of the DRAM bandwidth (memory-bound), or its FLOPs and bytes (compute-bound,
for a matmul). <i>Warps</i>: whether a uniform block's warps busy-issue instructions or wait (sleep,
memory) &mdash; on the H200 that decides how fast new blocks arrive. <i>Placement</i>: which free SM
takes the next block. <i>Schedule</i>: <b>calibrated</b> (the default) starts blocks as the H200
was recorded to; <b>ideal</b> is the textbook, where a block starts the moment a slot frees. The
note under the box says which GPU the dispatch numbers were measured on.</p>""",
    ),
    "sm": (
        "SM view",
        """
<p>Each tile is one SM. Its small squares are <b>warp slots</b>: places for one warp (32 threads)
to live while it runs. A block takes as many slots as it has warps, all on the same SM, and keeps
them until it finishes. Squares of one colour belong to one block.</p>
<p><b>Dark grey</b> squares are free right now. <b>Near-black</b> squares are slots this launch can
never fill: another limit (registers, shared memory, the block count) runs out first. Dimmer last
rows mark a warp with idle lanes; a lighter flash marks a block that has just arrived.</p>
<p>An SM is not always as full as its occupancy allows. With the calibrated schedule (the
default), busy warps hold new blocks back, as recorded on the H200: at the start each SM takes
blocks at once until about 28 of its warps are busy; then usually one more block trickles in
within a few microseconds; the rest arrive when the dispatcher next visits the SM's group of 16
SMs, about every 17 µs, or when a block ends and frees room. So short, busy blocks keep an SM
near 28&ndash;32 warps, however many the occupancy allows, while warps that sleep or wait on
memory fill every slot at once, as in the textbook. Pick <i>ideal</i> under Schedule to see the
textbook schedule instead.</p>
<p>The bar at the bottom is the grid: blocks already retired, running now, and still waiting.
When the queue is empty and the SMs start to empty out, you are in the <b>tail</b>: the GPU is
only partly busy while the last blocks finish.</p>
<p>Space plays and pauses; <b>.</b> and <b>,</b> step to the next or previous moment a block
arrives or retires.</p>""",
    ),
    "occupancy": (
        "Occupancy",
        """
<p>How many blocks one SM holds at the same time. Each bar is what one resource alone would allow:
<b>warps</b> (the SM's warp slots), <b>blocks</b> (a fixed cap per SM), <b>registers</b> (the
register file, handed out per warp in chunks) and <b>shared memory</b> (allocated per block in
units, plus a small reserve). The smallest bar wins and is highlighted: that is the
<b>limiter</b>.</p>
<p>Occupancy is the resident warps over the SM's warp slots. Higher is not always faster, but a
memory-bound kernel needs enough warps in flight to hide memory latency.</p>
<p>The three curves are the CUDA Occupancy Calculator's charts: resident warps as you vary one
input with the others fixed. The dot is your launch; the steps show where one more register or
one more KiB costs a whole block.</p>""",
    ),
    "geometry": (
        "Geometry",
        """
<p>The arithmetic of the launch. The grid has <i>ceil(elements / block)</i> blocks, so the last
block usually runs past the end of the data: those threads do nothing, guarded by
<code>if (i &lt; n)</code>.</p>
<p>The hardware runs threads in warps of 32. A block whose size is not a multiple of 32 still pays
for whole warps: the picture shows each warp as a row of 32 lanes, dark where no thread sits.</p>
<p><b>Waves at best</b> compares the grid's warps with every warp slot on the GPU; <b>waves at this
occupancy</b> uses how many blocks really fit per SM. A fractional last wave is the tail.</p>""",
    ),
    "timeline": (
        "Timeline",
        """
<p>Time runs left to right; each horizontal band is one SM, split into its block slots. Every bar
is one block, from the moment it was placed to the moment it retired.</p>
<p>Colours are waves; dashed lines mark where each wave starts. The red shading is the tail: once
the last block has started, the moment the GPU holds fewer blocks than it held while blocks were
still waiting, until the launch ends (a grid smaller than one wave is all tail). The same number
is in the caption, the strip under the SMs, <code>simulate</code> and the export. Drag the white
line to move the animation.</p>
<p>When the chart has fewer pixel rows than block slots, each row shows the slots it stands for
merged: a slot that holds a block is never hidden.</p>
<p>For very large grids only the last part is simulated; the caption says how many identical
full waves came before it.</p>
<p>The curve under the SM view is the whole GPU's resident warps over time: the schedule you
picked filled, the other one (calibrated or ideal) dashed. Where they part, the dispatch model,
not the occupancy, sets how many blocks run.</p>
<p><b>File ▸ Open trace…</b> (or <i>Compare a recorded trace</i>) opens a block trace recorded on
a real GPU (<code>python main.py trace</code>, a matmul trace, or Triton Proton's per-program
timeline: each block's SM and start/end times, read on the GPU) and draws it above its prediction
from the launch alone, scored as <code>python main.py compare</code> scores it: equal blocks,
a real add's memory-bound blocks or a matmul's tiles, with the calibrated and the ideal schedule. On the H200, busy blocks shorter
than the dispatcher's visits (~17 µs) do not reach the residency the occupancy rules allow; the
calibrated model predicts this (within 10% of the recorded makespan on 23 of 24 launches recorded
after it was fitted), the ideal one does not.</p>""",
    ),
    "slider_launch": (
        "Live launch",
        """
<p>With a live kernel picked under Kernel, moving the block size or the elements launches that
kernel at the new launch, once the slider has settled (0.3 s). On a GPU it is timed as the
Sweep tab times it: CUDA events, the L2 flushed before each rep, the median of the reps; the
measured point (with its p20-p80 range) goes beside the launch model's predicted time, and the
Verdicts say both. Without a GPU the same path runs Triton's interpreter or Numba's simulator
at a small size: that time is the CPU's, not a GPU timing, and is only listed.</p>
""",
    ),
    "verdicts": (
        "Verdicts",
        """
<p>What is wrong with this launch, the biggest waste first. Each verdict gives its number (a bar
for the share of the GPU it wastes), why, and what to try: a grid below one wave, a tail, idle
lanes, occupancy held down by registers or shared memory (with the value that lifts it), too few
bytes in flight to hide DRAM latency, blocks too small for the SM's block dispatcher.</p>
<p>Occupancy here is <b>theoretical</b>: what the limits let one SM hold. A grid of 40 blocks on a
148-SM GPU shows 100% per SM, but the GPU's warp slots are 3% used.</p>
<p>The first line is the whole launch's predicted time (the latency model); the second is the
animation's schedule, counting the identical waves a very large grid leaves out of the drawing.
The export carries the same list.</p>""",
    ),
    "latency": (
        "Latency",
        """
<p>Why a GPU needs many warps. Left: one SM's warp slots over a few microseconds, grouped by the
four schedulers that issue their instructions. Green is issuing, blue is waiting for memory,
amber is ready but its scheduler is busy with another warp, grey is a block starting or retiring,
or a slot waiting for the next block. In a memory-bound kernel the schedulers are almost always
idle and the warps almost always wait: only more bytes in flight (more warps, or more loads per
warp) keep the memory busy.</p>
<p>Right: Little's law. Bandwidth = bytes in flight / round trip. The dashed grey line is the law
with the unloaded DRAM latency (a pointer chase); the blue line is the loaded model: each SM a
closed queue of its resident blocks (the block dispatcher, the DRAM latency, the SM's share of
the bandwidth), solved exactly. Where it was measured on this GPU (the H200's forced-occupancy
sweep is built in), the measured points are drawn with the model for the same kernel: within 7%
on held-out data, where plain Little's law is up to 2.5x too high.</p>""",
    ),
    "diff": (
        "Run diff",
        """
<p>Two runs side by side: two launches (the one the sliders set, or typed as
<code>gpu=H200,elements=2^24,block=256,regs=40</code>; their time predicted), two block traces, or
two measurements of bench results files (<code>FILE#N</code>). Below the table, what changed as
one story: the inputs, then the blocks per SM, the waves, the last wave and the time.
<code>main.py diff A B</code> prints the same.</p>""",
    ),
    "compare": (
        "Two GPUs",
        """
<p>The same launch (the same kernel's grid rule, registers and shared memory) on a second GPU:
each SM of both GPUs in the first wave, the occupancy and its limiter, the waves and the
predicted time, and below them what differs, in words. Pick the second GPU above; the detected
GPU is offered beside the presets.</p>""",
    ),
    "source": (
        "Kernel source",
        """
<p>The selected kernel's code, read-only: a file you opened with <b>File ▸ Open kernel…</b> as it
was when you opened it, or one of WarpScope's built-in kernels. The marked line is the kernel's
<code>def</code>; the numbers on the left are the lines compiler messages cite.</p>
<p>A kernel file is a Python file with a <code>@triton.jit</code> or <code>@cuda.jit</code> kernel
and a <code>WARPSCOPE = dict(...)</code> declaration (docs/KERNEL_FILES.md; examples in
<code>resources/examples</code>). Opening it <b>runs it</b>, as Python runs any module, so
WarpScope does that only when you ask. Its registers and shared memory then come from the
compiler for the GPU you selected and the block size you set, without that GPU; with a GPU the
Bandwidth panel measures it beside its torch peer, checked against its reference.</p>
<p>Edit the file in your editor, then <b>Open again</b> to see the new version.</p>""",
    ),
    "waves": (
        "Waves",
        """
<p>Where waves cost the most: a matrix product gives each block one tile of the output, so a
matrix one tile too big for a full wave (133 tiles on 132 SMs) runs a second, nearly empty wave
for 1/132 more work. Here the matrix grows one tile column at a time and TFLOP/s follows a
sawtooth: it drops just past every multiple of <i>SMs &times; tiles per SM</i> (dotted lines).</p>
<p>Solid lines are measured (a file from <code>python main.py bench --waves-sweep</code> or
<code>benchmarks/matmul_run.py</code>, or <i>Measure</i> on a GPU), with the p20&ndash;p80 band;
dashed lines are the block scheduler's prediction with the compute-bound cost model: each tile's
FLOPs at its SM's share of the tensor rate plus its DRAM traffic at its share of the bandwidth.
The persistent kernel loops its programs over the tiles (no fix); stream-K splits the last
wave's K-iterations over all SMs (the fix). Without a GPU the prediction works for every GPU.</p>
<p><b>Click a point</b> to load that launch: the SM view animates it and the Timeline tab shows
its schedule &mdash; at 133 tiles, the tiled kernel's second wave is one block alone.</p>""",
    ),
    "bandwidth": (
        "Bandwidth",
        """
<p>Real kernels, really timed (on a GPU): each point is the median of many runs, timed with device
events, with the L2 cache flushed before each run so the number is memory, not cache. The band is
the 20th to 80th percentile; dashed and dotted lines are the measured copy ceiling and the
memory's theoretical peak. Hover a point for its grid, waves, occupancy and limiter.</p>
<p>A thin dashed line in a kernel's colour is what the block scheduler predicts for the same grid:
each block waits its turn to be started on its SM, waits one DRAM round trip for its loads, and
moves its bytes at its SM's share of the copy ceiling (a grid-stride block makes several trips). Where the dashed line bends with the measured one, that is why: tiny
blocks keep the SMs busy starting blocks, one element per thread leaves too few bytes in flight.</p>
<p>Small sizes are dominated by launch cost, so bandwidth climbs with size and flattens once the
kernel moves enough bytes. <i>Experiments</i> shows why fusing add and ReLU saves two memory trips,
why a launch returning is not the work finishing, and where the time of a simple program goes.</p>
<p>Without a GPU, nothing here is a GPU timing: you can still check correctness on the CPU and
open results files recorded with <code>python main.py bench</code> elsewhere.</p>""",
    ),
}
